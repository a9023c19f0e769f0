(import_declaration (identifier) @import.path)
