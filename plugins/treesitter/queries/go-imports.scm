(import_spec) @import.go
