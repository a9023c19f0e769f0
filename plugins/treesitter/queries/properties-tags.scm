; Java properties: each key is a definition (code looks settings up by these dotted names).

(property (key) @name) @definition.constant
