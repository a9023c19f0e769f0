(import) @import.kotlin
