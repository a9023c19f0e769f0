; D definitions and references (capture conventions: see ecma-tags.scm).

(module_declaration (module_fqn) @name) @definition.module
(interface_declaration (identifier) @name) @definition.interface
(class_declaration (identifier) @name) @definition.class
(struct_declaration (identifier) @name) @definition.struct
(union_declaration (identifier) @name) @definition.struct
(enum_declaration (identifier) @name) @definition.enum
(function_declaration (identifier) @name) @definition.function
(constructor (this) @name) @definition.method
(manifest_constant (manifest_declarator (identifier) @name)) @definition.constant
(aggregate_body (variable_declaration (declarator (identifier) @name)) @definition.field)
(module_def (variable_declaration (declarator (identifier) @name)) @definition.variable)
(source_file (variable_declaration (declarator (identifier) @name)) @definition.variable)

(call_expression . (identifier) @reference.call)
(call_expression . (type (identifier) @reference.call .))
(type . (identifier) @reference.type)
(base_class (identifier) @reference.type)
(expression (identifier) @reference.name)
