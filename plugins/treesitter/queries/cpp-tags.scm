; C++ additions to c-tags.scm (the C++ grammar keeps C's node names). A qualified name
; (void ns::Widget::draw()) is split by the extractor into the name and its scope.

(function_definition
  declarator: (function_declarator
    declarator: [(field_identifier) (qualified_identifier) (operator_name)
                 (destructor_name)] @name)) @definition.function
(function_definition
  declarator: [(pointer_declarator
                 declarator: (function_declarator
                   declarator: [(field_identifier) (qualified_identifier)] @name))
               (reference_declarator
                 (function_declarator
                   declarator: [(identifier) (field_identifier) (qualified_identifier)] @name))]) @definition.function
(declaration
  declarator: (function_declarator declarator: (qualified_identifier) @name)) @definition.function
(field_declaration
  declarator: (function_declarator
    declarator: [(field_identifier) (operator_name) (destructor_name)] @name)) @definition.method
(field_declaration
  declarator: [(pointer_declarator
                 declarator: (function_declarator declarator: (field_identifier) @name))
               (reference_declarator
                 (function_declarator declarator: (field_identifier) @name))]) @definition.method

(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(type_definition
  type: (class_specifier !name body: (_))
  declarator: (type_identifier) @name) @definition.class
(alias_declaration name: (type_identifier) @name) @definition.type
(field_declaration declarator: (reference_declarator (field_identifier) @name)) @definition.field

(namespace_definition name: (_) @name) @scope.namespace
(lambda_expression) @scope.function

(call_expression function: (qualified_identifier name: (identifier) @reference.call))
(call_expression function: (template_function name: (identifier) @reference.call))
(call_expression
  function: (qualified_identifier name: (template_function name: (identifier) @reference.call)))
(new_expression type: (type_identifier) @reference.call)
(namespace_identifier) @reference.name
(qualified_identifier name: (identifier) @reference.name)
