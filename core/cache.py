"""The tag cache: plain JSON rows in SQLite, never pickle.

Rows are keyed by content: a file's path, the digest of its bytes and the answering backends'
fingerprint. They live in one database shared by every repository in the cache directory
(``content.sqlite3``, with the memoised maps, which are keyed by content too), so a fresh clone,
a branch switch or a ``git stash`` finds unchanged files; a bounded number of rows is kept: rows
no repository's files or stored state refer to leave first, then those of the repositories used
longest ago (see :meth:`SqliteTagCache._evict_rows`). Each repository has its own database (one
per root) for the digest of each path with the mtime and size it was taken at (a warm run reads
no file), memoised graph pages and the lexical index. Anything wrong with a database (corrupt,
locked, read-only, disk full) turns the cache into an in-memory one with one warning; mapping
goes on. Each repository's database records its root and when it was last used;
:mod:`repomapper.cachedir` lists and prunes the directory by these, and a closing cache applies
its size bound now and then (see :meth:`SqliteTagCache.close`).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import io
import json
import logging
import os
import sqlite3
import sys
import threading
import time
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple, Protocol

import platformdirs

from .cachetag import tag_folder
from .model import DEF, Diagnostic, FileExtraction, FileSymbols, Import, Tag, tag_sort_key
from .rowtext import Deferred, RowImports, RowReferences, RowTags, RowTargets, Summary, Text

log = logging.getLogger(__name__)

#: the tables' layout (their columns); what the rows hold is keyed by the code that made it
#: (content rows by the extraction's, memoised maps by the map's: repomapper.codedigest)
SCHEMA_VERSION = "8"
#: Memoised results kept per repository (the most recent ones), and in the shared database.
MAX_MAPS = 16
#: token counts of rendered texts kept per repository (see TagCache.count_of)
MAX_COUNTS = 20_000
MAX_SHARED_MAPS = 64
APP_NAME = "repomapper"


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME))


#: a repository's stored ranking state, next to its database
STATE_SUFFIX = ".state.npz"
#: the meta key of the file updates counted for the stored state since it was stored (see
#: :func:`repomapper.snapshot.drift_limit`)
STATE_DRIFT = "state_drift"


def cache_file_for(root: Path, cache_dir: Path | None = None) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return (cache_dir or default_cache_dir()) / f"tags-{digest}.sqlite3"


def has_stored_state(root: Path, cache_dir: Path | None = None) -> bool:
    """Whether the cache holds a stored ranking state for ``root`` (see
    :attr:`SqliteTagCache.state_path`), found without opening it."""
    try:
        return cache_file_for(root, cache_dir).with_suffix(STATE_SUFFIX).is_file()
    except (OSError, RuntimeError, ValueError):  # (a root that cannot be: the map says why)
        return False


class CacheKey(NamedTuple):
    """What a file's cache row is looked up by (a named tuple: one is made per file per map)."""

    path: str
    mtime_ns: int
    size: int
    fingerprint: str
    #: the file's content digest ("" when unknown: such a key is never looked up or stored)
    digest: str = ""

    @property
    def content(self) -> tuple[str, str, str]:
        """What a cached row is keyed by: path, content, backends."""
        return (self.path, self.digest, self.fingerprint)


#: makes a file's summary from its row's head (backend, language, ..., the diagnostics' text)
#: and its parsed diagnostics
HeadMaker = Callable[[str, tuple[Any, ...], tuple[Diagnostic, ...]], FileSymbols]

#: The columns of a cached file after the key: who answered, then JSON payloads.
EncodedRow = tuple[str | None, str | None, str, str, str, str, str]


class RowHeads(Protocol):
    """Rows known without reading them, by content key: (backend, language, "", "", "", "",
    diagnostics), as a deferred lookup reads them (see :meth:`TagCache.lookup`)."""

    def get(self, content: tuple[str, str, str], /) -> EncodedRow | None: ...


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=_listed)


def _listed(value: object) -> list[Any]:
    """A sequence JSON does not know (a summary's :class:`NameCounts`) as a list."""
    if isinstance(value, Sequence):
        return list(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def encode(ex: FileExtraction, summary: FileSymbols | None = None) -> EncodedRow:
    """Plain JSON for a file: definitions, references, the reference summary, imports, diagnostics.

    ``summary`` is ``FileSymbols.from_extraction(ex)`` when the caller already has it."""
    if summary is None:
        summary = FileSymbols.from_extraction(ex)
    return (
        ex.plugin,
        ex.language,
        _dumps([t.to_row() for t in summary.definitions]),
        _dumps([t.to_row() for t in ex.tags if t.kind != DEF]),
        _dumps({"c": summary.references, "t": summary.targets}),
        _dumps([i.to_row() for i in ex.imports]),
        _dumps([[d.code, d.message, d.severity] for d in ex.diagnostics]),
    )


def _tag(path: str, row: list[Any]) -> Tag:
    """A definition from its row, with its name, kinds and scope interned: the same names recur
    across thousands of files, and one string each keeps the repository's state smaller."""
    if len(row) >= 5:
        for i in (2, 3, 4, 5):
            if i < len(row) and isinstance(row[i], str):
                row[i] = sys.intern(row[i])
    return Tag.from_row(path, row)


#: a row's diagnostics text when it has none (most rows: it is not parsed)
NO_DIAGNOSTICS = "[]"


def row_diagnostics(path: str, text: str) -> tuple[Diagnostic, ...]:
    """A row's diagnostics from their JSON text (:data:`NO_DIAGNOSTICS` is not parsed); a text
    of another shape raises ``ValueError`` or ``TypeError``."""
    if text == NO_DIAGNOSTICS:
        return ()
    return tuple(Diagnostic(c, m, path, s) for c, m, s in _diagnostic_rows(text))


@functools.lru_cache(maxsize=1024)
def _diagnostic_rows(text: str) -> tuple[tuple[Any, Any, Any], ...]:
    """(code, message, severity) of each diagnostic of a row's text, parsed once per text:
    many rows say the same (a large tree's 11,000 files no backend answers each say
    ``no_backend`` in the same words)."""
    return tuple((c, m, s) for c, m, s in json.loads(text))


def _common(
    path: str, defs: str, imports: str, diags: str
) -> tuple[tuple[Tag, ...], tuple[Import, ...], tuple[Diagnostic, ...]]:
    return (
        tuple(_tag(path, r) for r in json.loads(defs)),
        tuple(Import.from_row(path, r) for r in json.loads(imports)),
        row_diagnostics(path, diags),
    )


def decode_symbols(path: str, row: EncodedRow, deferred: Deferred | None = None) -> FileSymbols:
    """A file's summary, each part parsed when first read (see :mod:`repomapper.rowtext`);
    with ``deferred``, its texts are read from the cache then too."""
    diags = row[6]
    for text in (row[2], row[4], row[5], diags):
        if not isinstance(text, str):
            raise TypeError("a cached row's parts are text")
    return _symbols(path, row, row_diagnostics(path, diags), deferred)


def _symbols(
    path: str,
    row: tuple[Any, ...],
    diagnostics: tuple[Diagnostic, ...],
    deferred: Deferred | None,
) -> FileSymbols:
    plugin, language, defs, _refs, summary, imports = row[:6]
    texts: tuple[Text, Text, Text] = (defs, summary, imports)
    if deferred is not None:  # each read from the cache when first needed
        texts = (deferred.definitions, deferred.summary, deferred.imports)
    refs = Summary(path, texts[1])
    return FileSymbols(
        path,
        RowTags(path, texts[0]),
        RowReferences(refs),
        RowTargets(refs),
        RowImports(path, texts[2]),
        plugin,
        language,
        diagnostics,
    )


def decode_full(path: str, row: EncodedRow) -> FileExtraction:
    plugin, language, defs, refs, _summary, imports, diags = row
    definitions, imps, diagnostics = _common(path, defs, imports, diags)
    tags = list(definitions) + [Tag.from_row(path, r) for r in json.loads(refs)]
    tags.sort(key=tag_sort_key)
    return FileExtraction(path, tuple(tags), imps, plugin, language, diagnostics)


#: a digest lookup of at most this many paths asks per path; more read the whole table
FEW_KEYS = 200
#: content rows kept in the shared table, and the bytes they may fill (room for a kernel-sized
#: tree's rows)
MAX_CONTENT_ROWS = 200_000
MAX_CONTENT_BYTES = 8 << 30
#: a table over its row bound goes down to this share of the bound below it
EVICT_SLACK = 0.02
#: the content database's meta keys for its rows when last counted and the rows stored (less
#: those deleted) since, kept by triggers: their sum bounds the rows without a count (a scan of
#: the table, which every edit of a large tree paid on closing its cache)
ROWS_COUNTED, ROWS_ADDED = "rows_counted", "rows_added"
#: (git blob id, content digest) pairs kept in the content database, the newest first (about
#: 80 bytes each): enough for the files of many large trees
MAX_GIT_BLOBS = 2_000_000
#: a file whose mtime is this close to when its digest was taken is hashed again (file systems
#: with coarse timestamps can change a file twice within one tick; git calls this "racy")
RACY_NS = 2_000_000_000
#: the shared database of content rows and memoised maps, in the cache directory
CONTENT_DB = "content.sqlite3"
#: the content database's layout, as SCHEMA_VERSION is the repository database's
CONTENT_SCHEMA = "1"

#: path -> (mtime_ns, size, digest, when the digest was taken in ns, the file's ctime_ns then),
#: as one reader took them (see :func:`repomapper.extract.reader`)
StatRows = dict[str, tuple[int, int, str, int, int]]
#: a stat row as it is recorded: the path, the columns of :data:`StatRows`, the reader
StatRow = tuple[str, int, int, str, int, int, str]


def content_digest(path: str | Path) -> str:
    """The file's content digest (BLAKE2b, 128 bits, hex); "" when it cannot be read."""
    try:
        with open(path, "rb") as f:
            return digest_of(f.read())
    except OSError:
        return ""


def digest_of(data: bytes) -> str:
    """A content's digest (see :func:`content_digest`)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


class TagCache:
    """Rows keyed by content: (path, content digest, backends' fingerprint). Which digest a
    path has is remembered per repository with the file's mtime and size, so a warm run reads
    no file, while a fresh clone, a branch switch or ``git stash`` finds unchanged files by
    their content. In memory; :func:`open_cache` gives the SQLite one."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        #: path -> (the reader that took its row, the row): one row per path, as on disk
        self.stats: dict[str, tuple[str, tuple[int, int, str, int, int]]] = {}
        #: git blob id -> content digest (see :meth:`digests_of_blobs`)
        self.git_blobs: dict[str, str] = {}
        self.imports: dict[str, dict[tuple[str, str, str], dict[str, int]]] = {}
        #: memoised maps and the stored state, by key
        self.meta: dict[str, str | bytes] = {}
        #: (encoder, text digest) -> token count
        self.counts: dict[tuple[str, bytes], int] = {}
        self.diagnostics: list[Diagnostic] = []
        self.location = ":memory:"
        #: the backends' fingerprints (the extraction code's included) of the rows this cache
        #: looked up or stored: the current code's, which eviction keeps over other versions'
        self.fingerprints: set[str] = set()
        #: a token of the content rows that changes whenever a row a repository's stored state
        #: was made from may have gone (the table made afresh, an eviction that reached such a
        #: row); None where rows are not kept between processes. A stored state written at
        #: the current generation finds every row it was made from (see
        #: :meth:`keeps_state_rows`)
        self.generation: str | None = None

    def digests(self, paths: Collection[str], reader: str) -> StatRows:
        """The digest ``reader`` remembers of each of ``paths``, with the stat it was taken at
        (what another reader took is not known to this one); of more paths than asked when
        many are."""
        stats = self.stats
        return {p: found[1] for p in paths if (found := stats.get(p)) and found[0] == reader}

    def record_digests(self, rows: Iterable[StatRow]) -> None:
        """Remember (path, mtime_ns, size, digest, taken_ns, ctime_ns, reader) rows."""
        for path, mtime_ns, size, digest, taken, ctime_ns, who in rows:
            self.stats[path] = (who, (mtime_ns, size, digest, taken, ctime_ns))

    def digests_of_blobs(self, blobs: Collection[str]) -> dict[str, str]:
        """The content digest of each git blob id among ``blobs`` this cache learned (see
        :mod:`repomapper.gitindex`): shared by every repository of the cache directory, and
        only ever learned from content this machine read and found to be that blob."""
        known = self.git_blobs
        return {b: d for b in blobs if (d := known.get(b))}

    def record_blobs(self, pairs: Iterable[tuple[str, str]]) -> None:
        """Remember (git blob id, content digest) pairs, each from a file read and hashed as
        both."""
        self.git_blobs.update(pairs)

    def lookup(
        self,
        keys: Iterable[CacheKey],
        full: bool = False,
        deferred: bool = False,
    ) -> dict[str, FileExtraction | FileSymbols]:
        """Every cached entry among ``keys`` (same path, content and backends). ``full`` decodes
        every reference tag; otherwise the summary ranking needs, each part parsed when first
        read (see :mod:`repomapper.rowtext`), and with ``deferred`` its texts read from the
        cache then too (a run that reads few files' summaries)."""
        hits: dict[str, FileExtraction | FileSymbols] = {}
        keys = [k for k in keys if k.digest]
        self.fingerprints.update(k.fingerprint for k in keys)
        light = deferred and not full
        rows = self._rows_of(keys, full, light) if keys else {}
        batch = _DeferredTexts(self, [k for k in keys if k.content in rows])
        for key in keys:
            row = rows.get(key.content)
            if row is None:
                continue
            try:
                if full:
                    hits[key.path] = decode_full(key.path, row)
                elif light:
                    fetch = Deferred(key.path, functools.partial(batch.texts, key))
                    hits[key.path] = decode_symbols(key.path, row, fetch)
                else:
                    hits[key.path] = decode_symbols(key.path, row)
            except (ValueError, TypeError, KeyError) as exc:  # a row we cannot read is a miss
                log.debug("cache row for %s unreadable: %s", key.path, exc)
        return hits

    def from_heads(
        self, keys: Sequence[CacheKey], heads: RowHeads
    ) -> tuple[dict[str, tuple[Any, ...]], HeadMaker, list[CacheKey]]:
        """The heads of the ``keys`` that ``heads`` knows, by path, with what makes each such
        file's summary (as :meth:`lookup` with ``deferred`` makes it: its texts read from the
        cache when first read), and the keys it does not know. A stored state knows the backend,
        language and diagnostics of every file it was made from, and is trusted while
        :meth:`keeps_state_rows` (its rows' texts are then in the table)."""
        known: dict[str, tuple[Any, ...]] = {}
        by_path: dict[str, CacheKey] = {}
        rest: list[CacheKey] = []
        for key in keys:
            head = heads.get(key.content) if key.digest else None
            if head is None:
                rest.append(key)
            else:
                known[key.path] = head
                by_path[key.path] = key
        self.fingerprints.update(k.fingerprint for k in by_path.values())
        batch = _DeferredTexts(self, list(by_path.values()))

        def make(
            path: str, head: tuple[Any, ...], diagnostics: tuple[Diagnostic, ...]
        ) -> FileSymbols:
            fetch = Deferred(path, functools.partial(batch.texts, by_path[path]))
            return _symbols(path, head, diagnostics, fetch)

        return known, make, rest

    def _rows_of(
        self, keys: list[CacheKey], full: bool, light: bool = False
    ) -> dict[tuple[str, str, str], tuple[Any, ...]]:
        """Rows by content key; ``light`` leaves out the texts (see :meth:`row_texts`)."""
        return {k.content: self.rows[k.content] for k in keys if k.content in self.rows}

    def row_texts(self, key: CacheKey) -> tuple[str, str, str] | None:
        """A row's definitions, reference summary and imports, or None when it is gone."""
        return self.row_texts_many([key]).get(key.content)

    def row_texts_many(self, keys: list[CacheKey]) -> dict[tuple[str, str, str], tuple[Any, ...]]:
        """:meth:`row_texts` of several rows, by content key (rows gone are left out)."""
        found = {}
        for key in keys:
            row = self.rows.get(key.content)
            if row is not None:
                found[key.content] = (row[2], row[4], row[5])
        return found

    def store(self, items: Iterable[tuple[CacheKey, EncodedRow]]) -> None:
        """Store encoded rows (see :func:`encode`); a key without a digest is not stored."""
        for key, row in items:
            if key.digest:
                self.rows[key.content] = tuple(row)

    def get_map(self, key: str) -> str | bytes | None:
        """A memoised result of this repository for an input digest (a map's JSON, a state
        snapshot's bytes), or None."""
        return self.meta.get(f"map:{key}")

    def put_map(self, key: str, value: str | bytes, replaces: str | None = None) -> None:
        """Memoise ``value`` under ``key``; with ``replaces``, every other key starting with
        that prefix is forgotten (one state snapshot per repository, say)."""
        if replaces:
            for old in [k for k in self.meta if k.startswith(f"map:{replaces}")]:
                del self.meta[old]
        self.meta[f"map:{key}"] = value

    def read_state(self) -> BinaryIO | None:
        """The repository's stored ranking state (see :mod:`repomapper.snapshot`) as a binary
        file for the caller to close, or None."""
        found = self.meta.get("state")
        return io.BytesIO(found) if isinstance(found, bytes) else None

    def write_state(self, write: Callable[[BinaryIO], None], generation: str | None = None) -> None:
        """Store the repository's ranking state, written by ``write`` to a binary file; it
        replaces the one stored before. ``generation``: the cache's :attr:`generation` when
        every row the state was made from is in the cache (rows just looked up or stored)."""
        out = io.BytesIO()
        write(out)
        self.meta["state"] = out.getvalue()

    def add_state_drift(self, state: str, changed: int) -> int:
        """Count ``changed`` more files updated from the stored state ``state`` (an identity
        of the stored file); returns how many were counted for it since it was stored (a
        state of another identity starts again from ``changed``)."""
        return _drifted(self.meta.get(STATE_DRIFT), state, changed, self.meta.__setitem__)

    def reset_state_drift(self) -> None:
        """Forget the updates counted for the stored state (it is being built again)."""
        self.meta.pop(STATE_DRIFT, None)

    def keeps_state_rows(self) -> bool:
        """Whether every row the stored state was made from is still in the cache: it was
        written at the rows' :attr:`generation`, which no eviction of a row a stored state was
        made from has changed since."""
        return False

    def count_of(self, encoder: str, key: bytes) -> int | None:
        """A text's remembered token count under ``encoder`` (``key``: the text's digest)."""
        return self.counts.get((encoder, key))

    def remember_counts(self, encoder: str, counts: Mapping[bytes, int]) -> None:
        """Remember texts' token counts (the newest MAX_COUNTS per repository are kept)."""
        for key, n in counts.items():
            self.counts[(encoder, key)] = n

    def get_shared_map(self, key: str) -> str | None:
        """A memoised map for a digest of content (no path outside the repository in it), so a
        clone of the same tree replays it too."""
        return _shared_text(self.get_map(key))

    def put_shared_map(self, key: str, value: str) -> None:
        self.put_map(key, value)

    def load_imports(self, scope: str) -> Iterator[tuple[tuple[str, str, str], dict[str, int]]]:
        """Resolved imports remembered for ``scope`` (a digest of everything resolution reads
        besides the importer: the file set and the files that are not mapped), by the
        importer's content key (path, digest, backends), one at a time (a large tree's are
        many megabytes as objects). Read them before storing more."""
        yield from list(self.imports.get(scope, {}).items())

    def store_imports(
        self, scope: str, rows: Iterable[tuple[tuple[str, str, str], dict[str, int]]]
    ) -> None:
        """Remember resolved imports for ``scope``; those of any other scope are forgotten."""
        kept = self.imports.get(scope, {})
        kept.update(rows)
        self.imports = {scope: kept}

    def close(self) -> None:
        pass


_ROW_COLUMNS = "plugin, language, defs, {refs}, summary, imports, diagnostics"
_LIGHT_COLUMNS = "plugin, language, '', '', '', '', diagnostics"


_MAPS_TABLE = "CREATE TABLE IF NOT EXISTS maps (key TEXT PRIMARY KEY, created INTEGER, result TEXT)"


def _schema(conn: sqlite3.Connection, version: str, tables: tuple[str, ...], *create: str) -> bool:
    """Bring a database to ``version``: its ``tables`` dropped when another version made them,
    ``create`` run, the version stamped (which also proves the database is writable: read-only
    file systems and locked databases fail here). Whether the tables were made afresh."""
    conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
    found = conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
    fresh = found is None or found[0] != version
    if fresh:
        for table in tables:
            conn.execute(f"DROP TABLE IF EXISTS {table}")
    for statement in create:
        conn.execute(statement)
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (version,))
    return fresh


def _init_root(conn: sqlite3.Connection) -> None:
    _schema(
        conn,
        SCHEMA_VERSION,
        ("files", "maps", "imports"),
        "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,"
        " digest TEXT, taken_ns INTEGER, ctime_ns INTEGER, reader TEXT)",
        _MAPS_TABLE,
        "CREATE TABLE IF NOT EXISTS counts (encoder TEXT, key BLOB, tokens INTEGER, used INTEGER,"
        " PRIMARY KEY (encoder, key))",
        "CREATE TABLE IF NOT EXISTS imports (scope TEXT, path TEXT, digest TEXT, fingerprint TEXT,"
        " targets TEXT, PRIMARY KEY (scope, path, digest, fingerprint)) WITHOUT ROWID",
    )


def _row_triggers() -> tuple[str, str]:
    """Triggers that keep :data:`ROWS_ADDED` the rows stored minus the rows deleted since the
    last count, by whatever process or version of the code writes the table (a row that
    ``INSERT OR REPLACE`` replaces counts as stored: the sum stays an upper bound)."""
    update = f"UPDATE meta SET value = CAST(value AS INTEGER) {{}} 1 WHERE key = '{ROWS_ADDED}'"
    return (
        f"CREATE TRIGGER IF NOT EXISTS blobs_in AFTER INSERT ON blobs BEGIN {update.format('+')};"
        " END",
        f"CREATE TRIGGER IF NOT EXISTS blobs_out AFTER DELETE ON blobs BEGIN {update.format('-')};"
        " END",
    )


def _init_content(conn: sqlite3.Connection) -> str:
    """Bring the content database to its layout; its rows' generation (see
    :attr:`TagCache.generation`)."""
    fresh = _schema(
        conn,
        CONTENT_SCHEMA,
        ("blobs", "maps", "git_blobs"),
        "CREATE TABLE IF NOT EXISTS blobs (path TEXT, digest TEXT, fingerprint TEXT,"
        " written INTEGER, plugin TEXT, language TEXT, defs TEXT, refs TEXT, summary TEXT,"
        " imports TEXT, diagnostics TEXT, PRIMARY KEY (path, digest, fingerprint)) WITHOUT ROWID",
        "CREATE INDEX IF NOT EXISTS blobs_written ON blobs (written)",
        "CREATE INDEX IF NOT EXISTS blobs_head ON blobs (path, digest, fingerprint, plugin,"
        " language, diagnostics)",
        _MAPS_TABLE,
        "CREATE TABLE IF NOT EXISTS git_blobs (blob TEXT PRIMARY KEY, digest TEXT)",
        *_row_triggers(),
        "CREATE TEMP TABLE IF NOT EXISTS wanted (path TEXT, digest TEXT, fingerprint TEXT)",
    )
    found = conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()
    if fresh or found is None or not isinstance(found[0], str):
        return _new_generation(conn)
    return str(found[0])


def _new_generation(conn: sqlite3.Connection) -> str:
    """Stamp the content database with a new generation: rows a stored state was made from may
    be gone."""
    generation = os.urandom(8).hex()
    conn.execute("INSERT OR REPLACE INTO meta VALUES ('generation', ?)", (generation,))
    return generation


class _DeferredTexts:
    """The texts of the rows one lookup deferred: read one row at a time while few are asked
    for (a run that updates a stored state reads a few files), and in chunks, in the lookup's
    order, once more are (a state built from every summary, an index reading them all: each
    text is let go once parsed, so only a chunk's wait in memory at a time)."""

    #: rows read one at a time before the rest are read in chunks: at least this many, and an
    #: eighth of the lookup's (a row alone costs about twice its share of a pass over all)
    ONE_BY_ONE = 64
    #: rows read at once past that
    CHUNK = 2048

    def __init__(self, cache: TagCache, keys: list[CacheKey]):
        self._cache, self._keys = cache, keys
        self._asked: set[tuple[str, str, str]] = set()
        self._read: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        self._at: dict[tuple[str, str, str], int] | None = None
        self._lock = threading.Lock()

    def texts(self, key: CacheKey) -> tuple[str, str, str] | None:
        """A row's texts (each row is asked for once, and again only when a part read before
        is needed again: then it is read on its own)."""
        with self._lock:
            found = self._read.pop(key.content, None)
            if found is not None:
                return found
            asked = key.content in self._asked
            self._asked.add(key.content)
            if asked or (
                self._at is None and len(self._asked) <= max(self.ONE_BY_ONE, len(self._keys) // 8)
            ):
                return self._cache.row_texts(key)
            if self._at is None:
                self._at = {k.content: i for i, k in enumerate(self._keys)}
            i = self._at.get(key.content)
            if i is None:
                return self._cache.row_texts(key)
            chunk = [key]
            for k in self._keys[i + 1 : i + self.CHUNK]:
                if k.content not in self._asked:
                    chunk.append(k)
                    self._asked.add(k.content)
            self._read.update(self._cache.row_texts_many(chunk))
            return self._read.pop(key.content, None)


def _read_texts(
    conn: sqlite3.Connection,
    keys: list[CacheKey],
    found: dict[tuple[str, str, str], tuple[Any, ...]],
) -> None:
    """Rows' texts by content key: one by its primary key, several through a temporary table
    of the wanted keys (a row-value IN list would scan the table)."""
    if len(keys) == 1:
        rows: Iterable[tuple[Any, ...]] = conn.execute(
            "SELECT path, digest, fingerprint, defs, summary, imports FROM blobs"
            " WHERE path=? AND digest=? AND fingerprint=?",
            keys[0].content,
        ).fetchall()
    else:
        conn.execute(
            "CREATE TEMP TABLE IF NOT EXISTS wanted_texts (path TEXT, digest TEXT, fingerprint TEXT)"
        )
        with _transaction(conn):
            conn.execute("DELETE FROM wanted_texts")
            conn.executemany("INSERT INTO wanted_texts VALUES (?,?,?)", [k.content for k in keys])
            rows = conn.execute(
                "SELECT b.path, b.digest, b.fingerprint, b.defs, b.summary, b.imports"
                " FROM wanted_texts w JOIN blobs AS b ON b.path = w.path AND b.digest = w.digest"
                " AND b.fingerprint = w.fingerprint"
            ).fetchall()
            conn.execute("DELETE FROM wanted_texts")
    for r in rows:
        if all(isinstance(t, str) for t in r[3:]):
            found[tuple(r[:3])] = tuple(r[3:])


def _reader(db_path: str) -> sqlite3.Connection:
    """A read-only connection to a database (a URI with mode=ro; WAL readers see committed
    rows)."""
    uri = Path(db_path).absolute().as_uri() + "?mode=ro"
    return sqlite3.connect(
        uri, uri=True, timeout=2.0, isolation_level=None, check_same_thread=False
    )


def _connect(db_path: Path) -> sqlite3.Connection:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    # callers serialise their use (the MCP service holds a lock per call), but may do so from
    # different threads (tool calls run in worker threads)
    conn = sqlite3.connect(str(db_path), timeout=2.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    return conn


class SqliteTagCache(TagCache):
    """The repository's database (``conn``: paths' digests, memoised graph pages, the lexical
    index) and the shared content database (``content``: rows by content, memoised maps)."""

    def __init__(self, db_path: Path, content_path: Path | None = None, root: Path | None = None):
        super().__init__()
        self.location = str(db_path)
        self._fallen_back = False
        self._stored = False
        self._counted = False
        #: reads deferred row texts (see :meth:`row_texts`)
        self._reader: sqlite3.Connection | None = None
        self._reader_lock = threading.Lock()
        self._closed = False
        self.conn = _connect(db_path)
        try:
            _init_root(self.conn)
            self._mark_used(root)
            tag_folder(db_path.parent)  # a cache inside a mapped tree is not listed
            self.content_location = str(content_path or db_path.with_name(CONTENT_DB))
            self.content = _connect(Path(self.content_location))
            try:
                self.generation = _init_content(self.content)
            except BaseException:
                self.content.close()
                raise
        except BaseException:
            self.conn.close()
            raise

    def _mark_used(self, root: Path | None = None) -> None:
        """Stamp the repository's database with when it was last used (and which root it is
        for): ``repomapper cache`` lists and prunes repositories by these."""
        rows = [("used", repr(time.time()))]
        if root is not None:  # shown to people only: a name that is not UTF-8 is shown mended
            rows.append(
                ("root", str(root).encode("utf-8", "surrogateescape").decode("utf-8", "replace"))
            )
        self.conn.executemany("INSERT OR REPLACE INTO meta VALUES (?, ?)", rows)

    def _bound_due(self) -> bool:
        """Whether this close checks the cache directory's size bound: at most once per
        :data:`repomapper.cachedir.EVICT_INTERVAL` over every process (the time of the last
        check is kept in the shared database; the first closer to find it old claims it)."""
        from .cachedir import EVICT_INTERVAL, configured_max_size

        if configured_max_size() is None:
            return False
        now = time.time()
        with _transaction(self.content):
            row = self.content.execute(
                "SELECT value FROM meta WHERE key='bound_checked'"
            ).fetchone()
            try:
                if row is not None and now - float(row[0]) < EVICT_INTERVAL:
                    return False
            except (TypeError, ValueError):
                pass
            self.content.execute(
                "INSERT OR REPLACE INTO meta VALUES ('bound_checked', ?)", (repr(now),)
            )
        return True

    def _fallback(self, exc: Exception) -> None:
        if not self._fallen_back:
            self._fallen_back = True
            self.generation = None
            msg = f"tag cache {self.location} failed ({exc}); using an in-memory cache for this run"
            log.warning(msg)
            self.diagnostics.append(Diagnostic("cache_unavailable", msg))
            for conn in (self.conn, self.content):
                with contextlib.suppress(sqlite3.Error):
                    conn.close()

    def digests(self, paths: Collection[str], reader: str) -> StatRows:
        if self._fallen_back:
            return super().digests(paths, reader)
        # the reader compared by SQLite: its text is not made into a string per file
        sql = "SELECT path, mtime_ns, size, digest, taken_ns, ctime_ns FROM files WHERE reader=?"
        try:
            if len(paths) > FEW_KEYS:  # (every path's: the caller looks up its own)
                return {r[0]: r[1:] for r in self.conn.execute(sql, (reader,))}
            out: StatRows = {}
            for path in paths:
                for r in self.conn.execute(f"{sql} AND path=?", (reader, path)):
                    out[r[0]] = r[1:]
            return out
        except sqlite3.Error as exc:
            self._fallback(exc)
            return super().digests(paths, reader)

    def record_digests(self, rows: Iterable[StatRow]) -> None:
        rows = list(rows)
        if not rows:
            return
        if not self._fallen_back:
            try:
                with _transaction(self.conn):
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?)", rows
                    )
                return
            except (sqlite3.Error, ValueError) as exc:
                self._fallback(exc)
        super().record_digests(rows)

    def digests_of_blobs(self, blobs: Collection[str]) -> dict[str, str]:
        if self._fallen_back:
            return super().digests_of_blobs(blobs)
        out: dict[str, str] = {}
        try:
            with _transaction(self.content):
                (held,) = self.content.execute("SELECT MAX(rowid) FROM git_blobs").fetchone()
                if held is not None and held <= 2 * len(blobs):
                    # (a pass over a table not much larger than the ids asked: one seek each
                    # cost more)
                    found = dict(self.content.execute("SELECT blob, digest FROM git_blobs"))
                    return {b: d for b in blobs if (d := found.get(b))}
                for chunk in _chunked(list(blobs), 500):
                    marks = ",".join("?" * len(chunk))
                    sql = f"SELECT blob, digest FROM git_blobs WHERE blob IN ({marks})"
                    out.update(self.content.execute(sql, chunk).fetchall())
        except sqlite3.Error as exc:  # not known: the files are read and hashed
            log.debug("git blob ids not looked up: %s", exc)
            return {}
        return out

    def record_blobs(self, pairs: Iterable[tuple[str, str]]) -> None:
        pairs = list(pairs)
        if not pairs:
            return
        if self._fallen_back:
            return super().record_blobs(pairs)
        try:
            with _transaction(self.content):
                self.content.executemany("INSERT OR REPLACE INTO git_blobs VALUES (?, ?)", pairs)
                self.content.execute(
                    "DELETE FROM git_blobs WHERE rowid <= (SELECT MAX(rowid) FROM git_blobs) - ?",
                    (MAX_GIT_BLOBS,),
                )
        except sqlite3.Error as exc:  # not learned: a later fresh clone reads these files
            log.debug("git blob ids not recorded: %s", exc)

    def _rows_of(
        self, keys: list[CacheKey], full: bool, light: bool = False
    ) -> dict[tuple[str, str, str], tuple[Any, ...]]:
        if self._fallen_back:
            return super()._rows_of(keys, full, light)
        cols = _LIGHT_COLUMNS if light else _ROW_COLUMNS.format(refs="refs" if full else "''")
        # light rows come from the covering index alone: a row's texts fill pages of their own,
        # which reading through the table would page in for nothing
        # (a row-value IN list would scan the table: the wanted keys are joined instead)
        blobs = "blobs AS b INDEXED BY blobs_head" if light else "blobs AS b"
        try:
            with _transaction(self.content):
                self.content.execute("DELETE FROM wanted")
                self.content.executemany(
                    "INSERT INTO wanted VALUES (?,?,?)", [k.content for k in keys]
                )
                cur = self.content.execute(
                    f"SELECT b.path, b.digest, b.fingerprint, {cols} FROM wanted w JOIN {blobs}"
                    " ON b.path = w.path AND b.digest = w.digest AND b.fingerprint = w.fingerprint"
                )
                found = {tuple(r[:3]): r[3:] for r in cur}
                self.content.execute("DELETE FROM wanted")
            return found
        except sqlite3.Error as exc:
            self._fallback(exc)
            return super()._rows_of(keys, full)

    def row_texts_many(self, keys: list[CacheKey]) -> dict[tuple[str, str, str], tuple[Any, ...]]:
        """Read on a connection of its own (a summary may be read from any thread, after the
        call that looked it up, or after :meth:`close`: then on a connection opened for it)."""
        if self._fallen_back:
            return super().row_texts_many(keys)
        found: dict[tuple[str, str, str], tuple[Any, ...]] = {}
        try:
            with self._reader_lock:
                if self._closed:
                    with contextlib.closing(_reader(self.content_location)) as conn:
                        _read_texts(conn, keys, found)
                else:
                    if self._reader is None:
                        self._reader = _reader(self.content_location)
                    _read_texts(self._reader, keys, found)
        except sqlite3.Error as exc:
            log.warning("cached rows cannot be read from %s (%s)", self.content_location, exc)
        return found

    def store(self, items: Iterable[tuple[CacheKey, EncodedRow]]) -> None:
        written = time.time_ns()
        batch = [(*k.content, written, *row) for k, row in items if k.digest]
        if not batch:
            return
        self.fingerprints.update(row[2] for row in batch)
        if not self._fallen_back:
            try:
                with _transaction(self.content):
                    self.content.executemany(
                        "INSERT OR REPLACE INTO blobs VALUES (?,?,?,?,?,?,?,?,?,?,?)", batch
                    )
                self._stored = True
                return
            except (sqlite3.Error, ValueError) as exc:  # ValueError: text sqlite cannot encode
                self._fallback(exc)
        for row in batch:
            path, digest, fingerprint = row[:3]
            self.rows[(path, digest, fingerprint)] = row[4:]

    def _evict(self) -> None:
        """Keep the shared table within MAX_CONTENT_ROWS rows and about MAX_CONTENT_BYTES of
        pages in use, those of the repositories used longest ago first (see
        :meth:`_evict_rows`); run when a cache that stored rows is closed (once: counting is a
        scan). Over the row bound, the table goes down to EVICT_SLACK of it below, so the next
        edits of a full table store their rows without a ranking of every row each (a second
        on a kernel-sized table); over the byte budget, a tenth of the rows go. The rows are
        counted only when the rows last counted plus those stored since (by any process) could
        pass the bound (see :func:`_row_triggers`)."""
        pages = self.content.execute("PRAGMA page_count").fetchone()[0]
        free = self.content.execute("PRAGMA freelist_count").fetchone()[0]
        size = self.content.execute("PRAGMA page_size").fetchone()[0]
        over_bytes = (pages - free) * size > MAX_CONTENT_BYTES
        bound = self._row_bound()
        if bound is not None and bound <= MAX_CONTENT_ROWS and not over_bytes:
            return
        with _transaction(self.content, immediate=True):  # (no row is stored between)
            (n,) = self.content.execute("SELECT COUNT(*) FROM blobs").fetchone()
            self.content.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                ((ROWS_COUNTED, str(n)), (ROWS_ADDED, "0")),
            )
        excess = n - MAX_CONTENT_ROWS
        if excess > 0:
            excess += int(MAX_CONTENT_ROWS * EVICT_SLACK)
        if over_bytes:
            excess = max(excess, n // 10, 1)
        if excess > 0:  # (the triggers count what this deletes)
            self._evict_rows(excess)

    def _row_bound(self) -> int | None:
        """The rows last counted plus those stored (less those deleted) since, or None when not
        both are recorded."""
        found = dict(
            self.content.execute(
                "SELECT key, value FROM meta WHERE key IN (?, ?)", (ROWS_COUNTED, ROWS_ADDED)
            ).fetchall()
        )
        try:
            counted, added = int(found[ROWS_COUNTED]), int(found[ROWS_ADDED])
        except (KeyError, TypeError, ValueError):
            return None
        return counted + added if counted >= 0 else None

    def _evict_rows(self, excess: int) -> None:
        """Delete ``excess`` rows by their last use: first the rows no repository's files or
        stored state refer to (by path and digest; a file changed since its repository's state
        was stored is updated in that state from its old row), then those of the repositories
        used longest ago; among equals, rows another version of the code made (a fingerprint
        this cache neither looked up nor stored) before the current code's, then the oldest
        written. By when a row was written alone, a repository mapped every day but extracted
        long ago lost its rows to one extracted once since, and a repository's current rows went
        before the rows an older or newer version wrote later."""
        from .cachedir import keys_by_use

        state_rows: list[tuple[str, str, str]] = []
        uses = keys_by_use(Path(self.content_location).parent, state_rows)
        with _transaction(self.content):
            self.content.execute("DROP TABLE IF EXISTS temp.row_use")
            self.content.execute("CREATE TEMP TABLE row_use (path TEXT, digest TEXT, used REAL)")
            for used, keys in uses:
                self.content.executemany(
                    "INSERT INTO row_use VALUES (?, ?, ?)", ((p, d, used) for p, d in keys)
                )
            self.content.execute("CREATE INDEX temp.row_use_key ON row_use (path, digest, used)")
            self.content.execute("DROP TABLE IF EXISTS temp.current_code")
            self.content.execute("CREATE TEMP TABLE current_code (fingerprint TEXT PRIMARY KEY)")
            self.content.executemany(
                "INSERT INTO current_code VALUES (?)", ((f,) for f in sorted(self.fingerprints))
            )
            self.content.execute("DROP TABLE IF EXISTS temp.doomed")
            self.content.execute(
                "CREATE TEMP TABLE doomed AS SELECT b.path, b.digest, b.fingerprint, used FROM"
                " (SELECT b.path, b.digest, b.fingerprint, b.written, COALESCE((SELECT"
                " MAX(u.used) FROM row_use AS u WHERE u.path = b.path AND u.digest = b.digest),"
                " 0) AS used FROM blobs AS b INDEXED BY blobs_written) AS b ORDER BY used,"
                " EXISTS (SELECT 1 FROM current_code AS c WHERE c.fingerprint = b.fingerprint),"
                " b.written LIMIT ?",
                (excess,),
            )
            self.content.execute(
                "DELETE FROM blobs WHERE (path, digest, fingerprint) IN"
                " (SELECT path, digest, fingerprint FROM doomed)"
            )
            self.content.execute(
                "CREATE TEMP TABLE state_rows (path TEXT, digest TEXT, fingerprint TEXT,"
                " PRIMARY KEY (path, digest, fingerprint)) WITHOUT ROWID"
            )
            self.content.executemany(
                "INSERT OR IGNORE INTO state_rows VALUES (?, ?, ?)", state_rows
            )
            (referred,) = self.content.execute(
                "SELECT EXISTS (SELECT 1 FROM doomed AS d JOIN state_rows AS s ON s.path = d.path"
                " AND s.digest = d.digest AND s.fingerprint = d.fingerprint)"
            ).fetchone()
            if referred:  # a stored state misses rows now: it reads them through the table
                self.generation = _new_generation(self.content)
            for table in ("row_use", "current_code", "doomed", "state_rows"):
                self.content.execute(f"DROP TABLE temp.{table}")

    def load_imports(self, scope: str) -> Iterator[tuple[tuple[str, str, str], dict[str, int]]]:
        if self._fallen_back:
            yield from super().load_imports(scope)
            return
        try:
            cur = self.conn.execute(
                "SELECT path, digest, fingerprint, targets FROM imports WHERE scope=?", (scope,)
            )
            while batch := cur.fetchmany(1024):  # a large tree's rows are many megabytes
                for path, digest, fp, targets in batch:
                    rows = json.loads(targets)
                    if isinstance(rows, dict) and all(
                        isinstance(k, str) and isinstance(v, int) for k, v in rows.items()
                    ):
                        yield (path, digest, fp), rows
        except (sqlite3.Error, ValueError) as exc:
            self._fallback(exc)
            yield from super().load_imports(scope)

    def store_imports(
        self, scope: str, rows: Iterable[tuple[tuple[str, str, str], dict[str, int]]]
    ) -> None:
        batch = [(scope, *key, _dumps(targets)) for key, targets in rows]
        if not self._fallen_back:
            try:
                with _transaction(self.conn):
                    self.conn.execute("DELETE FROM imports WHERE scope != ?", (scope,))
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO imports VALUES (?,?,?,?,?)", batch
                    )
                return
            except (sqlite3.Error, ValueError) as exc:
                self._fallback(exc)
        super().store_imports(scope, [((p, d, f), json.loads(t)) for _, p, d, f, t in batch])

    @property
    def state_path(self) -> Path:
        """The repository's stored ranking state: a file next to its database (written to a
        temporary name and renamed, so a reader sees a whole one or none; an 8 MB blob in the
        database cost the run that stored it a second copy in memory)."""
        return Path(self.location).with_suffix(STATE_SUFFIX)

    def read_state(self) -> BinaryIO | None:
        if self._fallen_back:
            return super().read_state()
        try:
            return open(self.state_path, "rb")  # noqa: SIM115 - the caller closes it
        except OSError:
            return None

    def write_state(self, write: Callable[[BinaryIO], None], generation: str | None = None) -> None:
        if self._fallen_back:
            return super().write_state(write)
        final = self.state_path
        tmp = final.with_name(f"{final.name}.{os.getpid()}.tmp")
        try:
            # the generation goes before the state and comes back after it: a state another
            # process reads meanwhile is never trusted for rows it was not written with
            self.conn.execute("DELETE FROM meta WHERE key='state_generation'")
        except sqlite3.Error as exc:
            if generation is None:  # the old state's mark would vouch for this one's rows
                log.debug("ranking state not stored at %s: %s", final, exc)
                return
        try:
            with open(tmp, "wb") as f:
                write(f)
            os.replace(tmp, final)
            if generation is not None:
                self.conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('state_generation', ?)", (generation,)
                )
        except (OSError, sqlite3.Error) as exc:  # a read-only or full cache: later runs rebuild
            log.debug("ranking state not stored at %s: %s", final, exc)
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)

    def add_state_drift(self, state: str, changed: int) -> int:
        if self._fallen_back:
            return super().add_state_drift(state, changed)
        conn = self.conn
        try:
            with _transaction(conn, immediate=True):
                found = conn.execute(
                    "SELECT value FROM meta WHERE key=?", (STATE_DRIFT,)
                ).fetchone()
                return _drifted(
                    found[0] if found else None,
                    state,
                    changed,
                    lambda key, value: conn.execute(
                        "INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value)
                    ),
                )
        except sqlite3.Error as exc:  # not counted: this call updates as before
            log.debug("stored state's updates not counted: %s", exc)
            return changed

    def reset_state_drift(self) -> None:
        if self._fallen_back:
            return super().reset_state_drift()
        try:
            self.conn.execute("DELETE FROM meta WHERE key=?", (STATE_DRIFT,))
        except sqlite3.Error as exc:
            log.debug("stored state's updates not reset: %s", exc)

    def keeps_state_rows(self) -> bool:
        if self._fallen_back or self.generation is None:
            return False
        try:
            found = self.conn.execute(
                "SELECT value FROM meta WHERE key='state_generation'"
            ).fetchone()
        except sqlite3.Error:
            return False
        return found is not None and found[0] == self.generation

    def get_map(self, key: str) -> str | bytes | None:
        return self._get(self.conn, key) if not self._fallen_back else super().get_map(key)

    def put_map(self, key: str, value: str | bytes, replaces: str | None = None) -> None:
        if self._fallen_back or not self._put(self.conn, key, value, MAX_MAPS, replaces):
            super().put_map(key, value, replaces)

    def count_of(self, encoder: str, key: bytes) -> int | None:
        if self._fallen_back:
            return super().count_of(encoder, key)
        try:
            row = self.conn.execute(
                "SELECT tokens FROM counts WHERE encoder=? AND key=?", (encoder, key)
            ).fetchone()
        except sqlite3.Error as exc:
            self._fallback(exc)
            return super().count_of(encoder, key)
        return row[0] if row is not None and isinstance(row[0], int) else None

    def remember_counts(self, encoder: str, counts: Mapping[bytes, int]) -> None:
        if not counts:
            return
        if not self._fallen_back:
            now = time.time_ns()
            try:
                with _transaction(self.conn):
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO counts VALUES (?,?,?,?)",
                        [(encoder, k, n, now) for k, n in counts.items()],
                    )
                self._counted = True
                return
            except sqlite3.Error as exc:
                self._fallback(exc)
        super().remember_counts(encoder, counts)

    def get_shared_map(self, key: str) -> str | None:
        if self._fallen_back:
            return super().get_shared_map(key)
        return _shared_text(self._get(self.content, key))

    def put_shared_map(self, key: str, value: str) -> None:
        if self._fallen_back or not self._put(self.content, key, value, MAX_SHARED_MAPS):
            super().put_map(key, value)

    def _get(self, conn: sqlite3.Connection, key: str) -> str | bytes | None:
        try:
            row = conn.execute("SELECT result FROM maps WHERE key=?", (key,)).fetchone()
            return row[0] if row else None
        except sqlite3.Error as exc:
            self._fallback(exc)
            return super().get_map(key)

    def _put(
        self,
        conn: sqlite3.Connection,
        key: str,
        value: str | bytes,
        keep: int,
        replaces: str | None = None,
    ) -> bool:
        """Memoise a result; only the most recent ``keep`` are kept, and none other whose key
        starts with ``replaces``. False: it failed."""
        try:
            with _transaction(conn):
                if replaces:
                    conn.execute(
                        "DELETE FROM maps WHERE substr(key, 1, length(?)) = ? AND key != ?",
                        (replaces, replaces, key),
                    )
                (n,) = conn.execute("SELECT COALESCE(MAX(created), 0) + 1 FROM maps").fetchone()
                conn.execute("INSERT OR REPLACE INTO maps VALUES (?, ?, ?)", (key, n, value))
                conn.execute(
                    "DELETE FROM maps WHERE key NOT IN (SELECT key FROM maps ORDER BY created DESC LIMIT ?)",
                    (keep,),
                )
            return True
        except sqlite3.Error as exc:
            self._fallback(exc)
            return False

    def close(self) -> None:
        # the read-only reader first: the writable connection closed last checkpoints the
        # write-ahead log and removes it (a read-only one cannot, and the log a cold run wrote,
        # gigabytes on a large tree, was left for the next run's close to copy back)
        with self._reader_lock:
            self._closed = True
            if self._reader is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._reader.close()
                self._reader = None
        due = False
        if not self._fallen_back:
            try:
                self._mark_used()
                due = self._bound_due()
            except sqlite3.Error as exc:  # another run holds the lock: the next one checks
                log.debug("cache use not recorded: %s", exc)
            if self._counted:  # the newest counts only
                self._counted = False
                with contextlib.suppress(sqlite3.Error), _transaction(self.conn):
                    self.conn.execute(
                        "DELETE FROM counts WHERE rowid IN (SELECT rowid FROM counts"
                        " ORDER BY used DESC LIMIT -1 OFFSET ?)",
                        (MAX_COUNTS,),
                    )
            if self._stored:
                self._stored = False
                try:
                    self._evict()
                except sqlite3.Error as exc:  # another run holds the lock: the next one evicts
                    log.debug("content cache eviction skipped: %s", exc)
            for conn in (self.conn, self.content):
                with contextlib.suppress(sqlite3.Error):
                    conn.close()
        if due:
            self._enforce_bound()

    def _enforce_bound(self) -> None:
        """Prune the cache directory to its size bound, least recently used repositories first
        (never this one); once the connections are closed, so this database counts as idle."""
        from .cachedir import configured_max_size, prune

        db = Path(self.location)
        try:
            report = prune(db.parent, max_size=configured_max_size(), keep=(db.stem,))
        except Exception as exc:  # the run that closes the cache has its result: keep it
            log.warning("cache size bound not applied to %s: %s", db.parent, exc)
            return
        for line in report.lines() if report.removed or report.content_rows else ():
            log.info("cache size bound: %s", line)
        for skipped in report.skipped:
            log.debug("cache size bound: skipped %s", skipped)


def _chunked(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _drifted(found: object, state: str, changed: int, store: Callable[[str, str], object]) -> int:
    """The updates counted for ``state`` with ``changed`` more, stored by ``store`` as
    ``"<state> <count>"`` under :data:`STATE_DRIFT` (``found``: the value stored before; one
    of another state, or of another shape, counts for nothing)."""
    total = changed
    if isinstance(found, str):
        held, _, count = found.rpartition(" ")
        if held == state and count.isdigit():
            total += int(count)
    store(STATE_DRIFT, f"{state} {total}")
    return total


@contextlib.contextmanager
def _transaction(conn: sqlite3.Connection, immediate: bool = False) -> Iterator[None]:
    """A transaction on ``conn``; ``immediate``: holding the write lock from the start."""
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def open_cache(root: Path, cache_dir: Path | None = None, enabled: bool = True) -> TagCache:
    """The cache for ``root``; an in-memory one (with a diagnostic) when the disk cache fails.

    A database that is corrupt (not locked or read-only: damaged) is moved aside and rebuilt,
    once, with one warning; later runs find a healthy cache again."""
    if not enabled:
        return TagCache()
    db = cache_file_for(root, cache_dir)
    content = db.with_name(CONTENT_DB)
    notes: list[Diagnostic] = []
    moved: set[Path] = set()
    while True:
        try:
            cache = SqliteTagCache(db, content, root=root.resolve())
            cache.diagnostics.extend(notes)
            return cache
        except sqlite3.OperationalError as exc:  # locked, read-only, no such directory, ...
            failure: Exception = exc
            break
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
            failure = exc
            broken = _broken(db, content)
            if broken is None or broken in moved:
                break
            moved.add(broken)
            aside = broken.with_name(broken.name + ".corrupt")
            try:
                for suffix in ("", "-wal", "-shm"):
                    part = Path(str(broken) + suffix)
                    if part.exists():
                        part.replace(Path(str(aside) + suffix))
            except OSError as move_exc:
                failure = move_exc
                break
            msg = f"tag cache {broken} was corrupt ({exc}); moved aside to {aside} and rebuilt"
            log.warning(msg)
            notes.append(Diagnostic("cache_rebuilt", msg))
        except OSError as exc:
            failure = exc
            break
    msg = f"tag cache {db} unusable ({failure}); using an in-memory cache for this run"
    log.warning(msg)
    in_memory = TagCache()
    in_memory.diagnostics.append(Diagnostic("cache_unavailable", msg))
    return in_memory


def _shared_text(found: str | bytes | None) -> str | None:
    """A shared map as stored (always text: :meth:`TagCache.put_shared_map` takes a str)."""
    return found if isinstance(found, str) else None


def _broken(*dbs: Path) -> Path | None:
    """The first of ``dbs`` that SQLite cannot read as a database."""
    for db in dbs:
        if not db.exists():
            continue
        try:
            conn = sqlite3.connect(str(db), timeout=2.0)
            try:
                conn.execute("PRAGMA schema_version").fetchone()
            finally:
                conn.close()
        except sqlite3.DatabaseError:
            return db
    return None


# -- bulk reads and writes for index bundles (see repomapper.bundle) ---------------------------

#: a content row as a bundle carries it: (path, digest, fingerprint) and the encoded row
ContentRow = tuple[tuple[str, str, str], EncodedRow]
#: a content row's place in the table, by its content key (path, digest, fingerprint)
_BY_CONTENT_KEY = " FROM blobs WHERE path=? AND digest=? AND fingerprint=?"


def content_rows(cache: TagCache, keys: Iterable[tuple[str, str, str]]) -> Iterator[ContentRow]:
    """The whole stored row (references included) of each content key the cache holds, in the
    order of ``keys``; keys it does not hold are left out."""
    conn = getattr(cache, "content", None)
    if conn is None or getattr(cache, "_fallen_back", True):
        for key in keys:
            row = cache.rows.get(key)
            if row is not None:
                yield key, row
        return
    sql = f"SELECT {_ROW_COLUMNS.format(refs='refs')}{_BY_CONTENT_KEY}"
    for key in keys:
        found = conn.execute(sql, key).fetchone()
        if found is not None:
            yield key, tuple(found)


def held_content_rows(cache: TagCache, keys: Iterable[tuple[str, str, str]]) -> int:
    """How many of the content keys ``keys`` the cache holds a row for, without reading the
    rows (a bundle's header counts them before :func:`content_rows` reads them)."""
    conn = getattr(cache, "content", None)
    if conn is None or getattr(cache, "_fallen_back", True):
        return sum(1 for key in keys if key in cache.rows)
    sql = f"SELECT 1{_BY_CONTENT_KEY}"
    return sum(1 for key in keys if conn.execute(sql, key).fetchone() is not None)


def remembered_counts(cache: TagCache) -> list[tuple[str, bytes, int]]:
    """Every remembered token count of the repository: (encoder, text digest, tokens), the most
    recently used first."""
    conn = getattr(cache, "conn", None)
    if conn is None or getattr(cache, "_fallen_back", True):
        found: list[tuple[str, bytes, int]] = []
        for k, n in cache.meta.items():
            key: object = k  # counts share the dict with maps, under tuple keys
            if isinstance(key, tuple) and len(key) == 3 and key[0] == "count":
                found.append((key[1], key[2], n))  # type: ignore[arg-type]
        return found
    rows = conn.execute("SELECT encoder, key, tokens FROM counts ORDER BY used DESC").fetchall()
    return [(e, bytes(k), n) for e, k, n in rows if isinstance(n, int)]


@contextlib.contextmanager
def bulk_writes(cache: TagCache) -> Iterator[None]:
    """One transaction on each of the cache's databases around a batch of writes made on their
    connections directly (:func:`insert_content_rows`, :func:`insert_counts`): committed when the
    block ends, rolled back, all of it, when it raises."""
    if not isinstance(cache, SqliteTagCache) or cache._fallen_back:
        raise sqlite3.OperationalError(f"the cache at {cache.location} cannot be written")
    with _transaction(cache.content), _transaction(cache.conn):
        yield


def insert_content_rows(cache: SqliteTagCache, rows: Iterable[ContentRow]) -> int:
    """Insert content rows (inside :func:`bulk_writes`); the number inserted."""
    written = time.time_ns()
    batch = [(*key, written, *row) for key, row in rows]
    cache.content.executemany("INSERT OR REPLACE INTO blobs VALUES (?,?,?,?,?,?,?,?,?,?,?)", batch)
    cache._stored = cache._stored or bool(batch)
    return len(batch)


def insert_counts(cache: SqliteTagCache, counts: Iterable[tuple[str, bytes, int]]) -> int:
    """Remember token counts (inside :func:`bulk_writes`); the number inserted."""
    now = time.time_ns()
    batch = [(encoder, key, n, now) for encoder, key, n in counts]
    cache.conn.executemany("INSERT OR REPLACE INTO counts VALUES (?,?,?,?)", batch)
    cache._counted = cache._counted or bool(batch)
    return len(batch)
