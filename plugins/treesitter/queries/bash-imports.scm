(command
  name: (command_name (word) @_cmd (#match? @_cmd "^(source|\\.)$"))
  argument: [(word) (string) (raw_string)] @import.path)
