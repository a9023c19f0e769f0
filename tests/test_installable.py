"""A map says which files a missing grammar would map better, and how to install it
(repomapper.installable), instead of ranking them quietly worse."""

from __future__ import annotations

import types

from repomapper.hookspecs import hookimpl
from repomapper.installable import CODE, installable_diagnostics
from repomapper.model import DEF, BackendInfo, Diagnostic, FileSymbols, Tag
from repomapper.registry import PluginConfig, PluginSet
from repomapper.repomap import RepoMap
from tests.conftest import write_tree

HOW = "pip install 'repomapper[languages]'"
GRAMMARS = BackendInfo(
    "grammars",
    "1",
    ("go",),
    (".go",),
    ("definitions",),
    installable=(("rust", (".rs",), HOW), ("c", (".c", ".h"), HOW), ("go2", (".go",), HOW)),
)
FALLBACK = BackendInfo("fallback", "1", ("*",), ("*",), ("definitions",))
PYTHON = BackendInfo("python", "1", ("python",), (".py",), ("definitions",))
INFOS = {i.name: i for i in (GRAMMARS, FALLBACK, PYTHON)}
NO_BACKEND = (Diagnostic("no_backend", "no backend answered", "x", "info"),)


def test_files_a_fallback_mapped_or_none_did_are_listed_per_language_with_the_command():
    summaries = {
        "src/lib.rs": FileSymbols("src/lib.rs", plugin="fallback"),
        "src/main.rs": FileSymbols("src/main.rs", plugin="fallback"),
        "inc/a.h": FileSymbols("inc/a.h", diagnostics=NO_BACKEND),
        "big.c": FileSymbols("big.c", diagnostics=(Diagnostic("too_large", "x", "big.c"),)),
        "tool.py": FileSymbols("tool.py", plugin="python"),
        "main.go": FileSymbols("main.go", plugin="fallback"),  # an installed grammar claims .go
        "notes.txt": FileSymbols("notes.txt", plugin="fallback"),
    }
    got = installable_diagnostics(summaries, INFOS)
    assert [(d.code, d.severity, d.path, d.paths) for d in got] == [
        (CODE, "info", None, ("inc/a.h",)),
        (CODE, "info", None, ("src/lib.rs", "src/main.rs")),
    ]
    assert all(HOW in d.message for d in got)
    assert got[1].message.startswith("2 rust file(s)")


def test_nothing_is_said_when_every_grammar_is_installed():
    full = {**INFOS, "grammars": BackendInfo("grammars", "1", ("go",), (".go",), ("definitions",))}
    summaries = {"src/lib.rs": FileSymbols("src/lib.rs", plugin="fallback")}
    assert installable_diagnostics(summaries, full) == []


def test_the_tree_sitter_backend_offers_only_what_it_cannot_map_now():
    from repomapper.plugins.treesitter import backend_info

    info = backend_info()
    for language, exts, how in info.installable:
        assert exts and not set(exts) & set(info.extensions), language
        assert how.startswith("pip install ")
        assert language not in info.languages


def _plugin(info: BackendInfo, suffix: str) -> types.SimpleNamespace:
    mod = types.SimpleNamespace()

    @hookimpl
    def backend_info() -> BackendInfo:
        return info

    @hookimpl
    def extract_tags(source):
        if not source.path.endswith(suffix):
            return None
        return [Tag(source.path, 1, 1, source.text().split()[0], DEF, "function")]

    mod.backend_info, mod.extract_tags = backend_info, extract_tags
    return mod


def test_a_map_reports_the_files_a_missing_grammar_would_map(tmp_path):
    info = BackendInfo(
        "partial",
        "1",
        ("probe",),
        (".probe",),
        ("definitions",),
        installable=(("zeta", (".zeta",), "pip install zeta-grammar"),),
    )
    root = write_tree(tmp_path / "r", {"a.zeta": "alpha\n", "b.probe": "beta\n", "c.py": "x = 1\n"})
    ps = PluginSet(
        PluginConfig(load_entry_points=False, extra=(("partial", _plugin(info, ".probe")),))
    )
    result = RepoMap(root, 500, plugins=ps, use_cache=False).map()
    found = [d for d in result.diagnostics if d.code == CODE]
    assert [(d.paths, d.severity) for d in found] == [(("a.zeta",), "info")]
    assert "pip install zeta-grammar" in found[0].message
    assert "b.probe" in result.map


def test_the_command_line_counts_them_in_its_summary_line():
    from repomapper.cli import _coverage_line
    from repomapper.model import MapResult

    diag = Diagnostic(
        CODE, "2 rust file(s) mapped without ...: " + HOW, None, "info", ("a.rs", "b.rs")
    )
    result = MapResult(
        "m", 10, "t", True, 500, 3, 3, diagnostics=(diag,), extra={"files_mapped": 3}
    )
    line = _coverage_line(result, False)
    assert line is not None and "2 mapped without their language's grammar" in line
    assert line.endswith("-v for the list")


def test_the_envelope_says_what_to_install_in_its_next_step():
    from repomapper.contract.envelope import from_result
    from repomapper.model import MapResult

    diag = Diagnostic(
        CODE, "2 rust file(s) mapped without ...: " + HOW + " maps them fully", None, "info"
    )
    result = MapResult(
        "m", 10, "t", True, 500, 3, 3, diagnostics=(diag,), extra={"files_mapped": 3}
    )
    envelope = from_result(result, max_ranked=10)
    assert envelope.next is not None and HOW in envelope.next
    plain = MapResult("m", 10, "t", True, 500, 3, 3, extra={"files_mapped": 3})
    assert from_result(plain, max_ranked=10).next is None


def test_a_plugin_with_malformed_installable_rows_is_left_out_with_a_reason(tmp_path):
    """The rows are read on every map: a plugin that gives them wrong is left out as a load
    fault (plugin_load_error), never the map."""
    from repomapper.registry import backend_info_problem

    assert backend_info_problem(GRAMMARS) is None
    for bad in ((("rust", ".rs", HOW),), (("rust", (".rs",)),), [("rust", (1,), HOW)], "rust"):
        info = BackendInfo("bad", "1", ("x",), (".x",), ("definitions",), installable=bad)
        problem = backend_info_problem(info)
        assert problem is not None and "installable" in problem
    pairs = BackendInfo("bad", "1", ("x",), (".x",), (), language_extensions=(("x", ".x"),))
    assert "language_extensions" in (backend_info_problem(pairs) or "")

    bad = BackendInfo("bad", "1", ("zeta",), (".zeta",), (), installable=(("z", ".z", 3),))
    root = write_tree(tmp_path / "r", {"a.py": "x = 1\n"})
    ps = PluginSet(PluginConfig(load_entry_points=False, extra=(("bad", _plugin(bad, ".zeta")),)))
    result = RepoMap(root, 500, plugins=ps, use_cache=False).map()
    assert "a.py" in result.map
    assert any(
        d.code == "plugin_load_error" and "installable" in d.message for d in result.diagnostics
    )
