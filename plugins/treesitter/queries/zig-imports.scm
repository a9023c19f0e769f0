(builtin_function
  (builtin_identifier) @_builtin (#eq? @_builtin "@import")
  (arguments (string (string_content) @import.path)))
