(open_module module: (module_path) @import.path)
(include_module module: (module_path) @import.path)
