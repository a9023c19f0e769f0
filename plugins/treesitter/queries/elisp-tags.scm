; Emacs Lisp definitions and references (capture conventions: see ecma-tags.scm). Besides the
; grammar's own defun/defmacro/defvar/defconst nodes, a list whose head is a defining form names
; what it defines in its second element.

(function_definition name: (symbol) @name) @definition.function
(macro_definition name: (symbol) @name) @definition.function
(special_form "defconst" . (symbol) @name) @definition.constant
(special_form "defvar" . (symbol) @name) @definition.variable
(list . (symbol) @_form
  (#match? @_form "^(cl-defun|cl-defmacro|cl-defgeneric|cl-defmethod|defsubst|define-inline|define-derived-mode|define-minor-mode|define-globalized-minor-mode|defalias)$")
  . [(symbol) @name (quote (symbol) @name)]) @definition.function
(list . (symbol) @_form (#match? @_form "^(defclass|cl-defstruct|define-error)$")
  . [(symbol) @name (quote (symbol) @name)]) @definition.class
(list . (symbol) @_form (#match? @_form "^(defcustom|defface|defgroup|defvar-local)$")
  . (symbol) @name) @definition.variable

(list . (symbol) @reference.call (#not-match? @reference.call "^(cl-)?def|^(require|provide|let\\*?|if|when|unless|progn|lambda|quote|function|setq|and|or|not)$"))
(quote (symbol) @reference.name)
