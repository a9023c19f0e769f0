(call target: (identifier) @_kw (#match? @_kw "^(alias|import|require|use)$")
  (arguments . (alias) @import.path))
