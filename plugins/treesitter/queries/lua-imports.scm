(function_call
  name: (identifier) @_fn (#eq? @_fn "require")
  arguments: (arguments (string content: (string_content) @import.path)))
