(importDirective (importModuleExpr) @import.path)
