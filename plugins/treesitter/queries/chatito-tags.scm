; Chatito definitions and references (capture conventions: see ecma-tags.scm): intents, aliases
; and slots are defined by their headers and used through ~[alias] and @[slot].

(intent_def (intent) @name) @definition.class
(alias_def (alias) @name) @definition.function
(slot_def (slot) @name) @definition.variable

(alias_ref (alias) @reference.call)
(slot_ref (slot) @reference.name)
