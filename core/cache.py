"""The tag cache: one SQLite file per repository root, plain JSON rows, never pickle.

A row is valid while the file's mtime and size and the answering backends' fingerprint are
unchanged. Anything wrong with the database (corrupt, locked, read-only, disk full) turns the
cache into an in-memory one with one warning; mapping goes on.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from .model import DEF, Diagnostic, FileExtraction, FileSymbols, Import, Tag, tag_sort_key

log = logging.getLogger(__name__)

SCHEMA_VERSION = "5"
#: Memoised map results kept per repository (the most recent ones).
MAX_MAPS = 16
APP_NAME = "repomapper"


def default_cache_dir() -> Path:
    return Path(platformdirs.user_cache_dir(APP_NAME))


def cache_file_for(root: Path, cache_dir: Path | None = None) -> Path:
    digest = hashlib.sha256(str(root.resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:20]
    return (cache_dir or default_cache_dir()) / f"tags-{digest}.sqlite3"


@dataclass(frozen=True, slots=True)
class CacheKey:
    path: str
    mtime_ns: int
    size: int
    fingerprint: str


#: The columns of a cached file after the key: who answered, then JSON payloads.
EncodedRow = tuple[str | None, str | None, str, str, str, str, str]


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


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


def _common(path: str, defs: str, imports: str, diags: str) -> tuple:
    return (
        tuple(Tag.from_row(path, r) for r in json.loads(defs)),
        tuple(Import.from_row(path, r) for r in json.loads(imports)),
        tuple(Diagnostic(c, m, path, s) for c, m, s in json.loads(diags)),
    )


def decode_symbols(path: str, row: EncodedRow) -> FileSymbols:
    plugin, language, defs, _refs, summary, imports, diags = row
    definitions, imps, diagnostics = _common(path, defs, imports, diags)
    s = json.loads(summary)
    return FileSymbols(
        path,
        definitions,
        tuple((n, c) for n, c in s["c"]),
        tuple((n, t) for n, t in s["t"]),
        imps,
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


#: a lookup of at most this many files reads their rows alone, not the whole table
FEW_KEYS = 200


class TagCache:
    """Bulk read, streamed write. Use :func:`open_cache` to get one."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple] = {}
        self.meta: dict[str, str] = {}
        self.diagnostics: list[Diagnostic] = []
        self.location = ":memory:"

    def lookup(
        self, keys: Iterable[CacheKey], full: bool = False
    ) -> dict[str, FileExtraction | FileSymbols]:
        """Every valid cached entry among ``keys``, read in one query. ``full`` decodes every
        reference tag; otherwise only the reference summary ranking needs."""
        decode = decode_full if full else decode_symbols
        hits: dict[str, FileExtraction | FileSymbols] = {}
        keys = list(keys)
        rows = self._rows_of([k.path for k in keys], full) if len(keys) <= FEW_KEYS else None
        if rows is None:
            rows = self._all_rows(full)
        for key in keys:
            row = rows.get(key.path)
            if row is None or (row[0], row[1], row[2]) != (key.mtime_ns, key.size, key.fingerprint):
                continue
            try:
                hits[key.path] = decode(key.path, row[3:])
            except (ValueError, TypeError, KeyError) as exc:  # a row we cannot read is a miss
                log.debug("cache row for %s unreadable: %s", key.path, exc)
        return hits

    def store(self, items: Iterable[tuple[CacheKey, EncodedRow]]) -> None:
        """Store encoded rows (see :func:`encode`)."""
        for key, row in items:
            self.rows[key.path] = (key.mtime_ns, key.size, key.fingerprint, *row)

    def _all_rows(self, full: bool = True) -> dict[str, tuple]:
        return self.rows

    def _rows_of(self, paths: list[str], full: bool = True) -> dict[str, tuple] | None:
        """The rows of a few paths (``None``: read them all instead)."""
        return self.rows

    def get_map(self, key: str) -> str | None:
        """A memoised map result (JSON) for an input digest, or None."""
        return self.meta.get(f"map:{key}")

    def put_map(self, key: str, value: str) -> None:
        self.meta[f"map:{key}"] = value

    def close(self) -> None:
        pass


class SqliteTagCache(TagCache):
    def __init__(self, db_path: Path):
        super().__init__()
        self.location = str(db_path)
        db_path.parent.mkdir(parents=True, exist_ok=True)
        self.conn = sqlite3.connect(str(db_path), timeout=2.0, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
        version = self.conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()
        if version is None or version[0] != SCHEMA_VERSION:
            self.conn.execute("DROP TABLE IF EXISTS files")
            self.conn.execute("DROP TABLE IF EXISTS maps")
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,"
            " fingerprint TEXT, plugin TEXT, language TEXT, defs TEXT, refs TEXT, summary TEXT,"
            " imports TEXT, diagnostics TEXT)"
        )
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS maps (key TEXT PRIMARY KEY, created INTEGER, result TEXT)"
        )
        # prove we can write (read-only file systems and locked databases fail here)
        self.conn.execute("INSERT OR REPLACE INTO meta VALUES ('schema', ?)", (SCHEMA_VERSION,))
        self._fallen_back = False

    def _fallback(self, exc: Exception) -> None:
        if not self._fallen_back:
            self._fallen_back = True
            msg = f"tag cache {self.location} failed ({exc}); using an in-memory cache for this run"
            log.warning(msg)
            self.diagnostics.append(Diagnostic("cache_unavailable", msg))
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()

    def _all_rows(self, full: bool = True) -> dict[str, tuple]:
        if self._fallen_back:
            return self.rows
        refs = "refs" if full else "''"  # the summary path never reads the reference rows
        try:
            cur = self.conn.execute(
                f"SELECT path, mtime_ns, size, fingerprint, plugin, language, defs, {refs}, summary,"
                " imports, diagnostics FROM files"
            )
            return {r[0]: r[1:] for r in cur}
        except sqlite3.Error as exc:
            self._fallback(exc)
            return self.rows

    def _rows_of(self, paths: list[str], full: bool = True) -> dict[str, tuple] | None:
        if self._fallen_back:
            return self.rows
        refs = "refs" if full else "''"
        marks = ",".join("?" * len(paths))
        try:
            cur = self.conn.execute(
                f"SELECT path, mtime_ns, size, fingerprint, plugin, language, defs, {refs}, summary,"
                f" imports, diagnostics FROM files WHERE path IN ({marks})",
                paths,
            )
            return {r[0]: r[1:] for r in cur}
        except sqlite3.Error as exc:
            self._fallback(exc)
            return self.rows

    def store(self, items: Iterable[tuple[CacheKey, EncodedRow]]) -> None:
        batch = [(k.path, k.mtime_ns, k.size, k.fingerprint, *row) for k, row in items]
        if not batch:
            return
        if not self._fallen_back:
            try:
                with self._transaction():
                    self.conn.executemany(
                        "INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?,?,?)", batch
                    )
                return
            except (sqlite3.Error, ValueError) as exc:  # ValueError: text sqlite cannot encode
                self._fallback(exc)
        for row in batch:
            self.rows[row[0]] = row[1:]

    def _transaction(self) -> Iterator[None]:
        from contextlib import contextmanager

        @contextmanager
        def tx() -> Iterator[None]:
            self.conn.execute("BEGIN")
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

        return tx()

    def get_map(self, key: str) -> str | None:
        if self._fallen_back:
            return super().get_map(key)
        try:
            row = self.conn.execute("SELECT result FROM maps WHERE key=?", (key,)).fetchone()
            return row[0] if row else None
        except sqlite3.Error as exc:
            self._fallback(exc)
            return None

    def put_map(self, key: str, value: str) -> None:
        """Memoise a map; only the most recent MAX_MAPS are kept."""
        if not self._fallen_back:
            try:
                with self._transaction():
                    (n,) = self.conn.execute(
                        "SELECT COALESCE(MAX(created), 0) + 1 FROM maps"
                    ).fetchone()
                    self.conn.execute(
                        "INSERT OR REPLACE INTO maps VALUES (?, ?, ?)", (key, n, value)
                    )
                    self.conn.execute(
                        "DELETE FROM maps WHERE key NOT IN (SELECT key FROM maps ORDER BY created DESC LIMIT ?)",
                        (MAX_MAPS,),
                    )
                return
            except sqlite3.Error as exc:
                self._fallback(exc)
        super().put_map(key, value)

    def close(self) -> None:
        if not self._fallen_back:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()


def open_cache(root: Path, cache_dir: Path | None = None, enabled: bool = True) -> TagCache:
    """The cache for ``root``; an in-memory one (with a diagnostic) when the disk cache fails.

    A database that is corrupt (not locked or read-only: damaged) is moved aside and rebuilt,
    once, with one warning; later runs find a healthy cache again."""
    if not enabled:
        return TagCache()
    db = cache_file_for(root, cache_dir)
    repaired: Diagnostic | None = None
    for attempt in (1, 2):
        try:
            cache = SqliteTagCache(db)
            if repaired is not None:
                cache.diagnostics.append(repaired)
            return cache
        except sqlite3.OperationalError as exc:  # locked, read-only, no such directory, ...
            failure: Exception = exc
            break
        except sqlite3.DatabaseError as exc:  # "file is not a database", "malformed"
            failure = exc
            if attempt == 2:
                break
            aside = db.with_name(db.name + ".corrupt")
            try:
                for suffix in ("", "-wal", "-shm"):
                    part = Path(str(db) + suffix)
                    if part.exists():
                        part.replace(Path(str(aside) + suffix))
            except OSError as move_exc:
                failure = move_exc
                break
            msg = f"tag cache {db} was corrupt ({exc}); moved aside to {aside} and rebuilt"
            log.warning(msg)
            repaired = Diagnostic("cache_rebuilt", msg)
        except OSError as exc:
            failure = exc
            break
    msg = f"tag cache {db} unusable ({failure}); using an in-memory cache for this run"
    log.warning(msg)
    cache = TagCache()
    cache.diagnostics.append(Diagnostic("cache_unavailable", msg))
    return cache
