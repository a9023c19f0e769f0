; Zig definitions and references (capture conventions: see ecma-tags.scm). A container is a
; `const Name = struct { ... }` declaration.

(variable_declaration (identifier) @name (struct_declaration)) @definition.struct
(variable_declaration (identifier) @name (enum_declaration)) @definition.enum
(variable_declaration (identifier) @name (union_declaration)) @definition.class
(variable_declaration (identifier) @name (opaque_declaration)) @definition.class
(variable_declaration "const" (identifier) @name) @definition.constant
(variable_declaration (identifier) @name) @definition.variable
(function_declaration name: (identifier) @name) @definition.function
(container_field name: (identifier) @name) @definition.field

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression member: (identifier) @reference.call))
(field_expression member: (identifier) @reference.attribute)
(parameter type: (identifier) @reference.type)
(slice_type (identifier) @reference.type)
(pointer_type (identifier) @reference.type)
(struct_initializer (identifier) @reference.type)
