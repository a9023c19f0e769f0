; Common Lisp definitions and references (capture conventions: see ecma-tags.scm). defun,
; defmacro, defgeneric and defmethod are the grammar's own defun nodes; the other defining forms
; are lists whose head names them.

(list_lit (defun (defun_header keyword: (defun_keyword) @_kw (#match? @_kw "^(defmethod|DEFMETHOD)$")
  function_name: (sym_lit) @name))) @definition.method
(list_lit (defun (defun_header function_name: (sym_lit) @name))) @definition.function
(list_lit . (sym_lit) @_form (#match? @_form "^(?i:defclass|defstruct|define-condition)$")
  . (sym_lit) @name) @definition.class
(list_lit . (sym_lit) @_form (#match? @_form "^(?i:defconstant)$") . (sym_lit) @name) @definition.constant
(list_lit . (sym_lit) @_form (#match? @_form "^(?i:defvar|defparameter)$") . (sym_lit) @name) @definition.variable
(list_lit . (sym_lit) @_form (#match? @_form "^(?i:deftype)$") . (sym_lit) @name) @definition.type
(list_lit . (sym_lit) @_form (#match? @_form "^(?i:defpackage)$") . (kwd_lit (kwd_symbol) @name)) @definition.module

(list_lit . (sym_lit) @reference.call
  (#not-match? @reference.call "^(?i:def[a-z-]*|in-package|let\\*?|if|when|unless|progn|lambda|quote|function|setf|setq|and|or|not)$"))
