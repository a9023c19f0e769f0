"""Index bundles (repomapper.bundle): a repository's index exported once and imported into
another cache, after which a fresh clone's first map extracts nothing and equals a map made
without the bundle; a bundle is untrusted input (tampered, truncated, bombs, foreign, poisoned)."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper.bundle import BundleError, Limits, export_bundle, import_bundle
from repomapper.bundle.format import Writer
from repomapper.cli import main
from repomapper.repomap import RepoMap
from tests.conftest import write_tree
from tests.test_snapshot import TREE

TASK = "The receipt discount rounding is wrong in apply_discount"
#: a tree with other content: the bundle's rows are never hit for it
OTHER = {
    "lib/a.py": "def alpha():\n    return beta()\n",
    "lib/b.py": "from lib.a import alpha\n\ndef beta():\n    return alpha()\n",
}


@pytest.fixture(scope="module")
def made(tmp_path_factory) -> tuple[Path, Path]:
    """The source tree and its bundle (exported from a cache of its own)."""
    base = tmp_path_factory.mktemp("made")
    src = write_tree(base / "src", TREE)
    bundle = base / "src.bundle"
    found = export_bundle(src, bundle, cache_dir=base / "cache")
    assert found.rows == len(TREE) and found.state_bytes > 0 and found.lexical > 0
    return src, bundle


def clone(tmp_path: Path, files: dict = TREE, name: str = "clone") -> Path:
    """A copy in another directory, every mtime new."""
    return write_tree(tmp_path / name, files)


def maps(root: Path, cache_dir: Path) -> tuple[tuple[str, str, str], dict[str, dict], str]:
    """The map (the export's settings), a map of another budget and one for a task (each a
    first call of its own: no memoised map), the stats of each, and how the second's graph
    state came."""
    with RepoMap(root, cache_dir=cache_dir) as rm:
        plain = rm.map().map
        first = {**rm.last_stats, "built": int(rm.graph_state is not None)}
    with RepoMap(root, 2048, cache_dir=cache_dir) as rm:
        wide = rm.map().map
        stats, how = dict(rm.last_stats), rm.graph_state.how
        task = rm.map(task=TASK).map
        lexical = rm.state._lexical[1].indexed if rm.state._lexical else -1
        task_stats = {**rm.last_stats, "lexical_indexed": lexical}
    return (plain, wide, task), {"first": first, "wide": stats, "task": task_stats}, how


def files_outside(tmp_path: Path, *caches: Path) -> dict[str, int]:
    """Every file under ``tmp_path`` but in ``caches``, with its mtime."""
    out = {}
    for top, _, names in os.walk(tmp_path):
        if any(Path(top).is_relative_to(c) for c in caches):
            continue
        for n in names:
            p = Path(top, n)
            out[str(p)] = p.stat().st_mtime_ns
    return out


def records(bundle: Path) -> list[dict]:
    with gzip.open(bundle) as f:
        return [json.loads(line) for line in f]


def rewrite(records_: list[dict], out: Path) -> Path:
    """A bundle of these records (the end record made again: as a tamperer would)."""
    with open(out, "wb") as f:
        w = Writer(f)
        for r in records_:
            if r.get("k") != "end":
                w.write(r)
        w.close()
    return out


def blob_count(cache_dir: Path) -> int:
    db = cache_dir / "content.sqlite3"
    if not db.exists():
        return 0
    with sqlite3.connect(db) as conn:
        try:
            return conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]
        except sqlite3.OperationalError:
            return 0


def test_imported_bundle_makes_a_fresh_clone_warm_and_equal(made, tmp_path):
    src, bundle = made
    reference = maps(clone(tmp_path, name="ref"), tmp_path / "ref-cache")
    assert reference[1]["first"]["extracted"] == len(TREE)
    fresh = clone(tmp_path)
    before = files_outside(tmp_path, tmp_path / "cache")
    done = import_bundle(bundle, fresh, tmp_path / "cache")
    assert (done.rows, done.state, done.skipped) == (len(TREE), True, {})
    assert done.counts > 0 and done.lexical == len(TREE)
    assert files_outside(tmp_path, tmp_path / "cache") == before  # only the cache is written
    texts, stats, how = maps(fresh, tmp_path / "cache")
    assert texts == reference[0]
    assert stats["first"]["extracted"] == 0 and stats["first"].get("memoised") == 1
    assert stats["wide"]["extracted"] == 0 and how == "stored"
    assert stats["task"]["extracted"] == 0 and stats["task"]["lexical_indexed"] == 0


def test_rows_only_imports_the_rows_alone(made, tmp_path):
    src, bundle = made
    reference = maps(clone(tmp_path, name="ref"), tmp_path / "ref-cache")
    fresh = clone(tmp_path)
    done = import_bundle(bundle, fresh, tmp_path / "cache", rows_only=True)
    assert (done.rows, done.counts, done.lexical, done.maps, done.state) == (
        len(TREE),
        0,
        0,
        0,
        False,
    )
    texts, stats, how = maps(fresh, tmp_path / "cache")
    assert texts == reference[0] and stats["first"]["built"] == 1
    assert stats["first"]["extracted"] == 0 and "memoised" not in stats["first"]


def test_bundle_bytes_are_deterministic(made, tmp_path):
    """The same cache gives the same bytes; another cache the same records but for the token
    counts (what a cache remembers of them depends on the maps it made)."""
    src, bundle = made
    again, other = tmp_path / "again.bundle", tmp_path / "other.bundle"
    export_bundle(src, again, cache_dir=bundle.parent / "cache")
    assert again.read_bytes() == bundle.read_bytes()
    export_bundle(src, other, cache_dir=tmp_path / "c")

    def kept(path: Path) -> list[dict]:
        return [r for r in records(path)[1:] if r["k"] not in ("count", "end")]

    assert kept(other) == kept(bundle)


def test_a_bundle_for_other_content_is_never_hit(made, tmp_path):
    _, bundle = made
    other = clone(tmp_path, OTHER, "other")
    reference = maps(clone(tmp_path, OTHER, "other-ref"), tmp_path / "ref-cache")
    import_bundle(bundle, other, tmp_path / "cache")
    texts, stats, how = maps(other, tmp_path / "cache")
    assert texts == reference[0]
    assert stats["first"]["extracted"] == len(OTHER) and stats["first"]["built"] == 1


def test_the_cli_exports_and_imports(made, tmp_path):
    src, _ = made
    runner = CliRunner()
    out = tmp_path / "cli.bundle"
    args = ["index", "export", str(src), "-o", str(out), "--cache-dir", str(tmp_path / "a")]
    r = runner.invoke(main, [*args, "-t", "1024", "-t", "2048"])
    assert r.exit_code == 0, r.output
    assert "2 memoised map(s)" in r.output
    fresh = clone(tmp_path)
    r = runner.invoke(
        main,
        ["index", "import", str(out), str(fresh), "--cache-dir", str(tmp_path / "b"), "--verify"],
    )
    assert r.exit_code == 0, r.output
    assert f"imported {len(TREE)} file rows" in r.output and "all agree" in r.output
    assert "2 memoised map(s)" in r.output
    with RepoMap(fresh, 2048, cache_dir=tmp_path / "b") as rm:
        rm.map()
        assert rm.last_stats.get("memoised") == 1 and rm.last_stats["extracted"] == 0
    bad = tmp_path / "bad.bundle"
    bad.write_bytes(b"not a bundle")
    r = runner.invoke(main, ["index", "import", str(bad), str(fresh), "--cache-dir", str(tmp_path)])
    assert r.exit_code == 1 and "bundle refused" in r.output and "Traceback" not in r.output


def test_an_export_after_an_edit_carries_the_state_of_the_edited_tree(tmp_path):
    """A stored state of an older version of the tree (updated in memory since, as an edit's
    map does, never stored) is built again and stored by the export, so the bundle carries the
    state of the files it exports: the one an export from an empty cache carries."""
    src = write_tree(tmp_path / "src", TREE)
    cache = tmp_path / "cache"
    export_bundle(src, tmp_path / "one.bundle", cache_dir=cache)
    edited = next(p for p in sorted(src.rglob("*.py")))
    edited.write_text(edited.read_text() + "\n# edited\n")
    with RepoMap(src, cache_dir=cache) as rm:
        rm.map()  # the stored state updated in memory only
    out = tmp_path / "two.bundle"
    r = CliRunner().invoke(
        main, ["index", "export", str(src), "-o", str(out), "--cache-dir", str(cache)]
    )
    assert r.exit_code == 0, r.output
    assert "no ranking state" not in r.output
    fresh = export_bundle(src, tmp_path / "fresh.bundle", cache_dir=tmp_path / "empty")
    assert fresh.state_bytes > 0

    def state_of(bundle: Path) -> list[dict]:
        return [x for x in records(bundle) if x.get("k") == "state"]

    assert state_of(out) == state_of(tmp_path / "fresh.bundle")


def _gz(data: bytes) -> bytes:
    return gzip.compress(data, compresslevel=1, mtime=0)


def _refused(bundle: Path, tmp_path: Path, match: str, limits: Limits | None = None) -> None:
    fresh = clone(tmp_path)
    cache = tmp_path / "cache"
    before = files_outside(tmp_path, cache)
    with pytest.raises(BundleError, match=match):
        import_bundle(bundle, fresh, cache, limits=limits)
    assert blob_count(cache) == 0  # nothing imported
    assert files_outside(tmp_path, cache) == before


def test_a_changed_row_is_refused(made, tmp_path):
    _, bundle = made
    lines = gzip.decompress(bundle.read_bytes()).split(b"\n")
    i = next(i for i, line in enumerate(lines) if b"apply_discount" in line)
    lines[i] = lines[i].replace(b"apply_discount", b"apply_discounT")
    bad = tmp_path / "changed.bundle"
    bad.write_bytes(_gz(b"\n".join(lines)))
    _refused(bad, tmp_path, "altered")


@pytest.mark.parametrize("keep", [0.5, 0.99])
def test_a_truncated_bundle_is_refused(made, tmp_path, keep):
    _, bundle = made
    data = bundle.read_bytes()
    bad = tmp_path / "cut.bundle"
    bad.write_bytes(data[: int(len(data) * keep)])
    _refused(bad, tmp_path, "not a readable bundle")


def test_a_bundle_cut_at_a_line_is_refused(made, tmp_path):
    _, bundle = made
    lines = gzip.decompress(bundle.read_bytes()).split(b"\n")
    bad = tmp_path / "cut.bundle"
    bad.write_bytes(_gz(b"\n".join(lines[:3]) + b"\n"))
    _refused(bad, tmp_path, "no end record")


def test_a_decompression_bomb_is_refused(made, tmp_path):
    _, bundle = made
    head = gzip.decompress(bundle.read_bytes()).split(b"\n")[0] + b"\n"
    line = b'{"k":"count","encoder":"cl100k_base","key":"00000000000000000000000000000000","tokens":1}\n'
    bomb = tmp_path / "bomb.bundle"
    bomb.write_bytes(_gz(head + line * 300_000))
    assert len(line) * 300_000 > 100 * bomb.stat().st_size
    _refused(
        bomb, tmp_path, "decompression bomb", Limits(counts=10**9, ratio=100, ratio_after=1 << 20)
    )


def test_a_bomb_of_one_endless_line_is_refused(tmp_path):
    bomb = tmp_path / "zeros.bundle"
    bomb.write_bytes(_gz(b"\0" * (80 << 20)))
    _refused(bomb, tmp_path, "too long")


def test_too_many_rows_are_refused(made, tmp_path):
    _, bundle = made
    _refused(bundle, tmp_path, "more than 2 row records", Limits(rows=2))


def test_a_wrong_header_is_refused(made, tmp_path):
    _, bundle = made
    recs = records(bundle)
    recs[0]["format"] = "something-else"
    _refused(rewrite(recs, tmp_path / "h.bundle"), tmp_path, "not an index bundle")
    recs[0] = {**records(bundle)[0], "version": 99}
    _refused(rewrite(recs, tmp_path / "v.bundle"), tmp_path, "format version 99")
    recs[0] = {**records(bundle)[0], "counts": []}
    _refused(rewrite(recs, tmp_path / "c.bundle"), tmp_path, "what it holds")


def test_an_unwritable_cache_refuses_the_import(made, tmp_path):
    _, bundle = made
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    with pytest.raises(BundleError, match="cannot be written"):
        import_bundle(bundle, clone(tmp_path), blocker / "cache")


def test_a_bundle_of_other_code_is_refused(made, tmp_path):
    _, bundle = made
    recs = records(bundle)
    recs[0]["code"]["extraction"] = "0" * 16
    _refused(rewrite(recs, tmp_path / "code.bundle"), tmp_path, "another version")


def test_non_json_and_non_gzip_are_refused(made, tmp_path):
    _, bundle = made
    lines = gzip.decompress(bundle.read_bytes()).split(b"\n")
    lines[2] = b"{not json"
    bad = tmp_path / "nonjson.bundle"
    bad.write_bytes(_gz(b"\n".join(lines)))
    _refused(bad, tmp_path, "not JSON")
    plain = tmp_path / "plain.bundle"
    plain.write_bytes(gzip.decompress(bundle.read_bytes()))
    _refused(plain, tmp_path, "not a readable bundle")
    array = tmp_path / "array.bundle"
    array.write_bytes(_gz(b"[1, 2]\n"))
    _refused(array, tmp_path, "not a JSON object")


@pytest.mark.parametrize(
    "path", ["../outside.py", "/etc/passwd", "shop/../../x.py", "C:/x.py", "a\\..\\b.py", ""]
)
def test_a_row_claiming_a_path_outside_the_root_is_skipped(made, tmp_path, path):
    _, bundle = made
    recs = records(bundle)
    rows = [r for r in recs if r.get("k") == "row"]
    recs.insert(1, {**rows[0], "key": [path, *rows[0]["key"][1:]]})
    bad = rewrite(recs, tmp_path / "path.bundle")
    fresh = clone(tmp_path)
    before = files_outside(tmp_path, tmp_path / "cache")
    done = import_bundle(bad, fresh, tmp_path / "cache")
    assert done.rows == len(TREE) and done.skipped == {"a row's path is not inside the root": 1}
    assert files_outside(tmp_path, tmp_path / "cache") == before
    with sqlite3.connect(tmp_path / "cache" / "content.sqlite3") as conn:
        paths = {p for (p,) in conn.execute("SELECT path FROM blobs")}
    assert paths == set(TREE)


def test_malformed_records_are_skipped_and_their_files_extracted(made, tmp_path):
    _, bundle = made
    recs = records(bundle)
    rows = [r for r in recs if r.get("k") == "row"]
    broken = rows[0]["key"][0]
    rows[0]["row"][2] = "{not json"
    rows[1]["row"] = ["x"]
    rows[2]["key"][1] = "not-a-digest"
    for r in recs:
        if r.get("k") == "count":
            r["tokens"] = "many"
            break
    next(r for r in recs if r.get("k") == "map")["map"] = '{"map": 1}'
    bad = rewrite(recs, tmp_path / "malformed.bundle")
    fresh = clone(tmp_path)
    done = import_bundle(bad, fresh, tmp_path / "cache")
    assert sum(done.skipped.values()) == 5 and done.rows == len(TREE) - 3 and done.maps == 0
    reference = maps(clone(tmp_path, name="ref"), tmp_path / "ref-cache")
    texts, stats, _ = maps(fresh, tmp_path / "cache")
    assert texts == reference[0] and stats["first"]["extracted"] == 3
    assert broken in TREE


def _poisoned(bundle: Path, out: Path) -> tuple[Path, str]:
    """The bundle with one row's definitions renamed (its end record made again)."""
    recs = records(bundle)
    row = next(r for r in recs if r.get("k") == "row" and "apply_discount" in r["row"][2])
    row["row"][2] = row["row"][2].replace("apply_discount", "steal_credentials")
    return rewrite(recs, out), row["key"][0]


def test_a_poisoned_row_is_served_for_its_content_only(made, tmp_path):
    """What a poisoned bundle can do without --verify: wrong definitions for that content."""
    _, bundle = made
    bad, path = _poisoned(bundle, tmp_path / "poisoned.bundle")
    fresh = clone(tmp_path)
    import_bundle(bad, fresh, tmp_path / "cache")
    with RepoMap(fresh, cache_dir=tmp_path / "cache") as rm:
        assert "steal_credentials" in json.dumps(rm.map(force_refresh=True).to_dict())
    (fresh / path).write_text(TREE[path] + "\n# edited\n", encoding="utf-8")
    with RepoMap(fresh, cache_dir=tmp_path / "cache") as rm:
        # other content: extracted here
        assert "steal_credentials" not in json.dumps(rm.map().to_dict())


def test_verify_rejects_a_poisoned_bundle_and_imports_nothing(made, tmp_path):
    _, bundle = made
    bad, _ = _poisoned(bundle, tmp_path / "poisoned.bundle")
    fresh = clone(tmp_path)
    cache = tmp_path / "cache"
    before = files_outside(tmp_path, cache)
    with pytest.raises(BundleError, match="verification failed: 1 of"):
        import_bundle(bad, fresh, cache, verify=True)
    assert blob_count(cache) == 0
    assert files_outside(tmp_path, cache) == before
    with RepoMap(fresh, cache_dir=cache) as rm:
        assert "steal_credentials" not in json.dumps(rm.map().to_dict())
        assert rm.last_stats["extracted"] == len(TREE)


def test_verify_samples_at_random_and_accepts_a_clean_bundle(made, tmp_path):
    _, bundle = made
    fresh = clone(tmp_path)
    done = import_bundle(
        bundle, fresh, tmp_path / "cache", verify=True, sample=3, rng=random.Random(7)
    )
    assert done.verified is not None and done.verified.checked == 3
    assert not done.verified.disagreed and done.rows == len(TREE)


def test_verify_with_no_local_file_imports_nothing(made, tmp_path):
    _, bundle = made
    other = clone(tmp_path, OTHER, "other")
    with pytest.raises(BundleError, match="no row to check"):
        import_bundle(bundle, other, tmp_path / "cache", verify=True)
    assert blob_count(tmp_path / "cache") == 0


def test_an_unreadable_state_is_not_imported(made, tmp_path):
    _, bundle = made
    recs = records(bundle)
    recs = [r for r in recs if r.get("k") != "state"]
    import base64

    junk = base64.b64encode(io.BytesIO(b"PK\x03\x04 not a zip").getvalue()).decode()
    recs.append({"k": "state", "at": 0, "data": junk})
    fresh = clone(tmp_path)
    done = import_bundle(rewrite(recs, tmp_path / "s.bundle"), fresh, tmp_path / "cache")
    assert not done.state and any("unreadable" in n for n in done.notes)
    reference = maps(clone(tmp_path, name="ref"), tmp_path / "ref-cache")
    texts, stats, how = maps(fresh, tmp_path / "cache")
    assert texts == reference[0] and how == "built" and stats["wide"]["extracted"] == 0


def test_the_state_is_stored_as_exported_and_nothing_when_over_its_bound(made, tmp_path):
    """The state's parts are spooled to a temporary file while the bundle is read (not held in
    memory), then stored byte for byte as exported; a state over the bound refuses the bundle
    and stores nothing."""
    import base64

    from repomapper.cache import STATE_SUFFIX

    _, bundle = made
    recs = records(bundle)
    exported = b"".join(base64.b64decode(r["data"]) for r in recs if r.get("k") == "state")
    cache = tmp_path / "cache"
    assert import_bundle(bundle, clone(tmp_path), cache).state
    (stored,) = cache.rglob(f"*{STATE_SUFFIX}")
    assert stored.read_bytes() == exported
    small = Limits(state_bytes=len(exported) - 1)
    with pytest.raises(BundleError, match="ranking state is over"):
        import_bundle(bundle, clone(tmp_path, name="c2"), tmp_path / "c2", limits=small)
    assert not list((tmp_path / "c2").rglob(f"*{STATE_SUFFIX}"))


def test_an_export_whose_map_is_memoised_still_holds_the_ranking_state(tmp_path):
    """The second export of a tree replays its memoised map, which needs no ranking state; with
    the stored state gone (evicted, or lost to a full disk) the export builds it again, so the
    bundle still serves a clone's other budgets and tasks."""
    from repomapper.cache import STATE_SUFFIX

    src = write_tree(tmp_path / "src", TREE)
    cache = tmp_path / "cache"
    first = export_bundle(src, tmp_path / "one.bundle", cache_dir=cache)
    (stored,) = cache.rglob(f"*{STATE_SUFFIX}")
    stored.unlink()
    again = export_bundle(src, tmp_path / "two.bundle", cache_dir=cache)
    assert again.maps == 1 and again.state_bytes == first.state_bytes > 0
    assert (tmp_path / "one.bundle").read_bytes() == (tmp_path / "two.bundle").read_bytes()


def test_a_state_the_disk_refuses_is_reported_not_claimed(made, tmp_path, monkeypatch):
    """A full disk when the state is written: the rows are imported, the state is not, and the
    result says so (the cache's own write gives up quietly, as a map's may)."""
    import errno

    import repomapper.cache as cache_module

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    _, bundle = made
    monkeypatch.setattr(cache_module.os, "replace", full)
    done = import_bundle(bundle, clone(tmp_path), tmp_path / "cache")
    assert done.rows == len(TREE) and not done.state
    assert any("ranking state could not be written" in n for n in done.notes)


def test_lexical_records_hold_each_files_postings_in_path_and_term_order(made, tmp_path):
    """The postings are read sorted and written per file as they come (a large tree's are
    never held at once): each file's record holds exactly its rows of the index's table, an
    empty file's none, in path order and term order."""
    src, bundle = made
    found = [r for r in records(bundle) if r.get("k") == "lex"]
    assert [r["path"] for r in found] == sorted(r["path"] for r in found)
    head = records(bundle)[0]
    assert head["counts"]["lex"] == len(found) and head["counts"]["row"] == len(TREE)
    cache = tmp_path / "cache"
    export_bundle(src, tmp_path / "again.bundle", cache_dir=cache)
    (db,) = [p for p in cache.glob("tags-*.sqlite3")]
    with sqlite3.connect(db) as conn:
        for r in found:
            rows = conn.execute(
                "SELECT term, tp, tn, td, tb FROM postings WHERE path=? ORDER BY term", (r["path"],)
            ).fetchall()
            assert list(r["postings"].items()) == [(t, list(tfs)) for t, *tfs in rows]
    assert any(not r["postings"] for r in found) == any(not TREE[r["path"]] for r in found)


def test_the_import_keys_the_clone_so_its_first_map_reads_no_file(made, tmp_path, monkeypatch):
    """The import reads and hashes the clone's files once (what its first map would do), so
    that map finds every file by its stat, as a warm run does."""
    import time

    import repomapper.extract as extract_module

    src, bundle = made
    fresh = clone(tmp_path)
    past = time.time_ns() - 3600 * 10**9  # (a file written in the last two seconds is read
    for top, _, names in os.walk(fresh):  # again by the next run: not what a clone looks like)
        for n in names:
            os.utime(Path(top, n), ns=(past, past))
    done = import_bundle(bundle, fresh, tmp_path / "cache")
    assert done.keyed == len(TREE)
    read: list[str] = []
    real = extract_module._hashed
    monkeypatch.setattr(
        extract_module, "_hashed", lambda path, blob: (read.append(path), real(path, blob))[1]
    )
    with RepoMap(fresh, cache_dir=tmp_path / "cache") as rm:
        rm.map()
        assert rm.last_stats.get("memoised") == 1
    assert read == []


def test_an_import_whose_clone_cannot_be_keyed_keeps_what_it_imported(made, tmp_path, monkeypatch):
    import repomapper.bundle.importer as importer

    def fails(root, cache_dir):
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(importer, "_keyed", fails)
    src, bundle = made
    done = import_bundle(bundle, clone(tmp_path), tmp_path / "cache")
    assert done.rows == len(TREE) and done.keyed == 0
    assert any("were not keyed" in note for note in done.notes)
