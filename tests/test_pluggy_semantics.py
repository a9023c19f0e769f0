"""Hooks are called through pluggy's hook caller: wrappers (new-style ``wrapper=True`` and
old-style ``hookwrapper=True``) of any plugin wrap each routed backend's answer, ``tryfirst`` and
``trylast`` order the backends asked, and a wrapper is no backend."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from repomapper.cli import main
from repomapper.conformance.subject import Subject
from repomapper.discover import FileEntry
from repomapper.extract import extract_batch, extract_source
from repomapper.isolation.limits import Limits
from repomapper.model import DEF, REF, BackendInfo, SourceFile, Tag
from repomapper.plugin import hookimpl
from repomapper.registry import PluginConfig, PluginSet
from repomapper.repomap import RepoMap
from tests.conftest import write_tree

#: tests/wrapper_plugin.py: wraps extract_tags to hide ``internal_*`` definitions
HIDER = ("hider", "tests.wrapper_plugin")

A_PY = "def internal_helper():\n    return 1\n\n\ndef public_api():\n    return internal_helper()\n"
B_PY = "from a import public_api\n\nprint(public_api())\n"


def plugin_set(*extra: tuple[str, object], wrapper: bool = False, **config: object) -> PluginSet:
    return PluginSet(
        PluginConfig(
            load_entry_points=False,
            modules=(HIDER,) if wrapper else (),
            extra=tuple(extra),
            **config,  # type: ignore[arg-type]
        )
    )


def names(tags: tuple[Tag, ...] | list[Tag], kind: str = DEF) -> list[str]:
    return [t.name for t in tags if t.kind == kind]


@pytest.fixture
def repo(tmp_path):
    return write_tree(tmp_path / "repo", {"a.py": A_PY, "b.py": B_PY})


def backend(name: str, calls: list[str], answer: bool = True, **opts: bool) -> SimpleNamespace:
    """A backend of ``.zz`` files recording its calls; ``opts`` mark its hooks (tryfirst...)."""

    def backend_info() -> BackendInfo:
        return BackendInfo(name, "1", ("zz",), (".zz",), ("definitions",))

    def extract_tags(source: SourceFile) -> list[Tag] | None:
        calls.append(f"{name}.extract_tags")
        return [Tag(source.path, 1, 1, name, DEF, "function")] if answer else None

    def prepare_batch(sources: list[SourceFile]) -> None:
        calls.append(f"{name}.prepare_batch")

    return SimpleNamespace(
        backend_info=hookimpl(backend_info),
        extract_tags=hookimpl(**opts)(extract_tags),
        prepare_batch=hookimpl(**opts)(prepare_batch),
    )


# -- wrappers -------------------------------------------------------------------------------------


def test_a_new_style_wrapper_changes_what_repomapper_tags_prints(repo, monkeypatch):
    monkeypatch.setenv("REPOMAPPER_PLUGINS", "=".join(HIDER))
    r = CliRunner().invoke(main, ["tags", str(repo), "--no-cache"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert "\tdef\tfunction\tpublic_api" in r.stdout
    assert "internal_helper" not in r.stdout


def test_the_map_shows_the_wrapped_tags_and_a_warm_cache_never_replays_the_unwrapped(
    repo, tmp_path
):
    cache = tmp_path / "cache"
    plain = RepoMap(repo, plugins=plugin_set(), cache_dir=cache).map()
    assert "def internal_helper" in plain.map
    wrapped = RepoMap(repo, plugins=plugin_set(wrapper=True), cache_dir=cache).map()
    assert "def public_api" in wrapped.map and "internal_helper" not in wrapped.map
    again = RepoMap(repo, plugins=plugin_set(), cache_dir=cache).map()
    assert again.map == plain.map


def test_a_wrapper_wraps_every_backend_not_only_python(make_tree):
    ps = plugin_set(("zz", backend("zz", [])), wrapper=True)
    src = SourceFile.from_text("x.zz", "internal_zz\n")
    ex = extract_source(ps, src)
    assert ex.plugin == "zz" and names(ex.tags) == ["zz"]
    renamed = backend("internal_zz", [])
    ps = plugin_set(("internal_zz", renamed), wrapper=True)
    ex = extract_source(ps, SourceFile.from_text("x.zz", "internal_zz\n"))
    # the wrapper returned an empty list for the backend: that is the backend's answer
    assert ex.plugin == "internal_zz" and ex.tags == ()


class OldStyleNoReferences:
    """An old-style ``hookwrapper=True`` implementation: drops every reference."""

    @hookimpl(hookwrapper=True)
    def extract_tags(self, source):
        outcome = yield
        tags = outcome.get_result()
        if tags is not None:
            outcome.force_result([t for t in tags if t.kind != REF])


def test_an_old_style_hookwrapper_changes_the_answer():
    src = SourceFile.from_text("a.py", A_PY)
    assert names(extract_source(plugin_set(), src).tags, REF) == ["internal_helper"]
    ex = extract_source(plugin_set(("norefs", OldStyleNoReferences())), src)
    assert ex.plugin == "python_ast"
    assert names(ex.tags) == ["internal_helper", "public_api"] and names(ex.tags, REF) == []


def test_a_wrapper_is_no_backend_it_claims_no_file():
    ps = plugin_set(("norefs", OldStyleNoReferences()), wrapper=True, blocked=("ctags",))
    assert "hider" not in ps.infos and "norefs" not in ps.infos
    assert ps.candidates("a.py") == ("python_ast",)
    assert ps.candidates("x.unknownext") == ()
    ex = extract_source(ps, SourceFile.from_text("x.unknownext", "internal_x\n"))
    assert ex.plugin is None and [d.code for d in ex.diagnostics] == ["no_backend"]
    assert ps.call_first("extract_tags", ["hider"], source=SourceFile.from_text("a.py", "")) == (
        None,
        None,
    )


def test_wrappers_nest_in_pluggy_order_tryfirst_outermost():
    seen: list[str] = []

    def wrapper(label: str, **opts: bool) -> SimpleNamespace:
        def extract_tags(source):
            tags = yield
            seen.append(label)
            return [replace(t, signature=f"{t.signature or ''}<{label}>") for t in tags or ()]

        return SimpleNamespace(extract_tags=hookimpl(wrapper=True, **opts)(extract_tags))

    ps = plugin_set(
        ("outer", wrapper("outer", tryfirst=True)),
        ("plain", wrapper("plain")),
        ("inner", wrapper("inner", trylast=True)),
    )
    _, tags = ps.call_first(
        "extract_tags", ["python_ast"], source=SourceFile.from_text("a.py", A_PY)
    )
    assert seen == ["inner", "plain", "outer"]
    assert tags[0].signature.endswith("<inner><plain><outer>")


# -- tryfirst / trylast among backends ------------------------------------------------------------


def test_tryfirst_and_trylast_order_the_named_backends_of_a_firstresult_hook():
    calls: list[str] = []
    ps = plugin_set(
        ("early", backend("early", calls, tryfirst=True)),
        ("middle", backend("middle", calls)),
        ("late", backend("late", calls, trylast=True)),
    )
    src = SourceFile.from_text("x.zz", "early middle late\n")
    # pluggy asks "late" (registered last) first but for trylast; "early" is tryfirst
    assert ps.call_first("extract_tags", ["late", "middle", "early"], source=src)[0] == "early"
    assert ps.candidates("x.zz")[:3] == ("early", "middle", "late")


def test_tryfirst_and_trylast_order_the_calls_of_a_hook_that_is_not_firstresult():
    calls: list[str] = []
    ps = plugin_set(
        ("early", backend("early", calls, tryfirst=True)),
        ("middle", backend("middle", calls)),
        ("late", backend("late", calls, trylast=True)),
    )
    ps.call_each("prepare_batch", ["late", "middle", "early"], sources=[])
    assert calls == ["early.prepare_batch", "middle.prepare_batch", "late.prepare_batch"]


def test_a_backend_that_declines_passes_the_file_on_inside_the_wrappers():
    calls: list[str] = []
    ps = plugin_set(
        ("first", backend("first", calls, answer=False, tryfirst=True)),
        ("second", backend("second", calls)),
    )
    src = SourceFile.from_text("x.zz", "second\n")
    assert ps.call_first("extract_tags", ["second", "first"], source=src) == (
        "second",
        [Tag("x.zz", 1, 1, "second", DEF, "function")],
    )
    assert calls == ["first.extract_tags", "second.extract_tags"]


# -- a wrapper that raises --------------------------------------------------------------------------


def test_a_wrapper_that_raises_is_a_diagnostic_and_the_backend_answer_stands(monkeypatch):
    monkeypatch.setenv("WRAPPER_MODE", "raise")
    outcomes: list[tuple[str, bool]] = []
    ex = extract_source(
        plugin_set(wrapper=True), SourceFile.from_text("a.py", A_PY), outcomes=outcomes
    )
    assert ex.plugin == "python_ast" and names(ex.tags) == ["internal_helper", "public_api"]
    errors = [d for d in ex.diagnostics if d.code == "backend_error"]
    assert len(errors) == 1 and errors[0].path == "a.py"
    assert "hider crashed wrapping python_ast's extract_tags: RuntimeError: wrapper broke" in (
        errors[0].message
    )
    # the failure is the wrapper's plugin's, not the backend's
    assert outcomes == [("hider", False), ("python_ast", True)]


def test_a_backend_that_raises_inside_a_wrapper_is_still_the_backends_crash():
    def boom(source):
        raise ZeroDivisionError("division by zero")

    boomer = SimpleNamespace(
        backend_info=hookimpl(lambda: BackendInfo("boom", "1", ("python",), (".py",), ())),
        extract_tags=hookimpl(tryfirst=True)(boom),
    )
    outcomes: list[tuple[str, bool]] = []
    ps = plugin_set(("boom", boomer), wrapper=True)
    ex = extract_source(ps, SourceFile.from_text("a.py", A_PY), outcomes=outcomes)
    assert ex.plugin == "python_ast" and "internal_helper" not in names(ex.tags)
    assert [d.message for d in ex.diagnostics if d.code == "backend_error"] == [
        "boom crashed: ZeroDivisionError: division by zero"
    ]
    assert outcomes[0] == ("boom", False) and ("hider", False) not in outcomes


def test_a_raising_wrapper_costs_no_run_and_is_disabled_not_the_backend(tmp_path, monkeypatch):
    monkeypatch.setenv("WRAPPER_MODE", "raise")
    files = {f"m{i}.py": f"def internal_{i}():\n    return {i}\n" for i in range(6)}
    root = write_tree(tmp_path / "many", files)
    ps = plugin_set(wrapper=True, limits=Limits(timeout=5.0, max_failures=3))
    result = RepoMap(root, plugins=ps, cache_dir=tmp_path / "cache").map()
    assert all(f"def internal_{i}" in result.map for i in range(6))
    disabled = [d.message for d in result.diagnostics if d.code == "backend_disabled"]
    assert len(disabled) == 1 and disabled[0].startswith("plugin hider failed on 3 files in a row")

    monkeypatch.setenv("REPOMAPPER_PLUGINS", "=".join(HIDER))
    r = CliRunner().invoke(
        main, ["map", str(root), "--format", "json", "--no-cache"], catch_exceptions=False
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert "m0.py" in out["map"]
    assert any("hider crashed wrapping" in d["message"] for d in out["diagnostics"])


# -- the conformance suite judges a plugin alone ----------------------------------------------------


def test_the_conformance_subject_is_called_without_other_plugins_wrappers():
    ps = plugin_set(wrapper=True)
    src = SourceFile.from_text("a.py", A_PY)
    assert "internal_helper" in names(Subject(ps, "python_ast").tags(src))
    assert Subject(ps, "python_ast").implements("extract_tags")
    assert "internal_helper" not in names(
        ps.call_first("extract_tags", ["python_ast"], source=src)[1]
    )


# -- pluggy's calling conventions -----------------------------------------------------------------


def test_an_implementation_gets_only_the_arguments_it_declares():
    def resolve_import(imp):  # pluggy lets an implementation leave out ``index``
        return [f"{imp}.zz"]

    plugin = backend("zz", [])
    plugin.resolve_import = hookimpl(resolve_import)
    ps = plugin_set(("zz", plugin))
    assert ps.call_first("resolve_import", ["zz"], imp="m", index=None) == ("zz", ["m.zz"])


def test_plugins_registered_after_a_call_are_routed_like_the_others():
    ps = plugin_set()
    src = SourceFile.from_text("a.py", A_PY)
    before = ps.call_first("extract_tags", ["python_ast"], source=src)
    assert before[0] == "python_ast"
    # a backend registered later (as the conformance helpers do) must not answer for another
    ps.pm.register(backend("late", []), name="late")
    assert ps.call_first("extract_tags", ["python_ast"], source=src) == before
    # and a wrapper registered later wraps the calls made from then on
    ps.pm.register(OldStyleNoReferences(), name="norefs")
    _, tags = ps.call_first("extract_tags", ["python_ast"], source=src)
    assert names(tags, REF) == [] and names(tags) == ["internal_helper", "public_api"]


def test_a_wrapper_of_prepare_batch_that_raises_is_logged_as_its_own_and_the_batch_goes_on(
    tmp_path, caplog
):
    def prepare_batch(sources):
        yield
        raise RuntimeError("prepare wrapper broke")

    calls: list[str] = []
    breaker = SimpleNamespace(prepare_batch=hookimpl(wrapper=True)(prepare_batch))
    ps = plugin_set(("zz", backend("zz", calls)), ("breaker", breaker))
    root = write_tree(tmp_path / "zz", {"x.zz": "zz\n"})
    out = extract_batch(ps, root, [FileEntry("x.zz", 3, 0)])
    assert calls == ["zz.prepare_batch", "zz.extract_tags"]
    assert [(ex.plugin, names(ex.tags)) for ex in out] == [("zz", ["zz"])]
    assert "zz: prepare_batch failed (in a wrapper of breaker): RuntimeError" in caplog.text
