import logging
import os
import sys
import types
from pathlib import Path

import pytest

import repomapper.extract as extract_module
from repomapper.cache import TagCache
from repomapper.discover import discover
from repomapper.extract import Extractor, content_problem, extract_source
from repomapper.hookspecs import hookimpl
from repomapper.model import DEF, REF, BackendInfo, FileSymbols, SourceFile, Tag
from repomapper.registry import PluginConfig, PluginSet


def make_plugin(name, ext, tags_fn, available=True, imports_fn=None):
    mod = types.SimpleNamespace()

    @hookimpl
    def backend_info():
        return BackendInfo(
            name,
            "1",
            (name,),
            (ext,),
            ("definitions",),
            available=available,
            detail="" if available else "install the frobnicator",
        )

    @hookimpl
    def extract_tags(source):
        return tags_fn(source) if source.path.endswith(ext) else None

    mod.backend_info = backend_info
    mod.extract_tags = extract_tags
    if imports_fn:

        @hookimpl
        def extract_imports(source):
            return imports_fn(source)

        mod.extract_imports = extract_imports
    return mod


def plugin_set(*extra):
    return PluginSet(PluginConfig(load_entry_points=False, extra=tuple(extra)))


def test_binary_and_minified_are_recognised():
    assert content_problem("a.py", b"abc\0def").code == "binary"
    assert content_problem("lib/app.min.js", b"x").code == "minified"
    assert content_problem("bundle.js", b"x" * 70000).code == "minified"
    assert content_problem("ok.js", b"function f() {}\n" * 1000) is None


def test_no_backend_and_unavailable_backend_are_reported():
    ps = plugin_set(("off", make_plugin("off", ".zz", lambda s: [], available=False)))
    ex = extract_source(ps, SourceFile.from_text("x.unknownext", "hi"))
    assert ex.plugin is None and [d.code for d in ex.diagnostics] == ["no_backend"]
    ex = extract_source(ps, SourceFile.from_text("x.zz", "hi"))
    assert ex.plugin is None and ex.diagnostics[0].code == "backend_unavailable"
    assert "install the frobnicator" in ex.diagnostics[0].message


def test_crashing_backend_is_a_diagnostic_and_the_next_backend_answers():
    def boom(source):
        raise ZeroDivisionError("division by zero")

    def ok(source):
        return [Tag(source.path, 1, 1, "thing", DEF, "function")]

    # registered later = asked first
    ps = plugin_set(
        ("fallback", make_plugin("fallback", ".zz", ok)),
        ("crashy", make_plugin("crashy", ".zz", boom)),
    )
    ex = extract_source(ps, SourceFile.from_text("a.zz", "thing\n"))
    assert ex.plugin == "fallback"
    assert [t.name for t in ex.tags if t.kind == DEF] == ["thing"]
    assert any(
        d.code == "backend_error" and "ZeroDivisionError" in d.message for d in ex.diagnostics
    )


def test_backend_warnings_become_diagnostics():
    def warn(source):
        logging.getLogger("thirdparty").warning(
            "%s: odd construct", source.path, extra={"code": "parse_error"}
        )
        return []

    ps = plugin_set(("warner", make_plugin("warner", ".zz", warn)))
    ex = extract_source(ps, SourceFile.from_text("a.zz", ""))
    assert [(d.code, d.message, d.path) for d in ex.diagnostics] == [
        ("parse_error", "odd construct", "a.zz")
    ]


def test_definitions_without_references_are_backfilled_from_tokens():
    def defs_only(source):
        return [Tag(source.path, 1, 3, "main", DEF, "function")]

    ps = plugin_set(("c_like", make_plugin("c_like", ".c", defs_only)))
    ex = extract_source(ps, SourceFile.from_text("a.c", "int main() {\n  helper_call(x);\n}\n"))
    refs = {(t.name, t.start_line) for t in ex.tags if t.kind == REF}
    assert ("helper_call", 2) in refs


def test_python_syntax_error_still_lists_the_file_with_a_reason(make_tree):
    root = make_tree({"bad.py": "def (:\n", "good.py": "def ok():\n    pass\n"})
    ps = plugin_set()
    d = discover(root, use_git=False)
    result = Extractor(ps, TagCache(), jobs=1).run(root, d.files, full=True)
    assert [t.name for t in result["good.py"].tags] == ["ok"]
    assert result["bad.py"].plugin == "python_ast"
    assert [d.code for d in result["bad.py"].diagnostics] == ["parse_error"]


def test_cache_hit_skips_extraction_and_changes_invalidate(make_tree):
    root = make_tree({"a.py": "def one():\n    pass\n", "b.py": "def two():\n    pass\n"})
    ps = plugin_set()
    cache = TagCache()
    ex = Extractor(ps, cache, jobs=1)
    first = ex.run(root, discover(root, use_git=False).files, full=True)
    assert ex.stats == {"cached": 0, "extracted": 2}
    second = ex.run(root, discover(root, use_git=False).files, full=True)
    assert ex.stats == {"cached": 2, "extracted": 0}
    assert first == second
    (root / "a.py").write_text("def one_changed():\n    pass\n")
    third = ex.run(root, discover(root, use_git=False).files, full=True)
    assert ex.stats == {"cached": 1, "extracted": 1}
    assert [t.name for t in third["a.py"].tags] == ["one_changed"]


def test_a_file_list_s_keys_are_made_once_and_read_in_its_order(make_tree):
    """A call asks for its file list's keys at several steps (the map's digest, the stored
    state's check, the graph's context, the summaries): one pass over the list, a large
    tree's 78,000 files, serves them all while the list is the same."""
    root = make_tree({"b.py": "x = 1\n", "a.py": "y = 2\n"})
    entries = discover(root, use_git=False).files
    ex = Extractor(plugin_set(), TagCache(), jobs=1)
    ex.prepare(root, entries)
    keyed = ex.keyed(entries)
    assert list(keyed) == [e.path for e in entries] == ["a.py", "b.py"]
    assert keyed == {e.path: ex.key(e) for e in entries} and keyed["a.py"].digest
    assert ex.keyed(entries) is keyed  # the same list: not made again
    assert ex.keyed(list(entries)) is not keyed  # another list (it may differ): made again
    twice = [*entries, entries[0]]  # a path listed twice keeps one key per entry
    assert ex.keys_of(twice) == [ex.key(e) for e in twice]
    assert ex.keys_of(entries) == list(keyed.values())


@pytest.mark.skipif(sys.platform == "win32", reason="fork start method")
def test_parallel_extraction_equals_serial(make_tree):
    files = {f"pkg/m{i}.py": f"def f{i}():\n    return g{i + 1}()\n" for i in range(150)}
    root = make_tree(files)
    entries = discover(root, use_git=False).files
    serial = Extractor(plugin_set(), TagCache(), jobs=1).run(root, entries, full=True)
    parallel = Extractor(plugin_set(), TagCache(), jobs=2).run(root, entries, full=True)
    assert serial == parallel
    summary = Extractor(plugin_set(), TagCache(), jobs=2).run(root, entries)
    assert summary == {p: FileSymbols.from_extraction(ex) for p, ex in serial.items()}
    assert list(serial) == sorted(files)


def _refusing(monkeypatch, name: str) -> None:
    """Reading ``name`` fails as a file without read permission does (the tests run as any
    user, root included, which reads every file whatever its mode)."""
    import builtins

    import repomapper.cache as cache_module
    import repomapper.extract as extract_module

    real_open, real_read = builtins.open, Path.read_bytes

    def refuse_open(file, *args, **kwargs):
        if str(file).endswith(name):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    def refuse_read(self):
        if self.name == name:
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(cache_module, "open", refuse_open, raising=False)
    monkeypatch.setattr(extract_module, "open", refuse_open, raising=False)
    monkeypatch.setattr(Path, "read_bytes", refuse_read)


def test_a_cached_file_made_unreadable_is_not_served_and_unreadable_is_not_cached(
    tmp_path, monkeypatch
):
    from repomapper import RepoMap

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def alpha_function():\n    pass\n")
    (root / "b.py").write_text("def beta_function():\n    alpha_function()\n")
    cache = tmp_path / "cache"
    monkeypatch.setattr("repomapper.extract.RACY_NS", 0)  # the files' stats vouch at once
    monkeypatch.setattr("repomapper.memo.RACY_NS", 0)
    first = RepoMap(root, 500, cache_dir=cache).map()
    assert "alpha_function" in first.map
    # a permission change keeps the mtime and size: the map is not replayed, nor the row served
    os.chmod(root / "a.py", 0o200)
    _refusing(monkeypatch, "a.py")
    locked = RepoMap(root, 500, cache_dir=cache).map()
    assert "alpha_function" not in locked.map
    assert any(
        d.code == "unreadable" and (d.path == "a.py" or "a.py" in d.paths)
        for d in locked.diagnostics
    )
    monkeypatch.undo()  # readable again, same mtime and size: extracted again, not "unreadable"
    os.chmod(root / "a.py", 0o644)
    again = RepoMap(root, 500, cache_dir=cache).map()
    assert "alpha_function" in again.map
    assert not any(d.code == "unreadable" for d in again.diagnostics)


def test_a_file_whose_inode_did_not_change_is_not_read_again(tmp_path, monkeypatch):
    """A remembered digest stands for the content and for the read that took it: a file whose
    stat, ctime included, is unchanged is neither read nor checked again; another reader
    (other user or groups) reads it again."""
    from repomapper.cache import open_cache
    from repomapper.extract import Extractor

    root = tmp_path / "repo"
    root.mkdir()
    for name in ("a.py", "b.py"):
        (root / name).write_text(f"def {name[0]}_function():\n    pass\n")
    monkeypatch.setattr("repomapper.extract.RACY_NS", 0)
    entries = discover(root, use_git=False).files
    assert all(e.ctime_ns for e in entries)
    cache = open_cache(root, tmp_path / "cache")
    Extractor(plugin_set(), cache, jobs=1).prepare(root, entries)
    read: list[str] = []
    real = extract_module._digests
    monkeypatch.setattr(
        extract_module,
        "_digests",
        lambda r, es, blobs: (read.extend(e.path for e in es), real(r, es, blobs))[1],
    )

    def no_access(*args, **kwargs):
        raise AssertionError("a file whose inode did not change was checked again")

    with monkeypatch.context() as m:
        m.setattr(os, "access", no_access)
        Extractor(plugin_set(), cache, jobs=1).prepare(root, entries)
    assert read == []
    os.chmod(root / "a.py", 0o600)  # the inode changed: read again
    again = discover(root, use_git=False).files
    Extractor(plugin_set(), cache, jobs=1).prepare(root, again)
    assert read == ["a.py"]
    monkeypatch.setattr(extract_module, "reader", lambda: "another reader")
    Extractor(plugin_set(), cache, jobs=1).prepare(root, again)
    assert read == ["a.py", "a.py", "b.py"]


def test_a_permission_changed_in_the_tick_its_digest_was_taken_is_checked(tmp_path, monkeypatch):
    """A digest taken within ``RACY_NS`` of the file's ctime does not vouch for who may read
    it (the inode may change again within the same tick): the read permission is checked, and
    a file that fails it is read, which fails as a miss would."""
    import time

    from repomapper.cache import open_cache
    from repomapper.extract import Extractor

    root = tmp_path / "repo"
    root.mkdir()
    hour_ago = time.time_ns() - 3600 * 10**9
    for name in ("a.py", "b.py"):
        (root / name).write_text(f"def {name[0]}_function():\n    pass\n")
        os.utime(root / name, ns=(hour_ago, hour_ago))  # an old mtime, a ctime of now
    entries = discover(root, use_git=False).files
    cache = open_cache(root, tmp_path / "cache")
    Extractor(plugin_set(), cache, jobs=1).prepare(root, entries)
    real_access = os.access
    monkeypatch.setattr(
        os,
        "access",
        lambda path, mode, *a, **k: not str(path).endswith("a.py") and real_access(path, mode),
    )
    _refusing(monkeypatch, "a.py")
    extractor = Extractor(plugin_set(), cache, jobs=1)
    extractor.prepare(root, entries)
    keys = {e.path: extractor.key(e) for e in entries}
    assert keys["a.py"].digest == "" and keys["b.py"].digest


def test_many_files_are_hashed_on_threads_to_the_same_digests(tmp_path):
    from repomapper.cache import content_digest
    from repomapper.discover import FileEntry
    from repomapper.extract import THREADED_HASHING, _digests

    entries = []
    for i in range(THREADED_HASHING + 40):
        (tmp_path / f"f{i}.py").write_text(f"x = {i}\n" * (i % 7 + 1))
        entries.append(FileEntry(f"f{i}.py", 0, 0))
    entries.append(FileEntry("gone.py", 0, 0))  # deleted since it was listed: no digest
    got, learned = _digests(tmp_path, entries, {})
    assert got == {e: content_digest(tmp_path / e.path) for e in entries} and learned == []
    assert got[entries[-1]] == "" and len(set(got.values())) == len(entries)
