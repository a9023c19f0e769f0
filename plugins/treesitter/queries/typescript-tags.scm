; TypeScript and TSX only.

(abstract_class_declaration name: (type_identifier) @name) @definition.class
(interface_declaration name: (type_identifier) @name) @definition.interface
(type_alias_declaration name: (type_identifier) @name) @definition.type
(enum_declaration name: (identifier) @name) @definition.enum
(enum_body name: (property_identifier) @name @definition.constant)
(enum_body (enum_assignment name: (property_identifier) @name) @definition.constant)
(internal_module name: (identifier) @name) @definition.module
(module name: (identifier) @name) @definition.module

(function_signature name: (identifier) @name) @definition.function
(abstract_method_signature name: (property_identifier) @name) @definition.method
(interface_body (method_signature name: (property_identifier) @name) @definition.method)
; body-less methods: a `declare class` in a .d.ts, overload signatures before an implementation
(class_body
  (method_signature
    name: [(property_identifier) (private_property_identifier)] @name) @definition.method)
(type_alias_declaration
  value: (object_type (method_signature name: (property_identifier) @name) @definition.method))
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method
(public_field_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.field
(interface_body (property_signature name: (property_identifier) @name) @definition.field)
(type_alias_declaration
  value: (object_type (property_signature name: (property_identifier) @name) @definition.field))
; the members of `type T = { ... }` take T as their scope, like an interface's
(type_alias_declaration name: (type_identifier) @name value: (object_type) @scope.interface)

(type_identifier) @reference.type
(extends_clause value: (identifier) @reference.type)
(extends_clause value: (member_expression property: (property_identifier) @reference.type))
(implements_clause (type_identifier) @reference.type)
