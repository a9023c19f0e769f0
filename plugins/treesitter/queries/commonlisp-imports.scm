(list_lit . (sym_lit) @_form (#match? @_form "^(?i:require)$") . (kwd_lit (kwd_symbol) @import.path))
(list_lit . (kwd_lit (kwd_symbol) @_kw) (#eq? @_kw "use") (kwd_lit (kwd_symbol) @import.path))
