; Dart definitions and references (capture conventions: see ecma-tags.scm). A function's body is
; the sibling after its signature; extract.py extends the definition over it.

(class_definition name: (identifier) @name) @definition.class
(enum_declaration name: (identifier) @name) @definition.enum
(mixin_declaration (identifier) @name) @definition.class
(extension_declaration name: (identifier) @name) @definition.class
(function_signature name: (identifier) @name) @definition.function
; a named constructor (Box.empty) is named by its last identifier, the one before the parameters
(constructor_signature name: (identifier) @name . (formal_parameter_list)) @definition.method
(factory_constructor_signature (identifier) @name . (formal_parameter_list)) @definition.method
(getter_signature name: (identifier) @name) @definition.method
(setter_signature name: (identifier) @name) @definition.method
(type_alias (type_identifier) @name) @definition.type
(static_final_declaration (identifier) @name) @definition.constant
(class_body (declaration (initialized_identifier_list (initialized_identifier (identifier) @name))) @definition.field)
(enum_constant name: (identifier) @name) @definition.constant

(type_identifier) @reference.type
(_ (identifier) @reference.call . (selector (argument_part)))
(unconditional_assignable_selector (identifier) @reference.attribute)
(argument (identifier) @reference.name)
(return_statement (identifier) @reference.name)
