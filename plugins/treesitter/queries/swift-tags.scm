; Swift definitions and references (capture conventions: see ecma-tags.scm). class, struct, enum,
; extension and actor are all `class_declaration`; the keyword tells them apart.

(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @definition.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @definition.enum
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name)) @scope.impl
(class_declaration name: (type_identifier) @name) @definition.class
(protocol_declaration name: (type_identifier) @name) @definition.interface
(protocol_function_declaration name: (simple_identifier) @name) @definition.method
(function_declaration name: (simple_identifier) @name) @definition.function
(init_declaration "init" @name) @definition.method
(typealias_declaration name: (type_identifier) @name) @definition.type
(property_declaration
  (value_binding_pattern "let")
  name: (pattern bound_identifier: (simple_identifier) @name)) @definition.constant
(property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @definition.variable
(enum_entry name: (simple_identifier) @name) @definition.constant

(lambda_literal) @scope.function

(call_expression (simple_identifier) @reference.call)
(call_expression (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @reference.call)))
(navigation_suffix suffix: (simple_identifier) @reference.attribute)
(type_identifier) @reference.type
(value_argument value: (simple_identifier) @reference.name)
