; Elixir definitions and references (capture conventions: see ecma-tags.scm). Definitions are
; calls of the defining macros; module attributes (@name value) are constants.

(call target: (identifier) @_kw (#match? @_kw "^(defmodule|defprotocol)$")
  (arguments (alias) @name)) @definition.module
(call target: (identifier) @_kw (#eq? @_kw "defimpl")
  (arguments (alias) @name)) @scope.impl
(call target: (identifier) @_kw (#match? @_kw "^(def|defp|defmacro|defmacrop|defguard|defguardp|defdelegate|defn|defnp)$")
  (arguments [
    (call target: (identifier) @name)
    (identifier) @name
    (binary_operator left: (call target: (identifier) @name))
  ])) @definition.function
(call target: (identifier) @_kw (#eq? @_kw "defexception") (arguments)) @definition.class
(unary_operator operator: "@"
  operand: (call target: (identifier) @name
    (#not-match? @name "^(doc|moduledoc|typedoc|spec|type|typep|opaque|impl|callback|macrocallback|behaviour|derive|enforce_keys|compile|deprecated|dialyzer|external_resource|on_load|since)$"))) @definition.constant

(anonymous_function) @scope.function

(call target: (identifier) @reference.call
  (#not-match? @reference.call "^(def[a-z]*|doc|moduledoc|typedoc|spec|type|impl|behaviour|alias|import|require|use|quote|unquote|case|cond|if|unless|with|for|fn|receive|try|raise)$"))
(call target: (dot right: (identifier) @reference.call))
(alias) @reference.type
