"""``repomapper cache info`` and ``prune``, and the automatic size bound (repomapper.cachedir)."""

from __future__ import annotations

import json
import os
import sqlite3
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper import cachedir
from repomapper.cache import (
    CONTENT_DB,
    CacheKey,
    SqliteTagCache,
    cache_file_for,
    encode,
    open_cache,
)
from repomapper.cli import main
from repomapper.model import FileExtraction

DAY = 86_400


def fill(root: Path, cache_dir: Path, files: dict[str, str], state: int = 2000) -> Path:
    """A repository's cache as a map leaves it: digests of its files, their content rows, a
    stored state of ``state`` bytes and a few token counts. ``files``: path -> content digest."""
    root.mkdir(parents=True, exist_ok=True)
    cache = open_cache(root, cache_dir)
    assert isinstance(cache, SqliteTagCache)
    cache.record_digests((p, 1, 10, d, 1, 0, "") for p, d in files.items())
    cache.store(
        (CacheKey(p, 1, 10, "fp", d), encode(FileExtraction(p, plugin="p", language="python")))
        for p, d in files.items()
    )
    cache.remember_counts("enc", {p.encode(): 3 for p in files})
    cache.write_state(lambda f: f.write(b"\0" * state))
    cache.close()
    return cache_file_for(root, cache_dir)


def set_used(db: Path, when: float) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute("INSERT OR REPLACE INTO meta VALUES ('used', ?)", (repr(when),))
    conn.close()


def blob_keys(cache_dir: Path) -> set[tuple[str, str]]:
    conn = sqlite3.connect(cache_dir / CONTENT_DB)
    try:
        return set(conn.execute("SELECT path, digest FROM blobs"))
    finally:
        conn.close()


def cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["cache", *args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(autouse=True)
def _no_automatic_bound(monkeypatch):
    """Caches filled by these tests leave the directory as they made it, unless a test asks."""
    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, "off")


@pytest.fixture
def two(tmp_path):
    """A cache directory with two repositories sharing one file's content row."""
    cache_dir = tmp_path / "cache"
    a = fill(tmp_path / "a", cache_dir, {"shared.py": "d0", "a1.py": "d1", "a2.py": "d2"})
    b = fill(tmp_path / "b", cache_dir, {"shared.py": "d0", "b1.py": "d3"})
    return cache_dir, a, b


def test_info_on_a_missing_and_an_empty_directory(tmp_path):
    for directory in (tmp_path / "missing", tmp_path):
        code, out, _ = cli("info", "--cache-dir", str(directory), "--format", "json")
        assert code == 0
        found = json.loads(out)
        assert found["exists"] is directory.exists()
        assert found["total_size"] == 0 and found["repositories"] == []
        assert set(found["entries"].values()) == {0}
    assert not (tmp_path / "missing").exists()  # info creates nothing
    code, out, _ = cli("info", "--cache-dir", str(tmp_path / "missing"))
    assert "does not exist" in out


def test_info_lists_each_repository_and_the_entries_by_kind(two, tmp_path):
    cache_dir, a, b = two
    (cache_dir / "notes.txt").write_text("mine")
    code, out, _ = cli("info", "--cache-dir", str(cache_dir), "--format", "json")
    assert code == 0
    found = json.loads(out)
    roots = {r["root"]: r for r in found["repositories"]}
    assert set(roots) == {str((tmp_path / "a").resolve()), str((tmp_path / "b").resolve())}
    ra = roots[str((tmp_path / "a").resolve())]
    assert ra["rows"]["files"] == 3 and ra["rows"]["token_counts"] == 3
    assert ra["stored_state_bytes"] == 2000 and ra["last_used"]
    assert ra["size"] == sum(p.stat().st_size for p in cache_dir.glob(f"{a.stem}*"))
    assert found["entries"]["content_rows"] == 4  # shared.py's row is stored once
    assert found["entries"]["stored_states"] == 2
    assert found["entries"]["token_counts"] == 5
    assert found["other_files"] == 1
    assert (cache_dir / "CACHEDIR.TAG").is_file()  # its own tag is neither a row nor another file
    theirs = {"notes.txt", "CACHEDIR.TAG"}
    total = sum(p.stat().st_size for p in cache_dir.iterdir() if p.name not in theirs)
    assert found["total_size"] == total
    code, out, _ = cli("info", "--cache-dir", str(cache_dir))
    assert str(tmp_path / "a") in out and "2 repositories" in out and "other files" in out


def test_prune_by_age_removes_old_repositories_and_only_their_own_rows(two, tmp_path):
    cache_dir, a, b = two
    set_used(a, time.time() - 10 * DAY)
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--older-than", "5")
    assert code == 0, out
    assert f"removed repository {(tmp_path / 'a').resolve()}" in out
    assert not any(cache_dir.glob(f"{a.stem}*"))
    assert b.exists() and b.with_suffix(".state.npz").exists()
    # a's own rows went; the row b refers to too stayed
    assert blob_keys(cache_dir) == {("shared.py", "d0"), ("b1.py", "d3")}
    assert "removed 2 content rows" in out


def test_prune_by_size_removes_the_least_recently_used_first(tmp_path):
    cache_dir = tmp_path / "cache"
    dbs = {n: fill(tmp_path / n, cache_dir, {f"{n}.py": f"d{n}"}) for n in "abc"}
    now = time.time()
    for n, age in (("a", 3), ("b", 1), ("c", 2)):
        set_used(dbs[n], now - age * DAY)
    total = cachedir.inspect(cache_dir).total_size
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--max-size", str(total - 1))
    assert code == 0
    assert not dbs["a"].exists() and dbs["b"].exists() and dbs["c"].exists()
    assert ("a.py", "da") not in blob_keys(cache_dir)
    # smaller still: c (the older of the two left) goes next, b stays
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--max-size", "1")
    assert not dbs["c"].exists() or not dbs["b"].exists()
    assert not dbs["c"].exists()


def test_prune_by_repository_path(two, tmp_path):
    cache_dir, a, b = two
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--repository", str(tmp_path / "b"))
    assert code == 0 and not b.exists() and a.exists()
    code, out, err = cli(
        "prune", "--cache-dir", str(cache_dir), "--repository", str(tmp_path / "z")
    )
    assert code == 0 and "nothing to remove" in out and "no cache for" in err


def test_a_dry_run_removes_nothing(two):
    cache_dir, a, b = two
    before = {p.name: p.stat().st_size for p in cache_dir.iterdir()}
    rows = blob_keys(cache_dir)
    code, out, _ = cli(
        "prune", "--cache-dir", str(cache_dir), "--older-than", "0", "--dry-run", "--format", "json"
    )
    report = json.loads(out)
    assert report["dry_run"] and len(report["removed_repositories"]) == 2
    assert report["removed_content_rows"] == 4
    assert {p.name: p.stat().st_size for p in cache_dir.iterdir()} == before
    assert blob_keys(cache_dir) == rows


def test_files_that_are_not_repomappers_survive_any_prune(two):
    cache_dir, a, b = two
    foreign = [
        cache_dir / "notes.txt",
        cache_dir / "tags-mine.sqlite3",
        cache_dir / "tags-0123.state.npz",
        cache_dir / "content.sqlite3.bak",
    ]
    for p in foreign:
        p.write_text("keep me")
    (cache_dir / "sub").mkdir()
    (cache_dir / "sub" / "tags-0123456789abcdef0123.sqlite3").write_text("keep me")
    code, out, _ = cli(
        "prune", "--cache-dir", str(cache_dir), "--older-than", "0", "--max-size", "0"
    )
    assert code == 0 and not a.exists() and not b.exists()
    assert all(p.read_text() == "keep me" for p in foreign)
    assert (cache_dir / "sub" / "tags-0123456789abcdef0123.sqlite3").exists()


def test_leftovers_are_pruned_and_a_state_being_written_is_not(two):
    cache_dir, a, b = two
    corrupt = cache_dir / f"{a.name}.corrupt"
    corrupt.write_bytes(b"junk")
    writing = cache_dir / f"{b.stem}.state.npz.123.tmp"
    writing.write_bytes(b"now")
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--older-than", "365")
    assert not corrupt.exists() and writing.exists() and a.exists()
    assert f"removed leftover {corrupt.name}" in out


def test_a_database_in_use_is_reported_and_skipped(two, tmp_path):
    cache_dir, a, b = two
    holder = open_cache(tmp_path / "a", cache_dir)  # another run has a's cache open
    try:
        assert isinstance(holder, SqliteTagCache)
        code, out, err = cli("prune", "--cache-dir", str(cache_dir), "--older-than", "0")
        assert code == 0
        assert "skipped repository" in out and "in use by another process" in out
        assert a.exists() and not b.exists()
        # a's rows are still referenced by a: they stay
        assert ("a1.py", "d1") in blob_keys(cache_dir)
        holder.store([(CacheKey("new.py", 1, 1, "fp", "dn"), encode(FileExtraction("new.py")))])
    finally:
        holder.close()
    assert ("new.py", "dn") in blob_keys(cache_dir)


def test_the_automatic_bound_evicts_the_least_recently_used_repository(tmp_path, monkeypatch):
    cache_dir = tmp_path / "cache"
    a = fill(tmp_path / "a", cache_dir, {"a.py": "da"}, state=50_000)
    set_used(a, time.time() - DAY)
    b = fill(tmp_path / "b", cache_dir, {"b.py": "db"}, state=50_000)
    assert a.exists() and b.exists()  # no bound configured yet
    # a bound that three repositories exceed and two fit
    bound = cachedir.inspect(cache_dir).total_size + 10_000
    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, str(bound))
    c = fill(tmp_path / "c", cache_dir, {"c.py": "dc"}, state=50_000)
    assert not a.exists() and not a.with_suffix(".state.npz").exists()
    assert b.exists() and c.exists()
    assert ("a.py", "da") not in blob_keys(cache_dir)
    # checked at most once per interval: the next close leaves the directory over its bound
    d = fill(tmp_path / "d", cache_dir, {"d.py": "dd"}, state=50_000)
    assert b.exists() and c.exists() and d.exists()
    monkeypatch.setattr(cachedir, "EVICT_INTERVAL", 0)
    fill(tmp_path / "d", cache_dir, {"d.py": "dd"}, state=50_000)
    assert not b.exists() and d.exists()


def test_sizes_and_the_bound_setting(monkeypatch):
    assert cachedir.parse_size("500MB") == 500 << 20
    assert cachedir.parse_size("1.5g") == 3 << 29
    assert cachedir.parse_size("2GiB") == 2 << 30
    assert cachedir.parse_size("4096") == 4096
    with pytest.raises(ValueError):
        cachedir.parse_size("lots")
    monkeypatch.delenv(cachedir.ENV_MAX_SIZE)
    assert cachedir.configured_max_size() == cachedir.DEFAULT_MAX_SIZE == 1 << 30
    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, "off")
    assert cachedir.configured_max_size() is None
    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, "lots")
    assert cachedir.configured_max_size() == cachedir.DEFAULT_MAX_SIZE
    code, out, _ = cli("prune", "--max-size", "lots")
    assert code == 2 and "not a size" in out + _


def test_a_corrupt_repository_database_is_listed_and_pruned(two):
    cache_dir, a, b = two
    broken = cache_dir / "tags-0123456789abcdef0123.sqlite3"
    broken.write_bytes(b"not a database" * 100)
    code, out, _ = cli("info", "--cache-dir", str(cache_dir), "--format", "json")
    [found] = [r for r in json.loads(out)["repositories"] if r["name"] == broken.stem]
    assert found["error"].startswith("unreadable")
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--repository", "/nowhere")
    assert broken.exists()  # another repository's path
    os.utime(broken, (time.time() - 30 * DAY, time.time() - 30 * DAY))
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir), "--older-than", "7")
    assert not broken.exists() and a.exists() and b.exists()


def test_prune_without_options_applies_the_configured_bound(two, monkeypatch):
    cache_dir, a, b = two
    monkeypatch.delenv(cachedir.ENV_MAX_SIZE)
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir))
    assert code == 0 and "nothing to remove" in out and a.exists() and b.exists()
    set_used(a, time.time() - DAY)
    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, str(cachedir.inspect(cache_dir).total_size - 1))
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir))
    assert not a.exists() and b.exists()
    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, "off")
    code, out, _ = cli("prune", "--cache-dir", str(cache_dir))
    assert "no size bound configured" in out and b.exists()


def test_a_busy_content_database_keeps_its_rows_and_says_so(two):
    cache_dir, a, b = two
    writer = sqlite3.connect(cache_dir / CONTENT_DB, isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another run is writing rows
    try:
        code, out, err = cli("prune", "--cache-dir", str(cache_dir), "--older-than", "0")
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    assert code == 0 and not a.exists() and not b.exists()
    assert "skipped content rows: the content database is busy" in out
    assert len(blob_keys(cache_dir)) == 4


def test_a_failing_bound_never_fails_the_run_that_closes_the_cache(tmp_path, monkeypatch, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setenv(cachedir.ENV_MAX_SIZE, "1")
    monkeypatch.setattr(cachedir, "prune", broken)
    db = fill(tmp_path / "a", tmp_path / "cache", {"a.py": "da"})
    assert db.exists()
    assert "cache size bound not applied" in caplog.text and "boom" in caplog.text


def test_options_together_remove_each_repository_once(two, tmp_path):
    cache_dir, a, b = two
    code, out, _ = cli(
        "prune", "--cache-dir", str(cache_dir), "--repository", str(tmp_path / "a"),
        "--older-than", "0", "--max-size", "1", "--format", "json",
    )  # fmt: skip
    report = json.loads(out)
    assert code == 0 and report["skipped"] == []
    assert sorted(r["name"] for r in report["removed_repositories"]) == sorted([a.stem, b.stem])


def test_a_root_whose_name_is_not_utf8_is_cached_and_listed(tmp_path):
    root = tmp_path / os.fsdecode(b"caf\xe9")
    db = fill(root, tmp_path / "cache", {"a.py": "da"})
    assert db.exists()
    code, out, _ = cli("info", "--cache-dir", str(tmp_path / "cache"), "--format", "json")
    [repo] = json.loads(out)["repositories"]
    assert repo["root"].endswith("caf\ufffd")
