(list_lit . (kwd_lit name: (kwd_name) @_kw) (#match? @_kw "^(require|use|import)$")
  (vec_lit . (sym_lit name: (sym_name) @import.path)))
(list_lit . (kwd_lit name: (kwd_name) @_kw) (#match? @_kw "^(require|use|import)$")
  (sym_lit name: (sym_name) @import.path))
