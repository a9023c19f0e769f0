(block
  (identifier) @_type (#eq? @_type "module")
  (body (attribute (identifier) @_key (#eq? @_key "source") (expression (literal_value (string_lit (template_literal) @import.path))))))
