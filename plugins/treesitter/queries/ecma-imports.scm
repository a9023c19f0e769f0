; Imports in JavaScript, TypeScript and TSX. Each capture names a handler in imports.py.

(import_statement) @import.es_import
(export_statement source: (_)) @import.es_export
((call_expression
   function: (identifier) @_fn
   arguments: (arguments . [(string) (template_string)])) @import.require
  (#eq? @_fn "require"))
(call_expression
  function: (import)
  arguments: (arguments . [(string) (template_string)])) @import.dynamic
