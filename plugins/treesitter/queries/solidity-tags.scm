; Solidity definitions and references (capture conventions: see ecma-tags.scm).

(contract_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(library_declaration name: (identifier) @name) @definition.module
(struct_declaration name: (identifier) @name) @definition.struct
(enum_declaration name: (identifier) @name) @definition.enum
(function_definition name: (identifier) @name) @definition.function
(modifier_definition name: (identifier) @name) @definition.function
(constructor_definition "constructor" @name) @definition.method
(event_definition name: (identifier) @name) @definition.type
(error_declaration name: (identifier) @name) @definition.class
(state_variable_declaration name: (identifier) @name) @definition.field
(struct_member name: (identifier) @name) @definition.field
(user_defined_type_definition name: (identifier) @name) @definition.type

(call_expression function: (expression (identifier) @reference.call))
(call_expression function: (expression (member_expression property: (identifier) @reference.call)))
(member_expression property: (identifier) @reference.attribute)
(member_expression object: (identifier) @reference.name)
(user_defined_type (identifier) @reference.type)
(emit_statement name: (expression (identifier) @reference.call))
(inheritance_specifier ancestor: (user_defined_type (identifier) @reference.type))
