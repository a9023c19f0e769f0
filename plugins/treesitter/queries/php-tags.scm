; PHP definitions and references (capture conventions: see ecma-tags.scm).

(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.class
(enum_declaration name: (name) @name) @definition.enum
(enum_case name: (name) @name) @definition.constant
(function_definition name: (name) @name) @definition.function
(method_declaration name: (name) @name) @definition.method
(const_declaration (const_element (name) @name)) @definition.constant
(property_declaration (property_element name: (variable_name (name) @name))) @definition.field

(namespace_definition name: (namespace_name) @name body: (compound_statement)) @scope.namespace
(anonymous_function) @scope.function
(arrow_function) @scope.function

(function_call_expression function: (name) @reference.call)
(function_call_expression function: (qualified_name (name) @reference.call))
(member_call_expression name: (name) @reference.call)
(nullsafe_member_call_expression name: (name) @reference.call)
(scoped_call_expression name: (name) @reference.call)
(scoped_call_expression scope: (name) @reference.name)
(object_creation_expression (name) @reference.call)
(object_creation_expression (qualified_name (name) @reference.call))
(member_access_expression name: (name) @reference.attribute)
(class_constant_access_expression (name) @reference.name)
(base_clause (name) @reference.type)
(base_clause (qualified_name (name) @reference.type))
(class_interface_clause (name) @reference.type)
(class_interface_clause (qualified_name (name) @reference.type))
(named_type (name) @reference.type)
(named_type (qualified_name (name) @reference.type))
(use_declaration (name) @reference.type)
(attribute (name) @reference.type)
