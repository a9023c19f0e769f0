; Racket definitions and references (capture conventions: see ecma-tags.scm). `(define (f x) ...)`
; defines a function, `(define x ...)` a value.

(list . (symbol) @_form (#match? @_form "^(define|define/contract|define/public|define/private|define/override)$")
  . (list . (symbol) @name)) @definition.function
(list . (symbol) @_form (#match? @_form "^(define|define/contract)$") . (symbol) @name) @definition.variable
(list . (symbol) @_form (#match? @_form "^(define-syntax|define-syntax-rule)$")
  . [(symbol) @name (list . (symbol) @name)]) @definition.function
(list . (symbol) @_form (#match? @_form "^(struct|define-struct)$") . (symbol) @name) @definition.class

(list . (symbol) @reference.call
  (#not-match? @reference.call "^(define[a-z/-]*|struct|require|provide|let\\*?|letrec|if|when|unless|cond|begin|lambda|quote)$"))
(list . (symbol) @_form (#eq? @_form "provide") (symbol) @reference.name)
