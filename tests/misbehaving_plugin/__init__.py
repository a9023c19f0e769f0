"""A deliberately misbehaving plugin for ``.foo`` files, to test that its faults cost one file.

Installed by tests through a plugin manager (``PluginConfig(modules=...)`` or the
``REPOMAPPER_PLUGINS`` environment variable), never by entry point. :mod:`.foo` misbehaves as
the ``FOO_MODE`` environment variable says (read at call time, so forked workers see it too);
the import-time faults have modules of their own (:mod:`.exits_on_import`, :mod:`.misspelled`).
"""

MODES = (
    "ok",  # one sound definition per file: the baseline
    "hang",  # extract_tags sleeps for an hour
    "segfault",  # extract_tags reads address 0 (a grammar or C extension bug looks the same)
    "exit",  # extract_tags calls os._exit(3)
    "raise",  # extract_tags raises
    "garbage",  # [{"name": "x"}, None, "str", 42]
    "lines",  # a tag at line -5 and one at line 10**9, beside a sound one
    "million",  # a million tags for one file
    "claim_all",  # claims every extension ("*"), answers soundly for .foo and with [] elsewhere
    "wrong_info",  # backend_info returns a dict
    "prepare_crash",  # prepare_batch segfaults when the batch holds a file named bad.foo
)
