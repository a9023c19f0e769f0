(preproc_include) @import.c_include
