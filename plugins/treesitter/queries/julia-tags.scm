; Julia definitions and references (capture conventions: see ecma-tags.scm). `f(x) = ...` at the
; top of a module or file is a short-form function definition.

(module_definition name: (identifier) @name) @definition.module
(function_definition (signature (call_expression . (identifier) @name))) @definition.function
(function_definition (signature (typed_expression (call_expression . (identifier) @name)))) @definition.function
(function_definition (signature (where_expression (call_expression . (identifier) @name)))) @definition.function
(function_definition (signature (call_expression . (field_expression (identifier) @name .)))) @definition.function
(macro_definition (signature (call_expression . (identifier) @name))) @definition.function
(struct_definition (type_head (identifier) @name)) @definition.class
(struct_definition (type_head (binary_expression . (identifier) @name))) @definition.class
(struct_definition (type_head (binary_expression . (parametrized_type_expression . (identifier) @name)))) @definition.class
(struct_definition (type_head (parametrized_type_expression . (identifier) @name))) @definition.class
(abstract_definition (type_head (identifier) @name)) @definition.interface
(abstract_definition (type_head (binary_expression . (identifier) @name))) @definition.interface
(primitive_definition (type_head (identifier) @name)) @definition.type
(struct_definition (typed_expression . (identifier) @name) @definition.field)
(struct_definition (identifier) @name @definition.field)
(const_statement (assignment . (identifier) @name)) @definition.constant
(source_file (assignment . (call_expression . (identifier) @name)) @definition.function)
(module_definition (assignment . (call_expression . (identifier) @name)) @definition.function)
(source_file (assignment . (identifier) @name) @definition.variable)
(module_definition (assignment . (identifier) @name) @definition.variable)

(call_expression . (identifier) @reference.call)
(broadcast_call_expression . (identifier) @reference.call)
(call_expression . (field_expression (identifier) @reference.call .))
(field_expression (identifier) @reference.attribute .)
(typed_expression (identifier) @reference.type .)
(curly_expression (identifier) @reference.type)
(argument_list (identifier) @reference.name)
(macro_identifier) @reference.call
