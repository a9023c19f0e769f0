; C definitions and references (capture conventions: see ecma-tags.scm).

(function_definition
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(function_definition
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name))) @definition.function
(declaration
  declarator: (function_declarator declarator: (identifier) @name)) @definition.function
(declaration
  declarator: (pointer_declarator
    declarator: (function_declarator declarator: (identifier) @name))) @definition.function

; typedef struct { ... } name_t: the struct takes the typedef's name
(type_definition
  type: [(struct_specifier !name body: (_)) (union_specifier !name body: (_))]
  declarator: (type_identifier) @name) @definition.class
(type_definition
  type: (enum_specifier !name body: (_))
  declarator: (type_identifier) @name) @definition.enum
(type_definition declarator: (type_identifier) @name) @definition.type
(type_definition
  declarator: (pointer_declarator declarator: (type_identifier) @name)) @definition.type
(type_definition
  declarator: (function_declarator
    declarator: (parenthesized_declarator (pointer_declarator declarator: (type_identifier) @name)))) @definition.type

(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(enumerator name: (identifier) @name) @definition.constant
(field_declaration declarator: (field_identifier) @name) @definition.field
(field_declaration
  declarator: [(pointer_declarator declarator: (field_identifier) @name)
               (array_declarator declarator: (field_identifier) @name)]) @definition.field
(declaration declarator: (init_declarator declarator: (identifier) @name)) @definition.variable
(declaration
  declarator: (init_declarator
    declarator: [(pointer_declarator declarator: (identifier) @name)
                 (array_declarator declarator: (identifier) @name)])) @definition.variable
(declaration declarator: (identifier) @name) @definition.variable
(declaration
  declarator: [(pointer_declarator declarator: (identifier) @name)
               (array_declarator declarator: (identifier) @name)]) @definition.variable
(preproc_def name: (identifier) @name) @definition.constant
(preproc_function_def name: (identifier) @name) @definition.function

(call_expression function: (identifier) @reference.call)
(call_expression function: (field_expression field: (field_identifier) @reference.call))
(type_identifier) @reference.type
(field_expression field: (field_identifier) @reference.attribute)
(argument_list (identifier) @reference.name)
(return_statement (identifier) @reference.name)
(init_declarator value: (identifier) @reference.name)
(assignment_expression right: (identifier) @reference.name)
(initializer_list (identifier) @reference.name)
(binary_expression left: (identifier) @reference.name)
(binary_expression right: (identifier) @reference.name)
(unary_expression argument: (identifier) @reference.name)
(conditional_expression (identifier) @reference.name)
