; MATLAB definitions and references (capture conventions: see ecma-tags.scm).

(class_definition name: (identifier) @name) @definition.class
(function_definition name: (identifier) @name) @definition.function
(function_signature name: (identifier) @name) @definition.method
(property name: (identifier) @name) @definition.field
(enum (identifier) @name) @definition.constant
(events (identifier) @name) @definition.field

(lambda) @scope.function

(function_call name: (identifier) @reference.call)
(field_expression field: (identifier) @reference.attribute)
(superclasses (property_name (identifier) @reference.type))
(arguments argument: (identifier) @reference.name)
