((call
   method: (identifier) @_method
   arguments: (argument_list . (string))) @import.ruby_require
  (#any-of? @_method "require" "require_relative" "load"))
