; Pony definitions and references (capture conventions: see ecma-tags.scm).

(primitive_definition (identifier) @name) @definition.class
(class_definition (identifier) @name) @definition.class
(actor_definition (identifier) @name) @definition.class
(struct_definition (identifier) @name) @definition.struct
(interface_definition (identifier) @name) @definition.interface
(trait_definition (identifier) @name) @definition.interface
(type_alias (identifier) @name) @definition.type
(method (identifier) @name) @definition.method
(behavior (identifier) @name) @definition.method
(constructor (identifier) @name) @definition.method
(field name: (identifier) @name) @definition.field

(lambda_expression) @scope.function

(call_expression callee: (identifier) @reference.call)
(call_expression callee: (member_expression (identifier) @reference.call .))
(member_expression (identifier) @reference.attribute .)
(base_type name: (identifier) @reference.type)
