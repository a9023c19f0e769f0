; Elm definitions and references (capture conventions: see ecma-tags.scm). Only top-level values
; are definitions (let bindings are locals).

(module_declaration name: (upper_case_qid) @name) @definition.module
(file (value_declaration
  functionDeclarationLeft: (function_declaration_left . (lower_case_identifier) @name)) @definition.function)
(type_declaration name: (upper_case_identifier) @name) @definition.type
(union_variant name: (upper_case_identifier) @name) @definition.constant
(type_alias_declaration name: (upper_case_identifier) @name) @definition.type
(port_annotation name: (lower_case_identifier) @name) @definition.function

(anonymous_function_expr) @scope.function

(function_call_expr target: (value_expr name: (value_qid (lower_case_identifier) @reference.call .)))
(value_expr name: (value_qid (lower_case_identifier) @reference.name .))
(value_expr name: (upper_case_qid (upper_case_identifier) @reference.call .))
(type_ref (upper_case_qid (upper_case_identifier) @reference.type .))
