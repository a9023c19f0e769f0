(import_directive source: (string) @import.path)
