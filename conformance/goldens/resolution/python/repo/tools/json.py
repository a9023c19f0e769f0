# a script named like the standard library's json
