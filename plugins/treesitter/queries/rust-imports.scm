(use_declaration) @import.rust_use
(mod_item !body) @import.rust_mod
(extern_crate_declaration) @import.rust_extern
