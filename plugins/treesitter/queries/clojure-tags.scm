; Clojure definitions and references (capture conventions: see ecma-tags.scm). A list whose head
; is a defining form names what it defines in its second element.

(list_lit . (sym_lit name: (sym_name) @_form)
  (#match? @_form "^(defn|defn-|defmacro|defmulti|definline)$")
  . (sym_lit name: (sym_name) @name)) @definition.function
(list_lit . (sym_lit name: (sym_name) @_form) (#eq? @_form "defmethod")
  . (sym_lit name: (sym_name) @name)) @definition.method
(list_lit . (sym_lit name: (sym_name) @_form) (#match? @_form "^(def|defonce)$")
  . (sym_lit name: (sym_name) @name)) @definition.variable
(list_lit . (sym_lit name: (sym_name) @_form) (#match? @_form "^(defprotocol|definterface)$")
  . (sym_lit name: (sym_name) @name)) @definition.interface
(list_lit . (sym_lit name: (sym_name) @_form) (#match? @_form "^(defrecord|deftype|defstruct)$")
  . (sym_lit name: (sym_name) @name)) @definition.class
(list_lit . (sym_lit name: (sym_name) @_form) (#eq? @_form "ns")
  . (sym_lit name: (sym_name) @name)) @definition.module
; the method signatures a protocol declares
(list_lit . (sym_lit name: (sym_name) @_form) (#eq? @_form "defprotocol")
  (list_lit . (sym_lit name: (sym_name) @name)) @definition.method)

(list_lit . (sym_lit name: (sym_name) @reference.call)
  (#not-match? @reference.call "^(def[a-z-]*|ns|fn|let|if|do|when|cond|loop|recur|quote)$"))
