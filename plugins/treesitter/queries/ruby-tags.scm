; Ruby definitions and references (capture conventions: see ecma-tags.scm).

(class name: [(constant) (scope_resolution)] @name) @definition.class
(module name: [(constant) (scope_resolution)] @name) @definition.module
(singleton_class) @scope.class
(method name: (_) @name) @definition.method
(singleton_method name: (_) @name) @definition.method
(assignment left: (constant) @name) @definition.constant
((call
   method: (identifier) @_attr
   arguments: (argument_list (simple_symbol) @name)) @definition.field
  (#any-of? @_attr "attr_reader" "attr_writer" "attr_accessor"))

(lambda) @scope.function
(block) @scope.function
(do_block) @scope.function

(call method: (identifier) @reference.call)
(call receiver: (constant) @reference.name)
(superclass (constant) @reference.type)
(superclass (scope_resolution name: (constant) @reference.type))
(scope_resolution name: (constant) @reference.name)
(argument_list (constant) @reference.name)
(argument_list (identifier) @reference.name)
(scope_resolution scope: (constant) @reference.name)
(binary left: (constant) @reference.name)
(binary right: (constant) @reference.name)
