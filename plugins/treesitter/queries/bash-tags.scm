; Bash definitions and references (capture conventions: see ecma-tags.scm): functions, and
; variables assigned at the top level of the script.

(function_definition name: (word) @name) @definition.function
(program (variable_assignment name: (variable_name) @name) @definition.variable)
(program (declaration_command (variable_assignment name: (variable_name) @name)) @definition.variable)

(command name: (command_name (word) @reference.call))
(simple_expansion (variable_name) @reference.name)
(expansion (variable_name) @reference.name)
