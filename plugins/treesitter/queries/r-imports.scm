(call function: (identifier) @_fn (#match? @_fn "^(library|require|requireNamespace)$")
  arguments: (arguments . (argument value: [(identifier) (string)] @import.path)))
(call function: (identifier) @_fn (#match? @_fn "^(source|sys.source)$")
  arguments: (arguments . (argument value: (string) @import.path)))
