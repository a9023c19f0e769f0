; HCL / Terraform definitions and references (capture conventions: see ecma-tags.scm). A block's
; type is its first identifier; what it defines is named by its last label.

(block (identifier) @_type (#eq? @_type "variable") . (string_lit (template_literal) @name)) @definition.variable
(block (identifier) @_type (#eq? @_type "output") . (string_lit (template_literal) @name)) @definition.constant
(block (identifier) @_type (#eq? @_type "module") . (string_lit (template_literal) @name)) @definition.module
; a resource or data source is named by its second label, scoped by its type (aws_s3_bucket.assets)
(block (identifier) @_type (#match? @_type "^(resource|data)$") . (string_lit (template_literal) @receiver) . (string_lit (template_literal) @name)) @definition.class
; and the block declares a use of its type (aws_s3_bucket): where a resource of a type is declared is
; where a reader looks for it, and what a search for the type name should find
(block (identifier) @_type (#match? @_type "^(resource|data)$") . (string_lit (template_literal) @name) . (string_lit)) @definition.type
(block (identifier) @_type (#eq? @_type "locals") (body (attribute (identifier) @name) @definition.constant))

; var.x, local.x, module.x: the attribute names the definition; a resource type names its block
(expression (variable_expr (identifier) @_ns (#any-of? @_ns "var" "local" "module")) . (get_attr (identifier) @reference.name))
(expression (variable_expr (identifier) @reference.type (#not-match? @reference.type "^(var|local|module|data|each|count|path|self|terraform)$")) . (get_attr (identifier) @reference.name))
(function_call (identifier) @reference.call)
