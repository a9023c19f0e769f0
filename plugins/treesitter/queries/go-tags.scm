; Go definitions and references (capture conventions: see ecma-tags.scm).

(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: (_) @receiver))
  name: (field_identifier) @name) @definition.method
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.class
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(field_declaration name: (field_identifier) @name) @definition.field
(method_elem name: (field_identifier) @name) @definition.method
(const_spec name: (identifier) @name) @definition.constant
(var_spec name: (identifier) @name) @definition.variable

(func_literal) @scope.function

(call_expression function: (identifier) @reference.call)
(call_expression function: (selector_expression field: (field_identifier) @reference.call))
(selector_expression field: (field_identifier) @reference.attribute)
(type_identifier) @reference.type
(argument_list (identifier) @reference.name)
(return_statement (expression_list (identifier) @reference.name))
(binary_expression left: (identifier) @reference.name)
(binary_expression right: (identifier) @reference.name)
(unary_expression operand: (identifier) @reference.name)
(keyed_element value: (literal_element (identifier) @reference.name))
(assignment_statement right: (expression_list (identifier) @reference.name))
(short_var_declaration right: (expression_list (identifier) @reference.name))
