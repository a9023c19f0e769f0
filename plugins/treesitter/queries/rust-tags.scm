; Rust definitions and references (capture conventions: see ecma-tags.scm).

(function_item name: (identifier) @name) @definition.function
(function_signature_item name: (identifier) @name) @definition.function
(struct_item name: (type_identifier) @name) @definition.class
(union_item name: (type_identifier) @name) @definition.class
(enum_item name: (type_identifier) @name) @definition.enum
(enum_variant name: (identifier) @name) @definition.constant
(trait_item name: (type_identifier) @name) @definition.interface
(type_item name: (type_identifier) @name) @definition.type
(associated_type name: (type_identifier) @name) @definition.type
(const_item name: (identifier) @name) @definition.constant
(static_item name: (identifier) @name) @definition.variable
(mod_item name: (identifier) @name body: (declaration_list)) @definition.module
(macro_definition name: (identifier) @name) @definition.function
(field_declaration name: (field_identifier) @name) @definition.field

; methods take the implemented type as their scope
(impl_item type: (_) @name) @scope.impl
(closure_expression) @scope.function

(call_expression function: (identifier) @reference.call)
(call_expression function: (scoped_identifier name: (identifier) @reference.call))
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(call_expression function: (generic_function function: (identifier) @reference.call))
(call_expression
  function: (generic_function function: (scoped_identifier name: (identifier) @reference.call)))
(call_expression
  function: (generic_function function: (field_expression field: (field_identifier) @reference.call)))
(macro_invocation macro: (identifier) @reference.call)
(type_identifier) @reference.type
(scoped_identifier path: (identifier) @reference.name)
(field_expression field: (field_identifier) @reference.attribute)
(arguments (identifier) @reference.name)
(return_expression (identifier) @reference.name)
(scoped_identifier name: (identifier) @reference.name)
(binary_expression left: (identifier) @reference.name)
(binary_expression right: (identifier) @reference.name)
