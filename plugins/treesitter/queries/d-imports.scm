(import_declaration (imported (module_fqn) @import.path))
