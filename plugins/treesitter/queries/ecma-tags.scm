; Definitions and references shared by JavaScript, TypeScript and TSX.
;
; Capture conventions (see extract.py):
;   @definition.<kind>  the whole definition node     @name  its name node
;   @scope.<kind>       a node that only encloses (anonymous functions), optionally with @name
;   @reference.<kind>   the name node of a reference (call, type, attribute, name)
; Where several patterns capture the same name node, the earliest pattern wins.

; -- definitions ------------------------------------------------------------------------------

(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition
  name: [(property_identifier) (private_property_identifier)] @name) @definition.method

; const f = () => ...; const g = function () {}; const C = class {}
(variable_declarator
  name: (identifier) @name
  value: [(arrow_function) (function_expression) (generator_function)]) @definition.function
(variable_declarator name: (identifier) @name value: (class)) @definition.class

; other declared names (locals inside functions are dropped by the extractor)
(lexical_declaration
  kind: "const"
  (variable_declarator name: (identifier) @name) @definition.constant)
(lexical_declaration
  kind: "let"
  (variable_declarator name: (identifier) @name) @definition.variable)
(variable_declaration
  (variable_declarator name: (identifier) @name) @definition.variable)

; anonymous functions enclose locals but add nothing to the scope path
(arrow_function) @scope.function
(function_expression) @scope.function
(generator_function) @scope.function

; -- references -------------------------------------------------------------------------------

(call_expression function: (identifier) @reference.call)
(call_expression
  function: (member_expression property: [(property_identifier) (private_property_identifier)] @reference.call))
(new_expression constructor: (identifier) @reference.call)
(new_expression constructor: (member_expression property: (property_identifier) @reference.call))
(decorator (identifier) @reference.call)

(member_expression property: (property_identifier) @reference.attribute)
(member_expression object: (identifier) @reference.name)
(arguments (identifier) @reference.name)
(variable_declarator value: (identifier) @reference.name)
(assignment_expression right: (identifier) @reference.name)
(return_statement (identifier) @reference.name)
(pair value: (identifier) @reference.name)
(shorthand_property_identifier) @reference.name
(spread_element (identifier) @reference.name)
(binary_expression left: (identifier) @reference.name)
(binary_expression right: (identifier) @reference.name)
(array (identifier) @reference.name)
(template_substitution (identifier) @reference.name)
(export_specifier name: (identifier) @reference.name)
(export_statement value: (identifier) @reference.name)
