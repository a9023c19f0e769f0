; R definitions and references (capture conventions: see ecma-tags.scm): top-level assignments
; (a function value makes a function), and classes declared with setClass/setRefClass/R6Class.

(program (binary_operator lhs: (identifier) @name rhs: (function_definition)) @definition.function)
(program (binary_operator lhs: (identifier) @name) @definition.variable)
(call function: (identifier) @_fn (#match? @_fn "^(setClass|setRefClass)$")
  arguments: (arguments . (argument value: (string (string_content) @name)))) @definition.class
(program (binary_operator lhs: (identifier) @name
  rhs: (call function: (identifier) @_fn (#match? @_fn "^(R6Class|setRefClass)$"))) @definition.class)
(call function: (identifier) @_fn (#eq? @_fn "setGeneric")
  arguments: (arguments . (argument value: (string (string_content) @name)))) @definition.function

(function_definition) @scope.function

(call function: (identifier) @reference.call)
(call function: (namespace_operator rhs: (identifier) @reference.call))
(argument value: (identifier) @reference.name)
