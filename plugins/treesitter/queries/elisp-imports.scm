(list . (symbol) @_form (#eq? @_form "require") . (quote (symbol) @import.path))
