import os
import sqlite3

import pytest

from repomapper.cache import (
    CONTENT_DB,
    FEW_KEYS,
    CacheKey,
    SqliteTagCache,
    TagCache,
    cache_file_for,
    encode,
    open_cache,
)
from repomapper.model import (
    DEF,
    REF,
    Diagnostic,
    FileExtraction,
    FileSymbols,
    Import,
    Tag,
    reference_tag,
)


def sample(path="a.py"):
    return FileExtraction(
        path,
        (
            Tag(path, 1, 3, "f", DEF, "function", "", "def f():", "Doc."),
            Tag(path, 2, 2, "g", REF, "call", target="m.g"),
        ),
        (Import(path, "os.path", ("join",), False, 1, 0, ("j",), None),),
        "python_ast",
        "python",
        (Diagnostic("parse_error", "oops", path),),
    )


def test_round_trip_and_validity_by_content_and_fingerprint(tmp_path):
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    assert isinstance(cache, SqliteTagCache)
    key = CacheKey("a.py", 10, 20, "python_ast@1", "digest1")
    cache.store([(key, encode(sample()))])
    assert cache.lookup([key], full=True) == {"a.py": sample()}
    for stale in (
        CacheKey("a.py", 10, 20, key.fingerprint, "digest2"),  # other content
        CacheKey("a.py", 10, 20, "python_ast@2", "digest1"),  # other backends
        CacheKey("b.py", 10, 20, key.fingerprint, "digest1"),  # other path
        CacheKey("a.py", 10, 20, key.fingerprint, ""),  # unknown content
    ):
        assert cache.lookup([stale], full=True) == {}
    # the same content with another mtime (a fresh clone, a branch switched back) is a hit
    assert cache.lookup([CacheKey("a.py", 99, 20, key.fingerprint, "digest1")], full=True)
    cache.close()
    reopened = open_cache(tmp_path / "root", tmp_path / "cache")
    assert reopened.lookup([key], full=True) == {"a.py": sample()}
    # the ranking view is decoded from the summary alone, and equals the one derived from the tags
    assert reopened.lookup([key]) == {"a.py": FileSymbols.from_extraction(sample())}
    assert reopened.lookup([key])["a.py"].references == (("g", 1),)
    # another repository in the same cache directory shares the rows (a clone elsewhere)
    other = open_cache(tmp_path / "clone", tmp_path / "cache")
    assert other.lookup([key], full=True) == {"a.py": sample()}
    many = [CacheKey(f"m{i}.py", 1, 1, "x", f"d{i}") for i in range(FEW_KEYS + 5)]
    other.store([(k, encode(sample(k.path))) for k in many])
    assert other.lookup(many, full=True) == {k.path: sample(k.path) for k in many}


def test_a_plain_reference_is_stored_as_its_line_name_and_kind(tmp_path):
    plain = Tag("a.c", 7, 7, "kmalloc", REF, "call")
    other = (
        Tag("a.c", 7, 8, "kmalloc", REF, "call"),
        Tag("a.c", 7, 7, "kmalloc", REF, "call", scope="f"),
        Tag("a.c", 7, 7, "kmalloc", REF, "call", target="mm.kmalloc"),
        Tag("a.c", 7, 7, "kmalloc", DEF, "function"),
    )
    assert plain.to_row() == [7, "kmalloc", "call"]
    assert reference_tag("a.c", 7, "kmalloc", "call") == plain
    for tag in (plain, *other):
        assert Tag.from_row("a.c", tag.to_row()) == tag
    assert all(len(t.to_row()) == 9 for t in other)
    with pytest.raises(TypeError):  # a damaged row is not read as a reference
        Tag.from_row("a.c", ["7", "kmalloc", "call"])
    ex = FileExtraction("a.c", (other[3], plain, other[2]), (), "treesitter", "c", ())
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    key = CacheKey("a.c", 1, 1, "treesitter@1", "d1")
    cache.store([(key, encode(ex))])
    assert cache.lookup([key], full=True) == {"a.c": ex}


def test_cache_is_plain_json_never_pickle(tmp_path):
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    cache.store([(CacheKey("a.py", 1, 1, "x", "d"), encode(sample()))])
    cache.close()
    db = cache_file_for(tmp_path / "root", tmp_path / "cache").with_name(CONTENT_DB)
    row = sqlite3.connect(db).execute("SELECT defs, refs, imports FROM blobs").fetchone()
    assert row[0].startswith("[[") and '"def f():"' in row[0]
    assert '"m.g"' in row[1]
    assert '"os.path"' in row[2]


@pytest.mark.parametrize("which", ["repository", "content"])
def test_either_corrupt_database_is_moved_aside_and_rebuilt_once(tmp_path, which):
    db = cache_file_for(tmp_path / "root", tmp_path / "cache")
    if which == "content":
        db = db.with_name(CONTENT_DB)
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    assert [d.code for d in cache.diagnostics] == ["cache_rebuilt"]
    assert db.with_name(db.name + ".corrupt").read_bytes().startswith(b"this is not")
    key = CacheKey("a.py", 1, 1, "x", "d")
    cache.store([(key, encode(sample()))])
    cache.close()
    again = open_cache(tmp_path / "root", tmp_path / "cache")  # the next run: healthy and warm
    assert again.diagnostics == []
    assert again.lookup([key], full=True) == {"a.py": sample()}


def test_a_corrupt_cache_that_cannot_be_moved_falls_back_to_memory(tmp_path, monkeypatch):
    db = cache_file_for(tmp_path / "root", tmp_path / "cache")
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not a database" * 100)

    def refuse(self, target):
        raise PermissionError("no")

    monkeypatch.setattr(type(db), "replace", refuse)
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    assert [d.code for d in cache.diagnostics] == ["cache_unavailable"]
    key = CacheKey("a.py", 1, 1, "x", "d")
    cache.store([(key, encode(sample()))])
    assert cache.lookup([key], full=True) == {"a.py": sample()}


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores directory permissions")
def test_read_only_cache_dir_falls_back(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        cache = open_cache(tmp_path / "root", ro)
        assert [d.code for d in cache.diagnostics] == ["cache_unavailable"]
    finally:
        ro.chmod(0o700)


def test_unwritable_cache_path_falls_back(tmp_path):
    blocker = tmp_path / "file-not-dir"
    blocker.write_text("x")
    cache = open_cache(tmp_path / "root", blocker / "sub")
    assert [d.code for d in cache.diagnostics] == ["cache_unavailable"]
    key = CacheKey("a.py", 1, 1, "x", "d")
    cache.store([(key, encode(sample()))])
    assert cache.lookup([key], full=True)["a.py"] == sample()


def test_locked_database_falls_back_to_memory(tmp_path):
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    db = cache_file_for(tmp_path / "root", tmp_path / "cache").with_name(CONTENT_DB)
    locker = sqlite3.connect(db, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        cache.content.execute("PRAGMA busy_timeout=50")
        key = CacheKey("a.py", 1, 1, "x", "d")
        cache.store([(key, encode(sample()))])
        assert [d.code for d in cache.diagnostics] == ["cache_unavailable"]
        assert cache.lookup([key], full=True) == {"a.py": sample()}
    finally:
        locker.execute("ROLLBACK")


def test_disabled_cache_is_memory_only(tmp_path):
    cache = open_cache(tmp_path, tmp_path / "c", enabled=False)
    assert cache.location == ":memory:" and not (tmp_path / "c").exists()


def test_the_shared_content_table_is_bounded_oldest_first(tmp_path, monkeypatch):
    import repomapper.cache as cache_module

    def fill(n, start=0):
        cache = open_cache(tmp_path / "root", tmp_path / "cache")
        keys = [CacheKey(f"f{i}.py", 1, 1, "x", f"d{i}") for i in range(start, start + n)]
        for k in keys:
            cache.store([(k, encode(sample(k.path)))])
        cache.close()  # a cache that stored rows evicts when it is closed
        return keys

    def present(keys):
        cache = open_cache(tmp_path / "root", tmp_path / "cache")
        try:
            return set(cache.lookup(keys, full=True))
        finally:
            cache.close()

    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 5)
    old = fill(4)
    new = fill(4, 4)
    assert present(old + new) == {k.path for k in old[3:] + new}  # the oldest three left
    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 1000)
    monkeypatch.setattr(cache_module, "MAX_CONTENT_BYTES", 1)  # over the byte budget: a tenth
    more = fill(1, 8)
    assert present(old + new + more) == {k.path for k in new + more}


def test_closing_counts_the_rows_only_when_those_stored_since_could_pass_the_bound(
    tmp_path, monkeypatch
):
    """Counting the content table scans it (every edit of a large tree paid it on close):
    the rows last counted plus those stored since, kept by triggers whoever writes them,
    bound it without a count; rows another process or version stored still count."""
    import repomapper.cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 10)
    monkeypatch.setattr(cache_module, "EVICT_SLACK", 0.0)

    def store(*indices, trace=None):
        cache = open_cache(tmp_path / "root", tmp_path / "cache")
        assert isinstance(cache, SqliteTagCache)
        for i in indices:
            cache.store([(CacheKey(f"f{i}.py", 1, 1, "x", f"d{i}"), encode(sample(f"f{i}.py")))])
        if trace is not None:
            cache.content.set_trace_callback(trace.append)
        cache.close()

    def counts(statements):
        return sum("COUNT(*)" in s for s in statements)

    first: list[str] = []
    store(0, 1, 2, trace=first)
    assert counts(first) == 1  # nothing recorded yet: counted once
    again: list[str] = []
    store(3, trace=again)
    assert counts(again) == 0  # 3 counted + 1 stored, within 10
    with sqlite3.connect(tmp_path / "cache" / CONTENT_DB) as other:  # another writer's rows
        other.executemany(
            "INSERT INTO blobs SELECT path || ?, digest, fingerprint, written, plugin, language,"
            " defs, refs, summary, imports, diagnostics FROM blobs WHERE path = 'f0.py'",
            [(f"-{i}",) for i in range(8)],
        )
    past: list[str] = []
    store(4, trace=past)
    assert counts(past) >= 1
    with sqlite3.connect(tmp_path / "cache" / CONTENT_DB) as conn:
        assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone() == (10,)


def test_the_content_table_keeps_the_rows_of_the_repositories_used_last(tmp_path, monkeypatch):
    """Eviction goes by use, not by when a row was written: a repository mapped again since
    keeps its rows, which were written first; a repository not used since loses its own."""
    import repomapper.cache as cache_module

    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 6)

    def extract(name, paths):
        (tmp_path / name).mkdir()
        cache = open_cache(tmp_path / name, tmp_path / "cache")
        keys = [CacheKey(p, 1, 1, "x", f"{name}-{p}") for p in paths]
        cache.record_digests([(k.path, 1, 1, k.digest, 2, 0, "") for k in keys])
        cache.store([(k, encode(sample(k.path))) for k in keys])
        cache.close()
        return keys

    def present(keys):
        cache = open_cache(tmp_path / "daily", tmp_path / "cache")
        try:
            return {k.digest for k in keys if cache.lookup([k], full=True)}
        finally:
            cache.close()

    daily = extract("daily", ["a.py", "b.py", "c.py"])
    once = extract("once", ["x.py", "y.py"])
    open_cache(tmp_path / "daily", tmp_path / "cache").close()  # a warm run: used, nothing stored
    later = extract("later", ["z.py", "w.py"])  # seven rows: one goes
    assert present(daily + once + later) == {k.digest for k in daily + once[1:] + later}


def test_rows_another_version_of_the_code_made_go_before_the_current_ones(tmp_path, monkeypatch):
    """A repository's rows of another code version (written later, say by a run of an older
    release) are evicted before the rows the current code looks up, at the same use."""
    import repomapper.cache as cache_module

    root = tmp_path / "root"
    root.mkdir()

    def keys(fingerprint, paths):
        return [CacheKey(p, 1, 1, fingerprint, f"d-{p}") for p in paths]

    current = keys("new", ["a.py", "b.py", "c.py"])
    cache = open_cache(root, tmp_path / "cache")
    cache.record_digests([(k.path, 1, 1, k.digest, 2, 0, "") for k in current])
    cache.store([(k, encode(sample(k.path))) for k in current])
    cache.close()
    other = keys("old", ["a.py", "b.py", "c.py"])
    cache = open_cache(root, tmp_path / "cache")
    cache.store([(k, encode(sample(k.path))) for k in other])
    cache.close()
    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 4)
    cache = open_cache(root, tmp_path / "cache")
    assert set(cache.lookup(current)) == {"a.py", "b.py", "c.py"}
    edited = keys("new", ["d.py"])
    cache.record_digests([(k.path, 1, 1, k.digest, 2, 0, "") for k in edited])
    cache.store([(k, encode(sample(k.path))) for k in edited])
    cache.close()  # seven rows: the three of the other version go
    cache = open_cache(root, tmp_path / "cache")
    try:
        assert set(cache.lookup(current + edited)) == {"a.py", "b.py", "c.py", "d.py"}
        assert cache.lookup(other) == {}
    finally:
        cache.close()


def test_a_closed_cache_leaves_no_write_ahead_log_after_deferred_reads(tmp_path):
    """The read-only connection of deferred reads is closed before the writable one, which then
    checkpoints the log and removes it: the next run does not copy back what this one wrote."""
    (tmp_path / "root").mkdir()
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    keys = [CacheKey(f"m{i:02}.py", 1, 1, "x", f"d{i}") for i in range(20)]
    cache.store([(k, encode(sample(k.path))) for k in keys])
    found = cache.lookup(keys, deferred=True)
    assert [t.name for t in found["m00.py"].definitions]  # read through the reader
    cache.close()
    assert not list((tmp_path / "cache").glob("*-wal"))


def test_in_memory_cache_replaces_maps_after_remembering_token_counts() -> None:
    # the counts once shared the maps' dict under tuple keys, which a prefix scan tripped on
    cache = TagCache()
    cache.remember_counts("cl100k_base", {b"digest": 7})
    cache.put_map("state:1", "old")
    cache.put_map("state:2", "new", replaces="state:")
    assert cache.get_map("state:1") is None
    assert cache.get_map("state:2") == "new"
    assert cache.count_of("cl100k_base", b"digest") == 7


def test_deferred_rows_read_in_chunks_answer_as_rows_read_at_once(tmp_path, monkeypatch):
    from repomapper.cache import _DeferredTexts

    monkeypatch.setattr(_DeferredTexts, "ONE_BY_ONE", 2)
    monkeypatch.setattr(_DeferredTexts, "CHUNK", 3)
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    keys = [CacheKey(f"m{i:02}.py", 1, 1, "x", f"d{i}") for i in range(20)]
    cache.store([(k, encode(sample(k.path))) for k in keys])
    expected = {k.path: FileSymbols.from_extraction(sample(k.path)) for k in keys}
    order = keys[:5] + keys[12:] + keys[5:12]  # past the single reads, out of order too
    found = cache.lookup(keys, deferred=True)
    for k in order:
        fs = found[k.path]
        assert (tuple(fs.definitions), tuple(fs.references), tuple(fs.imports)) == (
            expected[k.path].definitions,
            expected[k.path].references,
            expected[k.path].imports,
        )
    # a definitions text read for the table and let go is read again when a map shows it
    again = cache.lookup(keys, deferred=True)
    for k in order:
        assert again[k.path].definitions.facts() == [("f", "function", "")]
    for k in order:
        assert tuple(again[k.path].definitions) == expected[k.path].definitions
    cache.close()


@pytest.mark.parametrize("on_disk", [True, False])
def test_remembered_imports_are_read_back_one_by_one_for_their_scope_only(tmp_path, on_disk):
    cache = open_cache(tmp_path / "root", tmp_path / "cache") if on_disk else TagCache()
    rows = [((f"m{i}.py", f"d{i}", "fp"), {f"t{i}.py": i + 1}) for i in range(2500)]
    cache.store_imports("scope-a", rows[:1000])
    cache.store_imports("scope-a", rows[1000:])  # remembered a chunk at a time
    loaded = cache.load_imports("scope-a")
    assert not isinstance(loaded, dict)  # an iterator: a large tree's rows are not held at once
    assert dict(loaded) == dict(rows)
    cache.store_imports("scope-b", rows[:1])  # another scope forgets the first one's rows
    assert dict(cache.load_imports("scope-a")) == {}
    assert dict(cache.load_imports("scope-b")) == dict(rows[:1])
    cache.close()


@pytest.mark.parametrize(
    "data",
    [b"", b"not an archive", b"PK\x03\x04 truncated", b"\x93NUMPY\x01\x00v\x00{'descr': '|O'}"],
)
def test_a_damaged_stored_state_protects_no_rows_and_evicts_nothing_wrongly(tmp_path, data):
    """Eviction reads the stored state's files (whose old rows it keeps); a state file that is
    not one is read as none, never unpickled, and the repository's own files still count."""
    from repomapper.cachedir import keys_by_use

    (tmp_path / "root").mkdir()
    cache = open_cache(tmp_path / "root", tmp_path / "cache")
    key = CacheKey("a.py", 1, 1, "x", "d")
    cache.record_digests([(key.path, 1, 1, key.digest, 2, 0, "")])
    cache.store([(key, encode(sample()))])
    cache.state_path.write_bytes(data)
    cache.close()
    [(_, keys)] = keys_by_use(tmp_path / "cache")
    assert keys == [("a.py", "d")]


def test_a_full_table_is_evicted_below_its_bound_so_the_next_rows_evict_nothing(
    tmp_path, monkeypatch
):
    import repomapper.cache as cache_module

    def store(start, n):
        cache = open_cache(tmp_path / "root", tmp_path / "cache")
        keys = [CacheKey(f"f{i}.py", 1, 1, "x", f"d{i}") for i in range(start, start + n)]
        cache.store([(k, encode(sample(k.path))) for k in keys])
        cache.close()

    def count():
        with sqlite3.connect(tmp_path / "cache" / CONTENT_DB) as conn:
            return conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0]

    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 100)
    monkeypatch.setattr(cache_module, "EVICT_SLACK", 0.05)
    store(0, 100)
    assert count() == 100  # at the bound: nothing goes
    store(100, 1)
    assert count() == 95  # over it: down to the slack below
    store(101, 5)
    assert count() == 100  # the next rows fit without evicting
