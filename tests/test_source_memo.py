"""A file's memo (issue 15): both hooks get the same ``SourceFile``, the memo builds once per
file and key and goes with the file, and no cache of any kind is what conformance times."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import types
from pathlib import Path

import pytest

from repomapper.conformance import timing
from repomapper.conformance.properties import check_batch_independent
from repomapper.conformance.subject import Subject
from repomapper.extract import extract_source
from repomapper.hookspecs import hookimpl
from repomapper.isolation.limits import Limits
from repomapper.model import DEF, BackendInfo, Import, SourceFile, Tag
from repomapper.registry import PluginConfig, PluginSet
from repomapper.repomap import RepoMap
from tests.conftest import write_tree

PROBE = ("probe", "tests.memo_probe_plugin")


# -- the memo itself -------------------------------------------------------------------------------
def test_memo_builds_once_per_key_and_not_after_a_failure():
    source = SourceFile.from_text("a.py", "x = 1\n")
    built: list[str] = []
    assert source.memo("k", lambda: built.append("k") or 1) == 1
    assert source.memo("k", lambda: built.append("k again") or 2) == 1
    assert source.memo(("other", "k"), lambda: built.append("other") or 3) == 3
    assert built == ["k", "other"]

    def boom():
        raise ValueError("no")

    with pytest.raises(ValueError):
        source.memo("bad", boom)
    assert source.memo("bad", lambda: 4) == 4  # a failure is not remembered
    source.drop_memo()
    assert source.memo("k", lambda: 5) == 5


def test_the_memo_is_no_part_of_equality_hash_repr_or_pickling():
    a = SourceFile.from_text("a.py", "x = 1\n")
    b = SourceFile.from_text("a.py", "x = 1\n")
    a.memo("tree", lambda: object())  # what a parse tree is to pickle: not picklable
    assert a == b and hash(a) == hash(b) and repr(a) == repr(b)
    assert "tree" not in repr(a)
    for twin in (pickle.loads(pickle.dumps(a)), copy.copy(a), copy.deepcopy(a)):
        assert twin == a and twin.memo("tree", lambda: "fresh") == "fresh"
    assert dataclasses.replace(a, data=b"y = 2\n").memo("tree", lambda: "new") == "new"


# -- the core hands both hooks the same object -----------------------------------------------------
def _recording_plugin(seen: list[tuple[str, int]], builds: list[str]):
    mod = types.SimpleNamespace()

    def parse(source):
        return source.memo(("rec", "parse"), lambda: builds.append(source.path) or source.text())

    @hookimpl
    def backend_info():
        return BackendInfo("rec", "1", ("rec",), (".rec",), ("definitions", "imports"))

    @hookimpl
    def prepare_batch(sources):
        for s in sources:
            seen.append(("prepare", id(s)))
            parse(s)

    @hookimpl
    def extract_tags(source):
        seen.append(("tags", id(source)))
        return [Tag(source.path, 1, 1, parse(source).split()[0], DEF, "function")]

    @hookimpl
    def extract_imports(source):
        seen.append(("imports", id(source)))
        parse(source)
        return [Import(source.path, "os", line_number=1)]

    mod.backend_info, mod.prepare_batch = backend_info, prepare_batch
    mod.extract_tags, mod.extract_imports = extract_tags, extract_imports
    return mod


def test_both_hooks_get_the_same_file_and_its_memo_goes_when_it_is_done():
    seen: list[tuple[str, int]] = []
    builds: list[str] = []
    ps = PluginSet(
        PluginConfig(load_entry_points=False, extra=(("rec", _recording_plugin(seen, builds)),))
    )
    source = SourceFile.from_text("a.rec", "thing\n")
    ex = extract_source(ps, source)
    assert [t.name for t in ex.tags] == ["thing"] and ex.imports
    assert seen == [("tags", id(source)), ("imports", id(source))]
    assert builds == ["a.rec"]  # parsed once for both hooks
    assert not source._scratch  # dropped when the file was done


def test_in_process_batches_share_the_parse_from_prepare_batch_to_both_hooks(tmp_path):
    seen: list[tuple[str, int]] = []
    builds: list[str] = []
    root = write_tree(tmp_path / "r", {"a.rec": "alpha\n", "b.rec": "beta\n"})
    ps = PluginSet(
        PluginConfig(
            load_entry_points=False,
            extra=(("rec", _recording_plugin(seen, builds)),),
            limits=Limits(isolate=False),
        )
    )
    rm = RepoMap(root, plugins=ps, use_cache=False)
    entries, _, _ = rm.collect(None)
    ex = rm.extract(entries, full=True)
    assert {p: [t.name for t in e.tags] for p, e in ex.items()} == {
        "a.rec": ["alpha"],
        "b.rec": ["beta"],
    }
    assert sorted(builds) == ["a.rec", "b.rec"]  # once per file, across all three hooks
    by_file: dict[int, list[str]] = {}
    for hook, ident in seen:
        by_file.setdefault(ident, []).append(hook)
    assert sorted(by_file.values()) == [["prepare", "tags", "imports"]] * 2


def test_in_a_supervised_worker_both_hooks_get_the_same_file(tmp_path):
    root = write_tree(tmp_path / "r", {"a.probe": "alpha\n", "b.probe": "beta gamma\n"})
    ps = PluginSet(
        PluginConfig(load_entry_points=False, modules=(PROBE,), limits=Limits(timeout=10.0))
    )
    assert ps.config.limits.isolate
    rm = RepoMap(root, plugins=ps, use_cache=False)
    entries, _, _ = rm.collect(None)
    ex = rm.extract(entries, full=True)
    for path, word in (("a.probe", "alpha"), ("b.probe", "beta")):
        assert [t.name for t in ex[path].tags] == [word]
        assert [i.source for i in ex[path].imports] == ["builds=1 same=True"]


# -- conformance times work, never a cache hit -----------------------------------------------------
class _Clock:
    """Stands in for ``time`` in the timing module: only the fake backend moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now

    def process_time(self) -> float:
        return self.now


def _cached_quadratic_plugin(clock: _Clock, key_of, calls: list[SourceFile]):
    """A backend whose work is quadratic in the lines, behind a module-level cache."""
    cache: dict = {}
    mod = types.SimpleNamespace()

    @hookimpl
    def backend_info():
        return BackendInfo("slowcache", "1", ("x",), (".sq",), ("definitions",))

    @hookimpl
    def extract_tags(source):
        calls.append(source)
        key = key_of(source)
        if key not in cache:
            clock.now += source.data.count(b"\n") ** 2 * 1e-6
            cache[key] = [Tag(source.path, 1, 1, "word", DEF, "function")]
        return cache[key]

    mod.backend_info, mod.extract_tags = backend_info, extract_tags
    return mod


@pytest.mark.parametrize(
    "key_of",
    [lambda s: (s.path, s.data), lambda s: s.data, lambda s: s.path],
    ids=["path_and_bytes", "bytes", "path"],
)
def test_linear_time_is_not_fooled_by_a_module_level_cache(monkeypatch, key_of):
    clock = _Clock()
    monkeypatch.setattr(timing, "time", clock)
    calls: list[SourceFile] = []
    plugin = _cached_quadratic_plugin(clock, key_of, calls)
    ps = PluginSet(PluginConfig(load_entry_points=False, extra=(("slowcache", plugin),)))
    message = timing.check_linear_time(Subject(ps, "slowcache"), "a.sq", b"word\n")
    assert message is not None and "super-linear" in message
    # every timed call was a new file: no object, path or content twice
    assert len({id(s) for s in calls}) == len(calls) == 18  # 3 attempts x 3 repetitions x 2
    assert len({s.path for s in calls}) == len({s.data for s in calls}) == len(calls)


def test_linear_time_passes_a_linear_backend_with_the_same_cache(monkeypatch):
    clock = _Clock()
    monkeypatch.setattr(timing, "time", clock)
    calls: list[SourceFile] = []
    plugin = _cached_quadratic_plugin(clock, lambda s: (s.path, s.data), calls)
    real = plugin.extract_tags

    @hookimpl
    def extract_tags(source):  # linear: take back all but lines x 1e-6 of what was charged
        before = clock.now
        found = real(source)
        if clock.now > before:
            clock.now = before + source.data.count(b"\n") * 1e-6
        return found

    plugin.extract_tags = extract_tags
    ps = PluginSet(PluginConfig(load_entry_points=False, extra=(("slowcache", plugin),)))
    assert timing.check_linear_time(Subject(ps, "slowcache"), "a.sq", b"word\n") is None


def test_batch_independence_compares_fresh_extractions():
    seen: list[tuple[str, int]] = []
    builds: list[str] = []
    ps = PluginSet(
        PluginConfig(load_entry_points=False, extra=(("rec", _recording_plugin(seen, builds)),))
    )
    sources = [SourceFile.from_text("a.rec", "alpha\n", Path("/nowhere"))]
    assert check_batch_independent(Subject(ps, "rec"), sources) is None
    # alone (2 files) and together (2 files): each extraction parsed its own file
    assert len(builds) == 4 and not sources[0]._scratch
