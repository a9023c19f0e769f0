; Lua definitions and references (capture conventions: see ecma-tags.scm). `function T.f()` and
; `function T:m()` are methods of T.

(function_declaration
  name: (dot_index_expression table: (_) @receiver field: (identifier) @name)) @definition.function
(function_declaration
  name: (method_index_expression table: (_) @receiver method: (identifier) @name)) @definition.method
(function_declaration name: (identifier) @name) @definition.function
(assignment_statement
  (variable_list name: (identifier) @name)
  (expression_list value: (function_definition))) @definition.function
(assignment_statement
  (variable_list name: (dot_index_expression table: (_) @receiver field: (identifier) @name))
  (expression_list value: (function_definition))) @definition.function
(chunk (variable_declaration (assignment_statement (variable_list name: (identifier) @name)) @definition.variable))
(chunk (assignment_statement (variable_list name: (dot_index_expression table: (identifier) @receiver field: (identifier) @name)) @definition.field))

(function_definition) @scope.function

(function_call name: (identifier) @reference.call)
(function_call name: (dot_index_expression field: (identifier) @reference.call))
(function_call name: (method_index_expression method: (identifier) @reference.call))
(dot_index_expression field: (identifier) @reference.attribute)
(arguments (identifier) @reference.name)
(expression_list value: (identifier) @reference.name)
