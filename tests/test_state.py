"""The repository state: every output reads one per root, and nothing of it outlives close()."""

from __future__ import annotations

import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from repomapper.repomap import RepoMap
from repomapper.serve import service as service_module
from repomapper.serve.service import Service, ServiceOptions
from repomapper.state import RepositoryState, StateOptions
from tests.conftest import FIXTURES


def open_fds() -> set[str]:
    fds = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            fds.add(os.readlink(f"/proc/self/fd/{fd}"))
        except OSError:
            continue
    return fds


def children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[1] == me and fields[0] != "Z":
            found.add(int(pid))
    return found


def settle(check, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_nothing_outlives_a_closed_state(pyrepo, tmp_path):
    pytest.importorskip("watchfiles")
    # a first state, closed: what the process keeps for good (multiprocessing's shared-memory
    # arena, the tokenizer's tables) is then in the baseline
    with RepoMap(pyrepo, cache_dir=tmp_path / "first", jobs=1) as first:
        first.warm_up()
    threads, procs, fds = threading.active_count(), children(), open_fds()
    state = RepositoryState(pyrepo, StateOptions(cache_dir=tmp_path / "c", jobs=1))
    assert state.watch() and state.watcher is not None and state.watcher.ready.wait(10)
    rm = RepoMap(pyrepo, state=state)
    rm.warm_up()  # keeps an extraction worker, loads the tokenizer, opens the cache
    money = pyrepo / "shop" / "money.py"
    money.write_text(money.read_text() + "\ndef more():\n    pass\n")
    assert "more" in rm.map(mentioned_idents=["more"]).map
    assert children() - procs, "the kept extraction worker should be running"
    assert any(p.endswith(".sqlite") or "tags" in p for p in open_fds() - fds)
    rm.close()  # a RepoMap over a shared state leaves it open
    assert not state.closed
    state.close()
    assert settle(lambda: threading.active_count() <= threads)
    assert settle(lambda: not (children() - procs))
    leftover = {p for p in open_fds() - fds if not p.startswith(("pipe:", "anon_inode:"))}
    assert not leftover


def test_the_service_closes_what_it_evicts_and_everything_on_close(tmp_path, monkeypatch):
    roots = []
    for name in ("one", "two"):
        shutil.copytree(FIXTURES / "pyrepo", tmp_path / name)
        roots.append((tmp_path / name).resolve())
    monkeypatch.setattr(service_module, "MAX_STATES", 1)
    svc = Service(None, ServiceOptions(cache_dir=str(tmp_path / "c"), warm_up=False))
    closed: list[Path] = []
    real = RepositoryState.close

    def close(self):
        closed.append(self.root)
        real(self)

    monkeypatch.setattr(RepositoryState, "close", close)
    for root in roots:
        assert not svc.call("find_symbol", {"clone_path": str(root), "name": "Catalog"}).is_error
        pack = svc.call(
            "context_pack",
            {"clone_path": str(root), "task_id": "t1", "task": "price of the basket"},
        )
        assert not pack.is_error, pack.data
    assert closed == [roots[0]]  # evicted with its packer
    svc.close()
    assert closed == roots and not svc._states and not svc._packers


@pytest.mark.parametrize("watch", [True, False])
def test_a_file_made_between_two_calls_is_there_at_once(pyrepo, tmp_path, watch):
    if watch:
        pytest.importorskip("watchfiles")
    svc = Service(pyrepo, ServiceOptions(cache_dir=str(tmp_path / "c"), watch=watch))
    try:
        first = svc.call("find_symbol", {"name": "Catalog"})
        assert not first.is_error and first.data["total"] == 1
        if watch:
            (state,) = svc._states.values()
            assert state.watcher is not None and state.watcher.ready.wait(10)
            svc.call("find_symbol", {"name": "Catalog"})  # a listing taken with the watch in place
        (pyrepo / "shop" / "fresh.py").write_text("def written_just_now():\n    pass\n")
        found = svc.call("find_symbol", {"name": "written_just_now"})
        assert found.data["total"] == 1 and found.data["results"][0]["path"] == "shop/fresh.py"
        (pyrepo / "shop" / "fresh.py").rename(pyrepo / "shop" / "moved.py")
        found = svc.call("find_symbol", {"name": "written_just_now"})
        assert [r["path"] for r in found.data["results"]] == ["shop/moved.py"]
        (pyrepo / "shop" / "moved.py").unlink()
        gone = svc.call("find_symbol", {"name": "written_just_now"})
        assert gone.data["match"] != "exact"
    finally:
        svc.close()


def test_one_state_serves_maps_with_other_globs(pyrepo, tmp_path):
    svc = Service(pyrepo, ServiceOptions(cache_dir=str(tmp_path / "c"), watch=False))
    try:
        whole = svc.call("repo_map", {"token_budget": 800})
        shop = svc.call("repo_map", {"token_budget": 800, "include_globs": ["shop/**"]})
        assert len(svc._states) == 1
        assert "tests/" in whole.data["map"] and "tests/" not in shop.data["map"]
        alone = RepoMap(pyrepo, 800, include=["shop/**"], use_cache=False).map()
        assert shop.data["map"] == alone.map
    finally:
        svc.close()


@pytest.mark.parametrize("gitignore", [None, True])
def test_every_surface_follows_the_same_ignore_convention(tmp_path, gitignore):
    """An unpacked tarball whose .gitignore was written for another repository (`/*`): mapped
    outside git unless asked; when asked, empty with the rule named, on every surface."""
    from click.testing import CliRunner

    from repomapper.cli import main
    from repomapper.contract import MapOptions, run_map

    root = tmp_path / "unpacked"
    (root / "src").mkdir(parents=True)
    (root / "src" / "core.py").write_text("def kernel_entry():\n    pass\n")
    (root / ".gitignore").write_text("/*\n!/debian/\n")
    args = [] if gitignore is None else ["--gitignore"]
    cli = CliRunner().invoke(main, ["map", str(root), "--no-cache", *args])
    library = RepoMap(root, use_cache=False, gitignore=gitignore).map()
    envelope = run_map({"clone_path": str(root)}, MapOptions(use_cache=False, gitignore=gitignore))
    svc = Service(root, ServiceOptions(use_cache=False, watch=False, gitignore=gitignore))
    try:
        mcp = svc.call("repo_map", {}).data
    finally:
        svc.close()
    if gitignore is None:
        assert cli.exit_code == 0 and "kernel_entry" in cli.stdout
        assert "kernel_entry" in library.map
        assert envelope.outcome == "ok" and mcp["outcome"] == "ok"
        return
    assert cli.exit_code == 1 and ".gitignore:1 '/*'" in cli.stderr
    assert not library.map
    assert any(".gitignore:1 '/*'" in d.message for d in library.diagnostics)
    assert envelope.outcome == "empty" and mcp["outcome"] == "empty"
    assert any(".gitignore:1" in d["message"] for d in mcp["diagnostics"])


def test_a_dropped_state_is_freed_at_once(pyrepo, tmp_path):
    """No reference cycle keeps a state (and its kept worker) alive until a later collection:
    a finalizer run by the cycle collector in the middle of unrelated work is a hazard."""
    import gc
    import weakref

    gc.disable()
    try:
        rm = RepoMap(pyrepo, cache_dir=tmp_path / "c")
        rm.warm_up()
        ref = weakref.ref(rm.state)
        del rm
        assert ref() is None
    finally:
        gc.enable()


def test_the_tools_do_not_rank_again_what_a_map_ranked(pyrepo, tmp_path):
    """The tools read the symbol table and the import edges, which do not depend on the chat
    files and mentions a map was ranked with: a tool call after a map keeps its graph state."""
    from repomapper.settings import ALL_FILES

    svc = Service(pyrepo, ServiceOptions(cache_dir=str(tmp_path / "c"), watch=False))
    try:
        svc.call("repo_map", {"token_budget": 500, "mentioned_idents": ["Catalog"]})
        (state,) = svc._states.values()
        ranked = state.graphs.get(ALL_FILES)
        assert ranked is not None and "Catalog" in ranked.boosts[2]
        assert svc.call("find_symbol", {"name": "Catalog"}).data["total"] == 1
        assert state.graphs.get(ALL_FILES) is ranked
    finally:
        svc.close()


def test_a_deleted_files_summary_is_not_kept(pyrepo, tmp_path):
    rm = RepoMap(pyrepo, cache_dir=tmp_path / "c")
    try:
        rm.rank()
        assert len(rm.state.summaries) == 7
        (pyrepo / "shop" / "cli.py").unlink()
        rm.rank()
        assert len(rm.state.summaries) == 6  # a long-lived state does not grow with deletions
    finally:
        rm.close()


def test_an_unchanged_repository_is_answered_from_the_maps_kept_in_memory(
    pyrepo, tmp_path, monkeypatch
):
    """The last maps a state answered are answered again as they are, not parsed from the
    cache; an older one (past the last two) comes from the cache again, equal to the first."""
    from repomapper.stages import mapping
    from repomapper.state import repository

    parsed = []
    replay = mapping.replay
    monkeypatch.setattr(mapping, "replay", lambda *a: parsed.append(a) or replay(*a))
    rm = RepoMap(pyrepo, 600, cache_dir=str(tmp_path / "c"))
    rm.map(mentioned_idents=["Catalog"])  # (files written just now are keyed once settled)
    first = rm.map(mentioned_idents=["Catalog"])
    parsed.clear()
    assert rm.map(mentioned_idents=["Catalog"]) is first and not parsed
    for n in range(repository.KEPT_ANSWERS):
        rm.map(mentioned_idents=[f"other{n}"])
    parsed.clear()
    again = rm.map(mentioned_idents=["Catalog"])
    assert len(parsed) == 1 and again is not first and again == first
    rm.close()


def test_a_service_answering_without_a_pause_stores_no_map_during_its_calls(
    pyrepo, tmp_path, monkeypatch
):
    """Storing a map costs the call that does it: calls without a pause store nothing; the
    newest maps wait (the oldest beyond MAX_UNSAVED are let go) and are stored on close."""
    from repomapper import memo as memo_module
    from repomapper.stages import mapping

    monkeypatch.setattr(service_module, "SAVE_DELAY", 3600.0)
    stored: list[str] = []
    real = memo_module.remember
    monkeypatch.setattr(
        memo_module,
        "remember",
        lambda cache, digest, *a: stored.append(digest) or real(cache, digest, *a),
    )
    svc = Service(pyrepo, ServiceOptions(cache_dir=str(tmp_path / "c"), watch=False))
    svc._saver._most = 3600.0  # (a slow machine must not reach the bound during the calls)
    try:
        for n in range(mapping.MAX_UNSAVED + 3):
            assert not svc.call(
                "repo_map", {"token_budget": 500, "mentioned_idents": [f"n{n}"]}
            ).is_error
        (state,) = svc._states.values()
        assert stored == [] and len(state.unsaved_maps) == mapping.MAX_UNSAVED
        newest = list(state.unsaved_maps)
    finally:
        svc.close()
    assert stored == newest


def test_the_service_stores_an_answered_map_after_the_answer_and_on_close(
    pyrepo, tmp_path, monkeypatch
):
    """The map a call answered is stored later (SAVE_DELAY after the answer), never lost: a
    service closed before then stores it on close."""
    monkeypatch.setattr(service_module, "SAVE_DELAY", 3600.0)
    svc = Service(pyrepo, ServiceOptions(cache_dir=str(tmp_path / "c"), watch=False))
    try:
        assert not svc.call("repo_map", {"token_budget": 500}).is_error
        (state,) = svc._states.values()
        time.sleep(0.5)  # (a store started at once would be done by now)
        assert len(state.unsaved_maps) == 1  # answered, not stored yet
    finally:
        svc.close()
    assert not state.unsaved_maps
    monkeypatch.setattr(service_module, "SAVE_DELAY", 0.0)
    svc = Service(pyrepo, ServiceOptions(cache_dir=str(tmp_path / "c"), watch=False))
    try:  # the map stored on close answers a new service's first call from the cache
        assert not svc.call("repo_map", {"token_budget": 500}).is_error
        (state,) = svc._states.values()
        assert state.last_stats.get("memoised") == 1
    finally:
        svc.close()


def test_priming_the_import_tables_asks_few_files_for_their_imports(tmp_path, monkeypatch):
    """Warming up resolves one file's imports per backend; a loaded summary reads its imports
    from the cache when asked, so the files asked are the first with imports of each backend,
    and at most PRIME_TRIES of a backend whose files import nothing (every file was asked)."""
    from types import SimpleNamespace

    from repomapper.state import repository

    asked: list[str] = []

    class Imports:
        def __init__(self, path: str, some: bool):
            self.path, self.some = path, some

        def __len__(self) -> int:
            asked.append(self.path)
            return int(self.some)

    files = {}
    for i in range(200):  # a backend whose files import nothing
        files[f"a/{i:03}.cfg"] = SimpleNamespace(
            plugin="ctags", imports=Imports(f"a/{i:03}", False)
        )
    for i in range(200):  # one whose third file imports something
        files[f"b/{i:03}.c"] = SimpleNamespace(plugin="c", imports=Imports(f"b/{i:03}", i >= 2))
    files["c/x.txt"] = SimpleNamespace(plugin=None, imports=Imports("c/x", True))
    resolved: list[str] = []
    state = RepositoryState(tmp_path, StateOptions(use_cache=False))
    monkeypatch.setattr(state, "file_imports", lambda path, fs, index: resolved.append(path))
    state.prime_imports(SimpleNamespace(files=files, index=None))
    state.close()
    assert resolved == ["b/002.c"]
    assert len([p for p in asked if p.startswith("a/")]) == repository.PRIME_TRIES
    assert [p for p in asked if p.startswith("b/")] == ["b/000", "b/001", "b/002"]
    assert "c/x" not in asked  # a file no backend maps is never asked
