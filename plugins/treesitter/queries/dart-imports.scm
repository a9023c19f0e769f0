(import_specification (configurable_uri (uri (string_literal) @import.path)))
(library_export (configurable_uri (uri (string_literal) @import.path)))
