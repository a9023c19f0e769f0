; JavaScript only (the TypeScript grammars name these differently).

(field_definition
  property: [(property_identifier) (private_property_identifier)] @name
  value: [(arrow_function) (function_expression)]) @definition.method
(field_definition
  property: [(property_identifier) (private_property_identifier)] @name) @definition.field

; exports.f = function () {}; module.exports.f = () => {}; Foo.prototype.m = function () {}
(expression_statement
  (assignment_expression
    left: (member_expression property: (property_identifier) @name)
    right: [(arrow_function) (function_expression)]) @definition.function)

(class_heritage (identifier) @reference.type)
(class_heritage (member_expression property: (property_identifier) @reference.type))
