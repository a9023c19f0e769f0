(import_declaration) @import.java
