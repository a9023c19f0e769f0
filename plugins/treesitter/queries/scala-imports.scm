(import_declaration) @import.scala
