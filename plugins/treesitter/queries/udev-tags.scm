; udev rules definitions and references (capture conventions: see ecma-tags.scm): ENV{NAME}=
; sets a variable that later rules match with ENV{NAME}==; LABEL= names a GOTO= target.

(assignment (env_var) @name) @definition.variable
(assignment "LABEL" (value (content) @name)) @definition.constant

(match (env_var) @reference.name)
(assignment "GOTO" (value (content) @reference.name))
