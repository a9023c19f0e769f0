"""The live index and the path rules of the tool server (no MCP SDK needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repomapper.repomap import RepoMap
from repomapper.serve.index import LiveIndex
from repomapper.serve.paths import ToolError, resolve_root, safe_relative
from repomapper.serve.service import Service, ServiceOptions


def bump(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(
        path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000)
    )  # a distinct mtime, whatever the clock


def test_only_changed_files_are_extracted_again(pyrepo):
    idx = LiveIndex(RepoMap(pyrepo))
    first = idx.refresh()
    assert first.how == "discover" and first.changed == first.checked == 7 and idx.version == 1
    assert "Catalog" in idx.defs and idx.refresh().changed == 0 and idx.version == 1
    bump(pyrepo / "shop" / "money.py", "def only_this(): pass\n")
    stats = idx.refresh()
    assert (stats.changed, stats.added, stats.removed) == (1, 0, 0) and idx.rm.last_stats[
        "extracted"
    ] == 1
    assert list(idx.defs["only_this"]) == ["shop/money.py"] and "apply_discount" not in idx.defs
    assert "shop/money.py" not in idx.refs.get("format_price", {})
    (pyrepo / "shop" / "cli.py").unlink()
    assert idx.refresh().removed == 1 and "shop/cli.py" not in idx.files


def test_with_a_watcher_edits_are_stat_checked_and_events_relist(pyrepo):
    idx = LiveIndex(RepoMap(pyrepo))
    idx.watching = True
    assert idx.refresh().how == "discover"  # dirty at start
    assert idx.refresh().how == "skip"
    bump(pyrepo / "shop" / "money.py", "def edited(): pass\n")
    stats = idx.refresh()
    assert stats.how == "stat" and stats.changed == 1 and "edited" in idx.defs
    (pyrepo / "new.py").write_text("def added(): pass\n")
    assert idx.refresh().how == "skip" and "added" not in idx.defs  # no event yet
    idx.mark_dirty()
    assert idx.refresh().added == 1 and "added" in idx.defs


def test_import_edges_follow_changes(pyrepo):
    idx = LiveIndex(RepoMap(pyrepo))
    idx.refresh()
    forward, backward = idx.import_edges()
    assert (
        "shop/money.py" in forward["shop/orders.py"]
        and "shop/orders.py" in backward["shop/money.py"]
    )
    bump(pyrepo / "shop" / "orders.py", "x = 1\n")
    idx.refresh()
    assert "shop/orders.py" not in idx.import_edges()[0]

    def fresh():
        other = LiveIndex(RepoMap(pyrepo, use_cache=False))
        other.refresh()
        return other.import_edges()

    assert idx.import_edges() == fresh()  # updated per changed importer, equal to resolving all
    index = idx._repo_index()
    bump(pyrepo / "shop" / "catalog.py", "from shop.orders import *\nfrom shop import money\n")
    idx.refresh()
    forward, backward = idx.import_edges()
    assert "shop/orders.py" in forward["shop/catalog.py"]
    assert "shop/catalog.py" in backward["shop/orders.py"]
    assert (forward, backward) == fresh() and idx._repo_index() is index
    (pyrepo / "shop" / "extra.py").write_text("import shop.catalog\n")  # a new file: all again
    idx.mark_dirty()
    idx.refresh()
    assert idx.import_edges() == fresh() and idx._repo_index() is not index


@pytest.mark.parametrize(
    "path,fragment",
    [
        ("../x.py", "'..'"),
        ("a/../../x.py", "'..'"),
        ("/etc/passwd", "absolute"),
        ("C:/x", "absolute"),
        ("\\\\server\\x", "absolute"),
        ("", "required"),
        (".", "names the root"),
        ("a\nb", "control"),
        (3, "required"),
        ("x" * 5000, "too long"),
    ],
)
def test_paths_never_lead_out(tmp_path, path, fragment):
    with pytest.raises(ToolError) as info:
        safe_relative(tmp_path.resolve(), path)
    assert info.value.code == "invalid_input" and fragment in info.value.message


def test_symlinks_out_of_the_root_are_refused(tmp_path):
    root = (tmp_path / "root").resolve()
    (root / "pkg").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("s")
    (root / "out").symlink_to(tmp_path / "secret.txt")
    (root / "pkg" / "a.py").write_text("")
    (root / "in").symlink_to(root / "pkg" / "a.py")
    assert safe_relative(root, "./pkg//a.py") == "pkg/a.py" and safe_relative(root, "in") == "in"
    with pytest.raises(ToolError, match="symlink"):
        safe_relative(root, "out")


def test_roots(tmp_path):
    inner = tmp_path / "inner"
    inner.mkdir()
    root = tmp_path.resolve()
    assert resolve_root(None, root) == root and resolve_root(str(inner), root) == inner.resolve()
    with pytest.raises(ToolError, match="outside this server's root"):
        resolve_root(str(tmp_path.parent), root)
    with pytest.raises(ToolError, match="clone_path is required"):
        resolve_root(None, None)


def test_service_internal_errors_are_error_results(pyrepo, monkeypatch):
    service = Service(pyrepo, ServiceOptions(watch=False))
    monkeypatch.setattr(Service, "find_symbol", lambda *a, **k: 1 / 0)
    r = service.call("find_symbol", {"name": "x"})
    assert (
        r.is_error
        and r.data["error"]["code"] == "internal"
        and "ZeroDivisionError" in r.data["error"]["message"]
    )
    r = service.call("file_outline", {"path": "README.md"})
    assert not r.is_error and r.data["total"] == 0 and "no_backend" in r.data["message"]
    service.close()


def test_calls_from_different_threads_keep_the_disk_cache(pyrepo, tmp_path):
    """The MCP SDK runs tool calls in worker threads: the service's lock serialises them, and
    the cache must not fall back to memory because another thread asks."""
    import threading

    svc = Service(pyrepo, ServiceOptions(cache_dir=tmp_path / "c", watch=False))
    answers = []
    first_done, second_done = threading.Event(), threading.Event()

    def first():
        answers.append(svc.call("repo_map", {"token_budget": 300}))
        first_done.set()
        second_done.wait(30)  # alive meanwhile: the second thread cannot reuse its identity

    def second():
        first_done.wait(30)
        answers.append(svc.call("repo_map", {"token_budget": 301}))
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = {d["code"] for a in answers for d in a.data.get("diagnostics", [])}
    assert len(answers) == 2 and all(a.data["outcome"] == "ok" for a in answers)
    assert "cache_unavailable" not in codes
    svc.close()


def test_a_replayed_map_is_followed_by_a_background_warm_up(pyrepo, tmp_path):
    import time

    Service(pyrepo, ServiceOptions(cache_dir=tmp_path / "c", watch=False)).call(
        "repo_map", {"token_budget": 300}
    )  # fills the cache, so the next server replays the map
    svc = Service(pyrepo, ServiceOptions(cache_dir=tmp_path / "c", watch=False))
    first = svc.call("repo_map", {"token_budget": 300})
    assert first.data["outcome"] == "ok"
    rm = next(iter(svc._repomaps.values()))
    deadline = time.monotonic() + 30
    while not rm.warm and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rm.warm
    money = pyrepo / "shop" / "money.py"
    money.write_text(money.read_text() + "\n\ndef warmed_then_edited():\n    pass\n")
    after = svc.call("repo_map", {"token_budget": 2000, "mentioned_idents": ["warmed_then_edited"]})
    assert "warmed_then_edited" in after.data["map"]
    assert rm._graph.how.startswith("updated")
    svc.close()


def test_the_live_index_shares_the_rankings_summaries(pyrepo, tmp_path):
    rm = RepoMap(pyrepo, cache_dir=tmp_path / "c")
    ranked = rm.rank()
    idx = LiveIndex(rm)
    idx.refresh()
    assert idx.files and all(idx.files[p] is ranked.mapped[p] for p in ranked.mapped)
    assert rm.last_stats["reused"] == len(idx.entries) > len(ranked.mapped)  # README too
    money = pyrepo / "shop" / "money.py"
    bump(money, money.read_text() + "\ndef shared_after_edit():\n    pass\n")
    idx.refresh()  # the edited file is extracted again, not taken from the older ranking
    assert "shared_after_edit" in {t.name for t in idx.files["shop/money.py"].definitions}


def test_maps_kept_for_later_replay_and_are_stored_by_save_maps(pyrepo, tmp_path):
    cache = tmp_path / "cache"
    rm = RepoMap(pyrepo, cache_dir=cache)
    rm.memo_later = True
    first = rm.map()
    assert rm._unsaved and rm.map() == first
    assert rm.last_stats.get("memoised") == 1  # replayed from what is kept, not mapped again
    other = RepoMap(pyrepo, cache_dir=cache)
    other.memo_later = True  # does not store either
    other.map()
    assert other.last_stats.get("memoised") is None  # nothing stored yet
    rm.save_maps()
    assert not rm._unsaved
    again = RepoMap(pyrepo, cache_dir=cache)
    assert again.map() == first and again.last_stats.get("memoised") == 1
    for r in (rm, other, again):
        r.close()


def test_the_service_stores_a_map_after_answering(pyrepo, tmp_path):
    import time

    cache = tmp_path / "cache"
    service = Service(pyrepo, ServiceOptions(cache_dir=str(cache), warm_up=False, watch=False))
    try:
        assert not service.call("repo_map", {"token_budget": 700}).is_error
        deadline = time.monotonic() + 10
        while any(rm._unsaved for rm in service._repomaps.values()):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    finally:
        service.close()
    replayed = RepoMap(pyrepo, 700, cache_dir=cache)
    replayed.map()
    assert replayed.last_stats.get("memoised") == 1
    replayed.close()


def test_warm_up_leaves_maps_as_a_fresh_repomap_makes_them(pyrepo, tmp_path):
    """warm_up builds the state, primes the import tables, starts the worker and rehearses an
    edit on an equal copy of one file: none of it may change what a map says."""
    rm = RepoMap(pyrepo, cache_dir=tmp_path / "a")
    rm.warm_up()
    assert rm.warm and rm._graph.how.startswith("updated")
    assert rm.map().map == RepoMap(pyrepo, use_cache=False).map().map
    assert rm.last_stats.get("memoised") is None  # ranked from the rehearsed state
    bump(pyrepo / "shop" / "money.py", "def after_warm_up(): pass\n")
    after = rm.map(mentioned_idents=["after_warm_up"])
    assert rm._graph.how == "updated (1 changed)"
    fresh = RepoMap(pyrepo, use_cache=False).map(mentioned_idents=["after_warm_up"])
    assert after.map == fresh.map and "after_warm_up" in after.map
    rm.close()
