; Gleam definitions and references (capture conventions: see ecma-tags.scm).

(constant name: (identifier) @name) @definition.constant
(type_definition (type_name name: (type_identifier) @name)) @definition.type
(type_alias (type_name name: (type_identifier) @name)) @definition.type
(data_constructor name: (constructor_name) @name) @definition.class
(function name: (identifier) @name) @definition.function
(external_function name: (identifier) @name) @definition.function

(anonymous_function) @scope.function

(function_call function: (identifier) @reference.call)
(function_call function: (field_access field: (label) @reference.call))
(field_access field: (label) @reference.attribute)
(type_identifier) @reference.type
(constructor_name) @reference.call
(argument value: (identifier) @reference.name)
