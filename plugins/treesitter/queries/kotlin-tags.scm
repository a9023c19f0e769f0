; Kotlin definitions and references (capture conventions: see ecma-tags.scm). Interfaces and enum
; classes are class_declarations told apart by their keyword or modifier.

(class_declaration "interface" name: (identifier) @name) @definition.interface
(class_declaration (modifiers (class_modifier) @_mod (#eq? @_mod "enum")) name: (identifier) @name) @definition.enum
(class_declaration name: (identifier) @name) @definition.class
(object_declaration name: (identifier) @name) @definition.object
(companion_object name: (identifier) @name) @definition.object
(function_declaration name: (identifier) @name) @definition.function
(secondary_constructor "constructor" @name) @definition.method
(type_alias type: (identifier) @name) @definition.type
(property_declaration (modifiers (property_modifier) @_mod (#eq? @_mod "const")) (variable_declaration (identifier) @name)) @definition.constant
(property_declaration (variable_declaration (identifier) @name)) @definition.variable
(class_parameter "val" (identifier) @name) @definition.field
(class_parameter "var" (identifier) @name) @definition.field
(enum_entry (identifier) @name) @definition.constant
(package_header (qualified_identifier) @name) @definition.module

(lambda_literal) @scope.function
(anonymous_function) @scope.function

(call_expression (identifier) @reference.call)
(call_expression (navigation_expression (identifier) @reference.call .))
(navigation_expression (identifier) @reference.attribute .)
(user_type (identifier) @reference.type)
(value_argument (identifier) @reference.name)
