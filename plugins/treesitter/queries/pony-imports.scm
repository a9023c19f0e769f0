(use_statement (string) @import.path)
