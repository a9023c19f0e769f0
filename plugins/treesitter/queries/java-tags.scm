; Java definitions and references (capture conventions: see ecma-tags.scm).

(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(enum_constant name: (identifier) @name) @definition.constant
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @definition.constant

(lambda_expression) @scope.function

(method_invocation name: (identifier) @reference.call)
(method_invocation object: (identifier) @reference.name)
(object_creation_expression type: (type_identifier) @reference.call)
(object_creation_expression type: (generic_type (type_identifier) @reference.call))
(object_creation_expression type: (scoped_type_identifier (type_identifier) @reference.call .))
(type_identifier) @reference.type
(field_access field: (identifier) @reference.attribute)
(argument_list (identifier) @reference.name)
(return_statement (identifier) @reference.name)
(method_reference . (identifier) @reference.name)
(marker_annotation name: (identifier) @reference.type)
(annotation name: (identifier) @reference.type)
