; Haskell definitions and references (capture conventions: see ecma-tags.scm). Each equation of a
; function is a definition of its own (as the source writes them); type signatures are not.

(declarations (function name: (variable) @name) @definition.function)
(declarations (bind name: (variable) @name) @definition.variable)
(data_type name: (name) @name) @definition.class
(data_constructor constructor: (prefix name: (constructor) @name)) @definition.constant
(data_constructor constructor: (record name: (constructor) @name)) @definition.constant
(newtype name: (name) @name) @definition.type
(type_synonym name: (name) @name) @definition.type
(type_family name: (name) @name) @definition.type
(class name: (name) @name) @definition.interface
(class_declarations (signature name: (variable) @name) @definition.method)
(instance name: (name) @name) @scope.impl
(instance_declarations (function name: (variable) @name) @definition.method)
(instance_declarations (bind name: (variable) @name) @definition.method)

(lambda) @scope.function

(apply function: (variable) @reference.call)
(apply function: (qualified id: (variable) @reference.call))
(apply argument: (variable) @reference.name)
(infix left_operand: (variable) @reference.name)
(match expression: (variable) @reference.name)
(name) @reference.type
(constructor) @reference.call
