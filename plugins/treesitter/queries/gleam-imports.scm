(import module: (module) @import.path)
