"""A git work tree's index as a source of content digests (repomapper.gitindex): a fresh clone's
files whose content this machine has read are not read again, and nothing is learned or
trusted from an index that does not match the files."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

import repomapper.extract as extract_module
from repomapper.cache import TagCache, open_cache
from repomapper.discover import discover
from repomapper.gitindex import blob_id, clean_blobs
from repomapper.repomap import RepoMap
from tests.conftest import git, write_tree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

FILES = {
    "pkg/__init__.py": "",
    "pkg/core.py": "def compute(x):\n    return helper(x) + 1\n\ndef helper(x):\n    return x\n",
    "pkg/api.py": "from pkg.core import compute\n\ndef serve():\n    return compute(2)\n",
    "tool.py": "import pkg.api\n\ndef main():\n    pkg.api.serve()\n",
}


def _committed(root: Path) -> Path:
    write_tree(root, FILES)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def _settled(root: Path) -> None:
    """The checkout as a clone's looks a few seconds after it: git records the files it wrote
    in the same second as the index with size 0 (its "racy" entries, read again later), and
    ``git status`` records them anew once a later second has come."""
    an_hour_ago = time.time_ns() - 3600 * 10**9
    for rel in FILES:
        os.utime(root / rel, ns=(an_hour_ago, an_hour_ago))
    git(root, "update-index", "-q", "--refresh")


def _hash_object(root: Path, rel: str) -> str:
    out = subprocess.run(
        ["git", "hash-object", rel], cwd=root, check=True, capture_output=True, text=True
    )
    return out.stdout.strip()


def test_the_index_gives_the_blob_of_each_file_with_its_recorded_stat(tmp_path):
    root = _committed(tmp_path / "repo")
    entries = discover(root).files
    blobs = clean_blobs(root, entries)
    assert {e.path: b for e, b in blobs.items()} == {p: _hash_object(root, p) for p in FILES}
    assert all(blob_id((root / e.path).read_bytes(), b) == b for e, b in blobs.items())


def test_a_file_changed_since_the_index_was_written_is_not_vouched_for(tmp_path):
    root = _committed(tmp_path / "repo")
    (root / "tool.py").write_text("def main():\n    return 0\n")
    (root / "new.py").write_text("x = 1\n")  # untracked
    os.chmod(root / "pkg" / "api.py", 0o644)  # the ctime changed: the content may have too
    blobs = clean_blobs(root, discover(root).files)
    assert {e.path for e in blobs} == {"pkg/__init__.py", "pkg/core.py"}


def test_a_file_the_index_recorded_in_the_tick_it_was_written_is_not_vouched_for(tmp_path):
    root = _committed(tmp_path / "repo")
    index = root / ".git" / "index"
    entries = discover(root).files
    late = max(e.mtime_ns for e in entries)
    os.utime(index, ns=(late, late))  # as if written in the same tick as the last file
    blobs = clean_blobs(root, entries)
    assert all(e.mtime_ns < late for e in blobs) and len(blobs) < len(entries)


def test_outside_a_work_tree_nothing_is_vouched_for(tmp_path):
    root = write_tree(tmp_path / "plain", FILES)
    assert clean_blobs(root, discover(root, use_git=False).files) == {}


def test_blob_ids_in_both_object_formats():
    assert blob_id(b"", "0" * 40) == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"
    sha256 = "473a0f4c3be8a93681a267e3b1e9a7dcda1185436fe141f7749120a303721813"
    assert blob_id(b"", "0" * 64) == sha256


def test_blob_digests_are_looked_up_by_id_or_by_a_pass_over_a_small_table(tmp_path):
    memory = TagCache()
    memory.record_blobs([("b1", "d1")])
    assert memory.digests_of_blobs(["b1", "b2"]) == {"b1": "d1"}
    cache = open_cache(write_tree(tmp_path / "r", {"a.py": ""}), tmp_path / "cache")
    try:
        cache.record_blobs([(f"b{i}", f"d{i}") for i in range(6)])
        assert cache.digests_of_blobs(["b1"]) == {"b1": "d1"}  # by id
        asked = [f"b{i}" for i in range(3, 9)]
        assert cache.digests_of_blobs(asked) == {f"b{i}": f"d{i}" for i in range(3, 6)}
    finally:
        cache.close()


def test_a_fresh_clone_reads_only_the_files_whose_content_is_new_here(tmp_path, monkeypatch):
    """The first map of a repository learns each file's blob id from its own reading; a clone
    mapped with the same cache then reads only the file changed in it, and maps the same."""
    monkeypatch.setattr(extract_module, "GIT_INDEX_FILES", 1)
    origin = _committed(tmp_path / "origin")
    cache = tmp_path / "cache"
    with RepoMap(origin, cache_dir=cache) as first:
        expected = first.map()
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(origin), str(clone)], check=True)
    _settled(clone)
    (clone / "tool.py").write_text("import pkg.api\n\ndef main():\n    pkg.api.serve()\n# x\n")
    read: list[str] = []
    real = extract_module._hashed

    def counted(path: str, blob: str | None):
        read.append(os.path.relpath(path, clone))
        return real(path, blob)

    monkeypatch.setattr(extract_module, "_hashed", counted)
    with RepoMap(clone, cache_dir=cache) as fresh:
        got = fresh.map()
    assert read == ["tool.py"]
    assert got.map == expected.map


def test_an_index_pointing_at_content_never_read_here_is_not_trusted(tmp_path, monkeypatch):
    """An index can only point a file at content this machine read and hashed as that blob:
    a blob id the cache never learned is read; a pair is learned only from content that hashes
    to the id the index gives."""
    monkeypatch.setattr(extract_module, "GIT_INDEX_FILES", 1)
    root = _committed(tmp_path / "repo")
    cache = open_cache(root, tmp_path / "cache")
    try:
        entries = discover(root).files
        extractor = extract_module.Extractor(_plugins(), cache, jobs=1)
        extractor.prepare(root, entries)
        learned = cache.digests_of_blobs([_hash_object(root, p) for p in FILES])
        assert len(learned) == len(set(FILES.values()))
        # an index that lies about a file's blob: the pair is not learned
        monkeypatch.setattr(extract_module, "clean_blobs", lambda r, es: {e: "f" * 40 for e in es})
        other = open_cache(root, tmp_path / "cache2")
        try:
            extract_module.Extractor(_plugins(), other, jobs=1).prepare(root, entries)
            assert other.digests_of_blobs(["f" * 40]) == {}
        finally:
            other.close()
    finally:
        cache.close()


def _plugins():
    from repomapper.registry import PluginConfig, PluginSet

    return PluginSet(PluginConfig(load_entry_points=False))


def test_the_newest_blob_pairs_are_kept(tmp_path, monkeypatch):
    import repomapper.cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_GIT_BLOBS", 2)
    cache = open_cache(write_tree(tmp_path / "r", {"a.py": ""}), tmp_path / "cache")
    try:
        cache.record_blobs([(f"b{i}", f"d{i}") for i in range(5)])
        assert cache.digests_of_blobs([f"b{i}" for i in range(5)]) == {"b3": "d3", "b4": "d4"}
    finally:
        cache.close()


def test_the_index_is_read_only_when_a_large_share_of_the_files_is_unknown(tmp_path, monkeypatch):
    """Reading the whole index pays only when many of the listed files are unknown: a few
    changed files of a large tree are hashed as before."""
    monkeypatch.setattr(extract_module, "GIT_INDEX_FILES", 1)
    monkeypatch.setattr(extract_module, "GIT_INDEX_SHARE", 0.5)
    monkeypatch.setattr(extract_module, "RACY_NS", 0)  # the stats vouch at once
    root = _committed(tmp_path / "repo")
    cache = open_cache(root, tmp_path / "cache")
    try:
        extract_module.Extractor(_plugins(), cache, jobs=1).prepare(root, discover(root).files)
        (root / "tool.py").write_text("def main():\n    return 1\n")

        def refused(*args):
            raise AssertionError("the index was read for one file of four")

        monkeypatch.setattr(extract_module, "clean_blobs", refused)
        fresh = extract_module.Extractor(_plugins(), cache, jobs=1)
        fresh.prepare(root, discover(root).files)
        assert fresh.content_changed == {"tool.py"}
    finally:
        cache.close()
