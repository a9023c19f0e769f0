"""The tools' tables (read from the repository state) and the path rules of the tool server
(no MCP SDK needed)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from repomapper.repomap import RepoMap
from repomapper.serve.paths import ToolError, resolve_root, safe_relative
from repomapper.serve.service import Service, ServiceOptions
from repomapper.settings import Selection
from repomapper.stages import current_tables


def bump(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(
        path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000)
    )  # a distinct mtime, whatever the clock


def test_only_changed_files_are_extracted_again(pyrepo):
    state = RepoMap(pyrepo).state
    tables = current_tables(state)
    assert len(tables.entries) == 7 and "Catalog" in tables.table.defines
    assert current_tables(state).table is tables.table  # nothing changed: the same tables
    bump(pyrepo / "shop" / "money.py", "def only_this(): pass\n")
    tables = current_tables(state)
    assert state.last_stats["extracted"] == 1 and state.last_stats["reused"] == 6
    assert tables.definers("only_this") == ["shop/money.py"]
    assert "apply_discount" not in tables.table.defines
    assert "shop/money.py" not in tables.references("format_price")
    (pyrepo / "shop" / "cli.py").unlink()
    assert "shop/cli.py" not in current_tables(state).files
    state.close()


def test_the_tables_of_a_selection_read_the_graph_state_its_map_built(pyrepo):
    """A map whose include glob asks for tests (ranked as asked, not below code) and the tools'
    tables of the same selection share one graph state: the tables do not rank it again."""
    (pyrepo / "tests").mkdir(exist_ok=True)
    (pyrepo / "tests" / "test_money.py").write_text(
        "from shop.money import format_price\n\n\ndef test_price():\n    format_price(1)\n"
    )
    rm = RepoMap(pyrepo, include=["tests/**", "shop/**"])
    rm.map()
    built = rm.graph_state
    assert built is not None and "tests/test_money.py" in built.asked
    tables = current_tables(rm.state, rm.selection)
    assert rm.state.graphs.get(rm.selection) is built
    assert "test_price" in tables.table.defines
    rm.close()


def test_with_a_watcher_edits_and_new_files_are_seen_at_once(pyrepo):
    pytest.importorskip("watchfiles")
    state = RepoMap(pyrepo).state
    assert state.watch() and state.watcher is not None and state.watcher.ready.wait(10)
    current_tables(state)
    bump(pyrepo / "shop" / "money.py", "def edited(): pass\n")
    assert "edited" in current_tables(state).table.defines
    (pyrepo / "new.py").write_text("def added(): pass\n")  # no pause: no event yet
    assert current_tables(state).definers("added") == ["new.py"]
    (pyrepo / "new.py").rename(pyrepo / "renamed.py")
    assert current_tables(state).definers("added") == ["renamed.py"]
    (pyrepo / "renamed.py").unlink()
    assert "added" not in current_tables(state).table.defines
    state.close()


def inverted(forward):
    """imported file -> {importer: count}, from every importer's edges."""
    out = {}
    for src, targets in forward.items():
        for dst, n in targets.items():
            out.setdefault(dst, {})[src] = n
    return out


def importers(tables):
    """Every file's importers as the tools ask for them (``importers_of``, one file at a time),
    checked against inverting every importer's edges."""
    found = {p: tables.importers_of(p) for p in tables.files}
    found = {p: v for p, v in found.items() if v}
    assert found == inverted(dict(tables.imports))
    return found


def test_import_edges_follow_changes(pyrepo):
    state = RepoMap(pyrepo).state
    tables = current_tables(state)
    forward, backward = tables.imports, importers(tables)
    assert (
        "shop/money.py" in forward["shop/orders.py"]
        and "shop/orders.py" in backward["shop/money.py"]
    )
    bump(pyrepo / "shop" / "orders.py", "x = 1\n")
    assert "shop/orders.py" not in current_tables(state).imports

    def fresh():
        other = current_tables(RepoMap(pyrepo, use_cache=False).state)
        return dict(other.imports), importers(other)

    def edges():
        t = current_tables(state)
        return dict(t.imports), importers(t)

    assert edges() == fresh()  # updated per changed importer, equal to resolving all
    index = current_tables(state).index
    bump(pyrepo / "shop" / "catalog.py", "from shop.orders import *\nfrom shop import money\n")
    forward, backward = edges()
    assert "shop/orders.py" in forward["shop/catalog.py"]
    assert "shop/catalog.py" in backward["shop/orders.py"]
    assert (forward, backward) == fresh() and current_tables(state).index is index
    (pyrepo / "shop" / "extra.py").write_text("import shop.catalog\n")  # a new file: all again
    assert edges() == fresh() and current_tables(state).index is not index
    state.close()


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
    state = next(iter(svc._states.values()))
    deadline = time.monotonic() + 30
    while not state.warm and time.monotonic() < deadline:
        time.sleep(0.05)
    assert state.warm
    money = pyrepo / "shop" / "money.py"
    money.write_text(money.read_text() + "\n\ndef warmed_then_edited():\n    pass\n")
    after = svc.call("repo_map", {"token_budget": 2000, "mentioned_idents": ["warmed_then_edited"]})
    assert "warmed_then_edited" in after.data["map"]
    assert state.graphs.get(Selection()).how.startswith("updated")
    svc.close()


def test_the_tools_read_the_rankings_summaries(pyrepo, tmp_path):
    rm = RepoMap(pyrepo, cache_dir=tmp_path / "c")
    ranked = rm.rank()
    tables = current_tables(rm.state)
    assert tables.files and all(tables.files[p] is ranked.mapped[p] for p in ranked.mapped)
    assert tables.table is ranked.table  # one symbol table for the ranking and the tools
    assert rm.last_stats["reused"] == len(tables.entries) > len(ranked.mapped)  # README too
    money = pyrepo / "shop" / "money.py"
    bump(money, money.read_text() + "\ndef shared_after_edit():\n    pass\n")
    tables = current_tables(rm.state)  # the edited file is extracted again
    assert "shared_after_edit" in {t.name for t in tables.files["shop/money.py"].definitions}
    rm.close()


def test_maps_kept_for_later_replay_and_are_stored_by_save_maps(pyrepo, tmp_path):
    cache = tmp_path / "cache"
    rm = RepoMap(pyrepo, cache_dir=cache)
    rm.state.memo_later = True
    first = rm.map()
    assert rm.state.unsaved_maps and rm.map() == first
    assert rm.last_stats.get("memoised") == 1  # replayed from what is kept, not mapped again
    other = RepoMap(pyrepo, cache_dir=cache)
    other.state.memo_later = True  # does not store either
    other.map()
    assert other.last_stats.get("memoised") is None  # nothing stored yet
    rm.save_maps()
    assert not rm.state.unsaved_maps
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
        while any(st.unsaved_maps for st in service._states.values()):
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
    assert rm.warm and rm.graph_state.how.startswith("updated")
    assert rm.map().map == RepoMap(pyrepo, use_cache=False).map().map
    assert rm.last_stats.get("memoised") is None  # ranked from the rehearsed state
    bump(pyrepo / "shop" / "money.py", "def after_warm_up(): pass\n")
    after = rm.map(mentioned_idents=["after_warm_up"])
    assert rm.graph_state.how == "updated (1 changed)"
    fresh = RepoMap(pyrepo, use_cache=False).map(mentioned_idents=["after_warm_up"])
    assert after.map == fresh.map and "after_warm_up" in after.map
    rm.close()
