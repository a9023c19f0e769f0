; Scala definitions and references (capture conventions: see ecma-tags.scm).

(class_definition name: (identifier) @name) @definition.class
(trait_definition name: (identifier) @name) @definition.interface
(object_definition name: (identifier) @name) @definition.object
(enum_definition name: (identifier) @name) @definition.enum
(function_definition name: (identifier) @name) @definition.function
(function_declaration name: (identifier) @name) @definition.function
(type_definition name: (type_identifier) @name) @definition.type
(val_definition pattern: (identifier) @name) @definition.constant
(var_definition pattern: (identifier) @name) @definition.variable
(class_parameter name: (identifier) @name) @definition.field
(package_clause name: (package_identifier) @name) @definition.module

(lambda_expression) @scope.function

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (identifier) @reference.call))
(field_expression field: (identifier) @reference.attribute)
(type_identifier) @reference.type
(arguments (identifier) @reference.name)
(infix_expression left: (identifier) @reference.name)
(infix_expression right: (identifier) @reference.name)
