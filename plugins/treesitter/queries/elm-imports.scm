(import_clause moduleName: (upper_case_qid) @import.path)
