(list . (symbol) @_form (#eq? @_form "require") [(symbol) (string)] @import.path)
