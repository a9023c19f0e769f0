"""The Python backends: ``python_ast`` (the default, :mod:`.ast_backend`) and ``python_libcst``
(opt-in, :mod:`.libcst_backend` with :mod:`.libcst_scopes` and :mod:`.libcst_lines`), and what
they share (:mod:`.common`)."""
