; OCaml definitions and references, for implementations (.ml) and interfaces (.mli); capture
; conventions: see ecma-tags.scm. A let binding with parameters or a function body is a function.

(let_binding pattern: (value_name) @name (parameter)) @definition.function
(let_binding pattern: (value_name) @name body: [(function_expression) (fun_expression)]) @definition.function
(let_binding pattern: (value_name) @name) @definition.variable
(external (value_name) @name) @definition.function
(value_specification (value_name) @name type: (function_type)) @definition.function
(value_specification (value_name) @name) @definition.variable
(type_binding name: (type_constructor) @name) @definition.type
(exception_definition (constructor_declaration (constructor_name) @name)) @definition.class
(constructor_declaration (constructor_name) @name) @definition.constant
(field_declaration (field_name) @name) @definition.field
(module_binding (module_name) @name) @definition.module
(module_type_definition (module_type_name) @name) @definition.interface
(class_binding (class_name) @name) @definition.class
(class_type_binding (class_type_name) @name) @definition.interface
(method_definition (method_name) @name) @definition.method
(method_specification (method_name) @name) @definition.method
(instance_variable_definition (instance_variable_name) @name) @definition.field

(fun_expression) @scope.function

(application_expression function: (value_path (value_name) @reference.call))
(value_path (value_name) @reference.name)
(type_constructor_path (type_constructor) @reference.type)
(constructor_path (constructor_name) @reference.call)
(module_path (module_name) @reference.type)
