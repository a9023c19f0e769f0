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

from .model import Diagnostic, FileExtraction, Import, Tag

log = logging.getLogger(__name__)

SCHEMA_VERSION = "3"
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


def encode(ex: FileExtraction) -> tuple[str, str, str]:
    dumps = lambda v: json.dumps(v, ensure_ascii=False, separators=(",", ":"))  # noqa: E731
    return (
        dumps([t.to_row() for t in ex.tags]),
        dumps([i.to_row() for i in ex.imports]),
        dumps([[d.code, d.message, d.severity] for d in ex.diagnostics]),
    )


def decode(path: str, plugin: str | None, language: str | None, tags: str, imports: str, diags: str) -> FileExtraction:
    return FileExtraction(
        path=path,
        tags=tuple(Tag.from_row(path, r) for r in json.loads(tags)),
        imports=tuple(Import.from_row(path, r) for r in json.loads(imports)),
        plugin=plugin,
        language=language,
        diagnostics=tuple(Diagnostic(c, m, path, s) for c, m, s in json.loads(diags)),
    )


class TagCache:
    """Bulk read, streamed write. Use :func:`open_cache` to get one."""

    def __init__(self) -> None:
        self.rows: dict[str, tuple] = {}
        self.diagnostics: list[Diagnostic] = []
        self.location = ":memory:"

    def lookup(self, keys: Iterable[CacheKey]) -> dict[str, FileExtraction]:
        """Every valid cached extraction among ``keys``, in one pass over the cache."""
        hits: dict[str, FileExtraction] = {}
        rows = self._all_rows()
        for key in keys:
            row = rows.get(key.path)
            if row is None or (row[0], row[1], row[2]) != (key.mtime_ns, key.size, key.fingerprint):
                continue
            try:
                hits[key.path] = decode(key.path, *row[3:])
            except (ValueError, TypeError) as exc:  # a row we cannot read is a miss
                log.debug("cache row for %s unreadable: %s", key.path, exc)
        return hits

    def store(self, items: Iterable[tuple[CacheKey, FileExtraction]]) -> None:
        for key, ex in items:
            self.rows[key.path] = (key.mtime_ns, key.size, key.fingerprint, ex.plugin, ex.language, *encode(ex))

    def _all_rows(self) -> dict[str, tuple]:
        return self.rows

    def get_meta(self, key: str) -> str | None:
        return self.rows.get(f"\0meta:{key}", (None,))[0]

    def set_meta(self, key: str, value: str) -> None:
        self.rows[f"\0meta:{key}"] = (value,)

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
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER, size INTEGER,"
            " fingerprint TEXT, plugin TEXT, language TEXT, tags TEXT, imports TEXT, diagnostics TEXT)"
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

    def _all_rows(self) -> dict[str, tuple]:
        if self._fallen_back:
            return self.rows
        try:
            cur = self.conn.execute(
                "SELECT path, mtime_ns, size, fingerprint, plugin, language, tags, imports, diagnostics FROM files"
            )
            return {r[0]: r[1:] for r in cur}
        except sqlite3.Error as exc:
            self._fallback(exc)
            return self.rows

    def store(self, items: Iterable[tuple[CacheKey, FileExtraction]]) -> None:
        batch = [(k.path, k.mtime_ns, k.size, k.fingerprint, ex.plugin, ex.language, *encode(ex)) for k, ex in items]
        if not batch:
            return
        if not self._fallen_back:
            try:
                with self._transaction():
                    self.conn.executemany("INSERT OR REPLACE INTO files VALUES (?,?,?,?,?,?,?,?,?)", batch)
                return
            except sqlite3.Error as exc:
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

    def get_meta(self, key: str) -> str | None:
        if self._fallen_back:
            return super().get_meta(key)
        try:
            row = self.conn.execute("SELECT value FROM meta WHERE key=?", (f"x:{key}",)).fetchone()
            return row[0] if row else None
        except sqlite3.Error as exc:
            self._fallback(exc)
            return None

    def set_meta(self, key: str, value: str) -> None:
        if not self._fallen_back:
            try:
                self.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (f"x:{key}", value))
                return
            except sqlite3.Error as exc:
                self._fallback(exc)
        super().set_meta(key, value)

    def close(self) -> None:
        if not self._fallen_back:
            with contextlib.suppress(sqlite3.Error):
                self.conn.close()


def open_cache(root: Path, cache_dir: Path | None = None, enabled: bool = True) -> TagCache:
    """The cache for ``root``; an in-memory one (with a diagnostic) when the disk cache fails."""
    if not enabled:
        return TagCache()
    db = cache_file_for(root, cache_dir)
    try:
        return SqliteTagCache(db)
    except (sqlite3.Error, OSError) as exc:
        msg = f"tag cache {db} unusable ({exc}); using an in-memory cache for this run"
        log.warning(msg)
        cache = TagCache()
        cache.diagnostics.append(Diagnostic("cache_unavailable", msg))
        return cache
