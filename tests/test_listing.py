"""The watched listing (repomapper.listing): the last discovery is reused, with its files
stat'ed again, only while the watcher saw nothing that changes the file list; and the MCP
service's maps see an edit, an added and a removed file with a real watcher."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from repomapper.discover import discover
from repomapper.listing import WatchedListing
from repomapper.repomap import RepoMap
from tests.conftest import git, write_tree


@pytest.fixture
def tree(tmp_path):
    return write_tree(
        tmp_path / "repo",
        {"a.py": "def alpha():\n    pass\n", "pkg/b.py": "def beta():\n    pass\n"},
    )


def settle_folders(root: Path) -> None:
    """Move every folder's mtime back by a second: a folder changed within the last few
    milliseconds is listed again on every call (its mtime may not move on its next change)."""
    for folder in [root, *(p for p in root.rglob("*") if p.is_dir())]:
        st = folder.stat()
        os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns - 1_000_000_000))


def watched(root: Path) -> tuple[WatchedListing, list[int]]:
    """A listing whose watch is in place before its first collect."""
    settle_folders(root)
    listing = WatchedListing(root.resolve())
    listing.arm()
    return listing, []


def collect(listing: WatchedListing, root: Path, calls: list[int]):
    def listed():
        calls.append(1)
        return discover(root.resolve())

    return listing.collect(listed, 1_000_000)


def later(path: Path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 2_000_000_000))


def paths(found) -> list[str]:
    return [e.path for e in found.files]


def test_an_edit_is_seen_by_its_stat_without_listing_again(tree):
    listing, calls = watched(tree)
    first = collect(listing, tree, calls)
    later(tree / "a.py", "def alpha():\n    return 1\n")
    again = collect(listing, tree, calls)
    assert (len(calls), listing.last) == (1, "stat")
    assert paths(again) == paths(first)
    (a,) = [e for e in again.files if e.path == "a.py"]
    assert a.mtime_ns == (tree / "a.py").stat().st_mtime_ns


@pytest.mark.parametrize(
    "change",
    [
        ("added", "pkg/c.py"),
        ("deleted", "a.py"),
        ("modified", ".gitignore"),
        ("modified", "never_listed.bin"),
    ],
)
def test_changes_to_the_file_list_list_again(tree, change):
    listing, calls = watched(tree)
    collect(listing, tree, calls)
    kind, rel = change
    listing.note([(kind, str(tree.resolve() / rel))])
    collect(listing, tree, calls)
    assert (len(calls), listing.last) == (2, "discover")


def test_events_in_folders_a_walk_skips_and_outside_the_root_are_ignored(tree):
    listing, calls = watched(tree)
    collect(listing, tree, calls)
    root = tree.resolve()
    listing.note(
        [
            ("added", str(root / "__pycache__" / "a.cpython-311.pyc")),
            ("added", str(root.parent / "elsewhere.py")),
            ("modified", str(root / "a.py")),
        ]
    )
    collect(listing, tree, calls)
    assert listing.last == "stat"


def test_a_file_removed_before_its_event_arrives_lists_again(tree):
    listing, calls = watched(tree)
    collect(listing, tree, calls)
    (tree / "a.py").unlink()
    found = collect(listing, tree, calls)
    assert listing.last == "discover" and paths(found) == ["pkg/b.py"]


def test_a_file_grown_over_the_limit_lists_again(tree):
    listing, calls = watched(tree)

    def small():
        calls.append(1)
        return discover(tree.resolve(), max_file_size=100)

    listing.collect(small, 100)
    later(tree / "a.py", "x = 1\n" * 100)
    found = listing.collect(small, 100)
    assert listing.last == "discover"
    assert paths(found) == ["pkg/b.py"]
    assert [d.code for d in found.diagnostics] == ["too_large"]


def test_without_a_watcher_or_before_it_is_ready_every_call_lists(tree):
    settle_folders(tree)
    listing = WatchedListing(tree.resolve())  # the watch is not in place yet
    calls: list[int] = []
    collect(listing, tree, calls)
    collect(listing, tree, calls)
    assert len(calls) == 2
    listing.arm()
    collect(listing, tree, calls)  # taken before the watch was in place: listed again
    assert (len(calls), listing.last) == (3, "discover")
    collect(listing, tree, calls)
    assert (len(calls), listing.last) == (3, "stat")
    listing.note(None)  # the watcher stopped
    collect(listing, tree, calls)
    collect(listing, tree, calls)
    assert len(calls) == 5


def test_git_index_changes_list_again(tree):
    git(tree, "init", "-q")
    git(tree, "add", "a.py")
    listing, calls = watched(tree)
    assert collect(listing, tree, calls).source == "git"
    collect(listing, tree, calls)
    assert listing.last == "stat"
    (tree / ".gitignore").write_text("pkg/\n")  # as if its event were lost: only the index says
    git(tree, "add", ".gitignore")
    found = collect(listing, tree, calls)
    assert listing.last == "discover" and "pkg/b.py" not in paths(found)


def test_a_repomap_uses_the_listing_it_is_given(tree, tmp_path):
    rm = RepoMap(tree, cache_dir=tmp_path / "cache")
    rm.state.listing, _ = watched(tree)
    rm.map()
    later(tree / "pkg/b.py", "def beta():\n    pass\n\n\ndef gamma_added():\n    pass\n")
    assert "gamma_added" in rm.map(mentioned_idents=["gamma_added"]).map
    assert rm.listing.last == "stat"
    rm.close()


def test_the_service_map_sees_edits_additions_and_removals(tree, tmp_path):
    pytest.importorskip("watchfiles")
    from repomapper.serve.service import Service, ServiceOptions

    service = Service(tree, ServiceOptions(cache_dir=str(tmp_path / "cache"), warm_up=False))
    try:

        def mapped(**args) -> dict:
            result = service.call("repo_map", {"token_budget": 2000, **args})
            assert not result.is_error, result.data
            return result.data

        mapped()
        (rm,) = service._states.values()
        assert rm.watcher is not None and rm.watcher.ready.wait(10)  # the watch is in place
        mapped()  # a listing taken after that: reused from now on
        later(tree / "a.py", "def alpha():\n    pass\n\n\ndef edited_in_place():\n    pass\n")
        assert "edited_in_place" in mapped(mentioned_idents=["edited_in_place"])["map"]
        assert rm.listing.last == "stat"
        (tree / "pkg" / "new_module.py").write_text("def brand_new_function():\n    pass\n")
        # at once, before the watcher's event: the folder's mtime says the listing changed
        data = mapped(mentioned_idents=["brand_new_function"])
        assert "brand_new_function" in data["map"]
        (tree / "pkg" / "new_module.py").unlink()
        data = mapped(mentioned_idents=["brand_new_function"])
        assert "brand_new_function" not in data["map"]
    finally:
        service.close()


def test_the_watcher_says_when_its_watch_is_in_place(tree):
    pytest.importorskip("watchfiles")
    from repomapper.watch import Watcher

    watcher = Watcher.start(tree.resolve())
    try:
        early: list[str] = []
        watcher.subscribe(lambda changes: None, lambda: early.append("ready"))
        assert watcher.ready.wait(10)
        deadline = time.monotonic() + 5
        while not early and time.monotonic() < deadline:
            time.sleep(0.01)
        assert early == ["ready"]
        late: list[str] = []
        watcher.subscribe(lambda changes: None, lambda: late.append("ready"))
        assert late == ["ready"]  # already in place: told at once
    finally:
        watcher.stop()


def test_a_watching_repomap_reuses_its_listing_and_sees_added_files(tree, tmp_path):
    pytest.importorskip("watchfiles")
    rm = RepoMap(tree, cache_dir=tmp_path / "cache")
    try:
        assert rm.watch() and rm.watch()  # a second call keeps the same watcher
        assert rm.state.watcher is not None and rm.state.watcher.ready.wait(10)
        rm.map()
        later(tree / "a.py", "def alpha():\n    pass\n\n\ndef watched_edit():\n    pass\n")
        assert "watched_edit" in rm.map(mentioned_idents=["watched_edit"]).map
        assert rm.listing.last == "stat"
        (tree / "pkg" / "fresh.py").write_text("def fresh_function():\n    pass\n")
        assert "fresh_function" in rm.map(mentioned_idents=["fresh_function"]).map  # at once
        (tree / "pkg" / "fresh.py").rename(tree / "pkg" / "renamed.py")
        assert rm.map().extra["files_mapped"] == 3 and "pkg/renamed.py" in rm.map().map
        thread = rm.state.watcher._thread
    finally:
        rm.close()
    assert rm.state.watcher is None and not thread.is_alive()


def test_a_file_made_in_a_listed_folder_is_seen_before_any_event(tree):
    listing, calls = watched(tree)
    collect(listing, tree, calls)
    assert collect(listing, tree, calls) and listing.last == "stat"
    (tree / "pkg" / "c.py").write_text("def gamma():\n    pass\n")  # no event told
    found = collect(listing, tree, calls)
    assert listing.last == "discover" and "pkg/c.py" in paths(found)
    settle_folders(tree)
    collect(listing, tree, calls)
    (tree / "pkg" / "c.py").rename(tree / "pkg" / "d.py")
    assert paths(collect(listing, tree, calls)) == ["a.py", "pkg/b.py", "pkg/d.py"]


def test_a_folder_changed_just_now_is_not_trusted(tree):
    listing, calls = watched(tree)
    (tree / "pkg" / "c.py").write_text("x = 1\n")  # the folder's mtime is now
    collect(listing, tree, calls)
    collect(listing, tree, calls)
    assert listing.last == "discover"  # its stamp could hide a change in the same tick


def test_a_kept_listing_selects_what_a_discovery_with_the_same_globs_lists(tmp_path):
    """One glob filter for both: a state that keeps one listing and serves maps with other
    globs (MCP) selects the very files a fresh discovery with those globs would list."""
    from repomapper.discover import discover
    from repomapper.listing import select

    for rel in ("a.py", "pkg/b.py", "pkg/c.js", "tests/test_a.py", "docs/x.md", "pkg/sub/d.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    everything = discover(tmp_path, use_git=False)
    for include, exclude in (
        ((), ()),
        (("**/*.py",), ()),
        ((), ("tests/",)),
        (("pkg/**",), ("*.js",)),
        (("*.py",), ("pkg/sub/", "!pkg/sub/d.py")),
    ):
        kept, _, seen = select(everything, include, exclude)
        fresh = discover(tmp_path, include, exclude, use_git=False)
        assert [e.path for e in kept] == [e.path for e in fresh.files], (include, exclude)
        assert seen == fresh.seen


def test_events_inside_a_folder_tagged_as_a_cache_are_ignored_but_its_tag_is_not(tree):
    """A cache kept inside the tree changes on every call: its events say nothing about the
    listing; its tag removed or replaced does (the folder would be listed again)."""
    from repomapper.cachetag import SIGNATURE, TAG_NAME

    (tree / "cache").mkdir()
    (tree / "cache" / TAG_NAME).write_bytes(SIGNATURE + b"\n")
    listing, calls = watched(tree)
    found = collect(listing, tree, calls)
    assert found.cache_folders == ("cache/",)
    root = tree.resolve()
    listing.note([("added", str(root / "cache" / "rows.sqlite3-wal"))])
    collect(listing, tree, calls)
    assert (len(calls), listing.last) == (1, "stat")
    listing.note([("deleted", str(root / "cache" / TAG_NAME))])
    collect(listing, tree, calls)
    assert (len(calls), listing.last) == (2, "discover")
