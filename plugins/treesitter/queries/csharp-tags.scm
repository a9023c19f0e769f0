; C# definitions and references (capture conventions: see ecma-tags.scm).

(class_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(enum_member_declaration name: (identifier) @name) @definition.constant
(delegate_declaration name: (identifier) @name) @definition.type
(method_declaration name: (identifier) @name) @definition.method
(constructor_declaration name: (identifier) @name) @definition.method
(local_function_statement name: (identifier) @name) @definition.function
(property_declaration name: (identifier) @name) @definition.field
(field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field
(event_field_declaration
  (variable_declaration (variable_declarator name: (identifier) @name))) @definition.field

(namespace_declaration name: (_) @name) @scope.namespace
(lambda_expression) @scope.function
(anonymous_method_expression) @scope.function

(invocation_expression function: (identifier) @reference.call)
(invocation_expression function: (generic_name (identifier) @reference.call))
(invocation_expression function: (member_access_expression name: (identifier) @reference.call))
(invocation_expression
  function: (member_access_expression name: (generic_name (identifier) @reference.call)))
(object_creation_expression type: (identifier) @reference.call)
(object_creation_expression type: (generic_name (identifier) @reference.call))
(object_creation_expression type: (qualified_name name: (identifier) @reference.call))
(member_access_expression name: (identifier) @reference.attribute)
(member_access_expression expression: (identifier) @reference.name)
(base_list (identifier) @reference.type)
(base_list (generic_name (identifier) @reference.type))
(base_list (qualified_name name: (identifier) @reference.type))
(variable_declaration type: (identifier) @reference.type)
(parameter type: (identifier) @reference.type)
(method_declaration returns: (identifier) @reference.type)
(property_declaration type: (identifier) @reference.type)
(type_argument_list (identifier) @reference.type)
(generic_name (identifier) @reference.type)
(nullable_type (identifier) @reference.type)
(array_type type: (identifier) @reference.type)
(attribute name: (identifier) @reference.type)
(typeof_expression (identifier) @reference.type)
(cast_expression type: (identifier) @reference.type)
(argument (identifier) @reference.name)
(return_statement (identifier) @reference.name)
