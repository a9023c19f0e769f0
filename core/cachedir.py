"""The cache directory as a whole: what is in it, and pruning it to an age or a size.

The directory holds one database per mapped repository (``tags-<digest>.sqlite3``, with its
``-wal``/``-shm`` files and its stored ranking state ``tags-<digest>.state.npz``) and one
database shared by all of them (``content.sqlite3``: rows keyed by content, memoised maps).
Only files with these names (and the ``.corrupt`` copies and temporary files repomapper itself
leaves) are ever removed; anything else in the directory is left alone.

A repository is removed whole, with the content rows that no other repository's files table
refers to; a repository whose database another process has open is skipped (SQLite's own locks
say so: see :func:`_remove_repository`). :func:`enforce_bound` is the automatic size bound
(least recently used repositories first), which a cache runs when it is closed, at most once per
:data:`EVICT_INTERVAL` (see :meth:`repomapper.cache.SqliteTagCache.close`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import sqlite3
import time
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .cachetag import TAG_NAME

log = logging.getLogger(__name__)

#: the environment variable that sets the cache's size bound ("500MB", "2G"; "0" or "off": none)
ENV_MAX_SIZE = "REPOMAPPER_CACHE_MAX_SIZE"
DEFAULT_MAX_SIZE = 1 << 30
#: seconds between two automatic checks of the size bound (each scans the cache directory)
EVICT_INTERVAL = 6 * 3600
#: a temporary state file older than this is a leftover of a run that died (not one being written)
STALE_TMP_SECONDS = 3600
#: seconds a prune waits for a database another process is writing
BUSY_TIMEOUT = 0.5

REPO_DB = re.compile(r"^(tags-[0-9a-f]{20})\.sqlite3$")
#: every name repomapper writes into the cache directory; nothing else is ever removed
OWN_NAME = re.compile(
    r"^(?:(?:tags-[0-9a-f]{20}|content)\.sqlite3(?:\.corrupt)?(?:-wal|-shm|-journal)?"
    r"|tags-[0-9a-f]{20}\.state\.npz(?:\.\d+\.tmp)?)$"
)
LEFTOVER = re.compile(r"\.corrupt(?:-wal|-shm|-journal)?$|\.tmp$")
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:I?B)?\s*$", re.IGNORECASE)
#: the repository database's tables counted by :func:`inspect`, by what they hold
REPO_KINDS = {
    "files": "files",
    "memoised_maps": "maps",
    "token_counts": "counts",
    "lexical_index": "lexdocs",
}


def parse_size(text: str) -> int:
    """Bytes in a size such as ``500MB``, ``1.5G``, ``2GiB`` or ``4096`` (K, M, G, T are powers of
    1024). ValueError for anything else."""
    m = _SIZE.match(text)
    if m is None:
        raise ValueError(f"not a size: {text!r} (expected a number with K, M, G or T, e.g. 500MB)")
    return int(float(m.group(1)) * _UNITS[m.group(2).upper()])


def configured_max_size() -> int | None:
    """The size bound: :data:`ENV_MAX_SIZE` when set (None for "0", "off" or "none": no bound),
    else :data:`DEFAULT_MAX_SIZE`. An unreadable value is warned about and the default used."""
    text = os.environ.get(ENV_MAX_SIZE, "").strip()
    if not text:
        return DEFAULT_MAX_SIZE
    if text.lower() in ("0", "off", "none"):
        return None
    try:
        return parse_size(text)
    except ValueError as exc:
        log.warning(
            "%s: %s; using the default bound of %s", ENV_MAX_SIZE, exc, human(DEFAULT_MAX_SIZE)
        )
        return DEFAULT_MAX_SIZE


def human(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


@dataclass
class Repository:
    """One repository's files in the cache directory."""

    name: str
    root: str | None = None
    last_used: float = 0.0
    files: list[Path] = field(default_factory=list)
    size: int = 0
    state_size: int = 0
    rows: dict[str, int] = field(default_factory=dict)
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "root": self.root,
            "last_used": _iso(self.last_used),
            "size": self.size,
            "stored_state_bytes": self.state_size,
            "rows": dict(self.rows),
            "error": self.error,
        }


@dataclass
class CacheInfo:
    """What :func:`inspect` found in a cache directory."""

    directory: Path
    repositories: list[Repository] = field(default_factory=list)
    content_size: int = 0
    content_rows: dict[str, int] = field(default_factory=dict)
    content_error: str | None = None
    leftovers: list[Path] = field(default_factory=list)
    foreign: int = 0

    @property
    def total_size(self) -> int:
        return self.content_size + sum(r.size for r in self.repositories) + _sizes(self.leftovers)

    def entries(self) -> dict[str, int]:
        """Entries by kind over the whole directory."""
        out = {
            "content_rows": self.content_rows.get("content_rows", 0),
            "memoised_maps": self.content_rows.get("memoised_maps", 0),
            "stored_states": sum(1 for r in self.repositories if r.state_size),
            "token_counts": 0,
            "lexical_index": 0,
        }
        for r in self.repositories:
            out["memoised_maps"] += r.rows.get("memoised_maps", 0)
            out["token_counts"] += r.rows.get("token_counts", 0)
            out["lexical_index"] += r.rows.get("lexical_index", 0)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "exists": self.directory.is_dir(),
            "total_size": self.total_size,
            "entries": self.entries(),
            "content": {
                "size": self.content_size,
                "rows": dict(self.content_rows),
                "error": self.content_error,
            },
            "repositories": [r.to_json() for r in self.repositories],
            "leftovers": [p.name for p in self.leftovers],
            "other_files": self.foreign,
        }

    def lines(self) -> list[str]:
        if not self.directory.is_dir():
            return [f"cache directory: {self.directory} (does not exist: nothing cached)"]
        e = self.entries()
        out = [
            f"cache directory: {self.directory}",
            f"total size: {human(self.total_size)} ({len(self.repositories)} repositories)",
            "entries: " + ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in e.items()),
            f"shared content database: {human(self.content_size)}"
            + (f" ({self.content_error})" if self.content_error else ""),
        ]
        for r in sorted(self.repositories, key=lambda r: -r.last_used):
            what = ", ".join(f"{n} {k.replace('_', ' ')}" for k, n in r.rows.items())
            out.append(
                f"  {r.root or '(root unknown: made by an older repomapper)'}: {human(r.size)},"
                f" last used {_iso(r.last_used)}; {r.error or what}"
            )
        if self.leftovers:
            out.append(f"leftovers (corrupt copies, temporary files): {len(self.leftovers)}")
        if self.foreign:
            out.append(f"other files (not repomapper's, never removed): {self.foreign}")
        return out


def _iso(t: float) -> str | None:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t)) if t else None


def _sizes(paths: Sequence[Path]) -> int:
    total = 0
    for p in paths:
        with contextlib.suppress(OSError):
            total += p.stat().st_size
    return total


@contextlib.contextmanager
def _open(db: Path, timeout: float = BUSY_TIMEOUT) -> Iterator[sqlite3.Connection]:
    """An existing database opened for reading and writing (never created)."""
    conn = sqlite3.connect(
        f"{db.absolute().as_uri()}?mode=rw", uri=True, timeout=timeout, isolation_level=None
    )
    try:
        yield conn
    finally:
        conn.close()


def _row_counts(conn: sqlite3.Connection, kinds: Mapping[str, str]) -> dict[str, int]:
    """kind -> the row count of its table, for the tables ``conn`` has."""
    tables = _tables(conn)
    return {
        kind: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        for kind, table in kinds.items()
        if table in tables
    }


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}


def _meta(conn: sqlite3.Connection) -> dict[str, str]:
    if "meta" not in _tables(conn):
        return {}
    return {k: v for k, v in conn.execute("SELECT key, value FROM meta") if isinstance(v, str)}


def inspect(directory: Path, rows: bool = True, databases: bool = True) -> CacheInfo:
    """Everything in ``directory`` (read only; a missing directory is an empty cache). With
    ``rows``, each database's rows are counted by kind; without ``databases``, none is opened
    (sizes only; last uses from the files' times)."""
    info = CacheInfo(directory)
    if not directory.is_dir():
        return info
    repos: dict[str, Repository] = {}
    content: list[Path] = []
    for path in sorted(directory.iterdir()):
        name = path.name
        if name == TAG_NAME:
            continue  # the folder's own tag (repomapper.cachetag)
        if not OWN_NAME.match(name) or not path.is_file():
            info.foreign += 1
            continue
        if LEFTOVER.search(name):
            if name.endswith(".tmp") and time.time() - _mtime(path) < STALE_TMP_SECONDS:
                continue  # being written by a run now
            info.leftovers.append(path)
        elif name.startswith("content."):
            content.append(path)
        else:
            stem = name.split(".", 1)[0]
            repo = repos.setdefault(stem, Repository(stem))
            repo.files.append(path)
            if name.endswith(".state.npz"):
                repo.state_size = _sizes([path])
    info.content_size = _sizes(content)
    if content and rows and databases:
        try:
            with _open(directory / "content.sqlite3") as conn:
                info.content_rows.update(
                    _row_counts(conn, {"content_rows": "blobs", "memoised_maps": "maps"})
                )
        except sqlite3.Error as exc:
            info.content_error = f"unreadable: {exc}"
    for repo in repos.values():
        repo.size = _sizes(repo.files)
        repo.last_used = max((_mtime(p) for p in repo.files), default=0.0)
        db = directory / f"{repo.name}.sqlite3"
        if not databases or not db.exists():
            continue
        try:
            with _open(db) as conn:
                meta = _meta(conn)
                repo.root = meta.get("root")
                with contextlib.suppress(ValueError, KeyError):
                    repo.last_used = float(meta["used"])
                if rows:
                    repo.rows.update(_row_counts(conn, REPO_KINDS))
        except sqlite3.Error as exc:
            repo.error = f"unreadable: {exc}"
    info.repositories = sorted(repos.values(), key=lambda r: (r.last_used, r.name))
    return info


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


@dataclass
class PruneReport:
    """What a prune removed (or, with ``dry_run``, would remove) and what it had to skip."""

    directory: Path
    dry_run: bool
    removed: list[Repository] = field(default_factory=list)
    leftovers: list[Path] = field(default_factory=list)
    content_rows: int = 0
    skipped: list[str] = field(default_factory=list)
    size_before: int = 0
    size_after: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "directory": str(self.directory),
            "dry_run": self.dry_run,
            "removed_repositories": [r.to_json() for r in self.removed],
            "removed_leftovers": [p.name for p in self.leftovers],
            "removed_content_rows": self.content_rows,
            "skipped": list(self.skipped),
            "size_before": self.size_before,
            "size_after": self.size_after,
        }

    def lines(self) -> list[str]:
        verb = "would remove" if self.dry_run else "removed"
        out = [
            f"{verb} repository {r.root or r.name} ({human(r.size)}, last used {_iso(r.last_used)})"
            for r in self.removed
        ]
        out += [f"{verb} leftover {p.name}" for p in self.leftovers]
        if self.content_rows:
            out.append(f"{verb} {self.content_rows} content rows no kept repository refers to")
        out += [f"skipped {s}" for s in self.skipped]
        if not (self.removed or self.leftovers or self.content_rows):
            out.append("nothing to remove")
        after = "" if self.dry_run else f", now {human(self.size_after)}"
        out.append(f"cache {self.directory}: {human(self.size_before)} before{after}")
        return out


def prune(
    directory: Path,
    *,
    older_than: float | None = None,
    max_size: int | None = None,
    repository: str | None = None,
    dry_run: bool = False,
    keep: Sequence[str] = (),
) -> PruneReport:
    """Remove repositories last used more than ``older_than`` seconds ago, then the least
    recently used ones until the directory fits ``max_size`` bytes; with ``repository`` (a
    cache database name, ``tags-<digest>``), that one. Leftovers go with any age or size prune.
    Within the size bound, with nothing else asked and no leftovers, no database is opened.
    Content rows no remaining repository refers to go with their repositories, and, by age,
    those written before the cut. ``keep``: names never removed (the repository in use)."""
    info = inspect(directory, rows=False, databases=False)
    report = PruneReport(directory, dry_run, size_before=info.total_size)
    report.size_after = report.size_before
    if not directory.is_dir():
        return report
    if (
        older_than is None
        and repository is None
        and not info.leftovers
        and (max_size is None or info.total_size <= max_size)
    ):
        return report  # within its bound: the databases are not even opened
    info = inspect(directory)
    victims: list[Repository] = []
    if repository is not None:
        victims = [r for r in info.repositories if r.name == repository]
    else:
        report.leftovers = list(info.leftovers)
    now = time.time()
    if older_than is not None:
        victims += [r for r in info.repositories if r.last_used < now - older_than]
    if max_size is not None:
        projected = info.total_size - _sizes(report.leftovers) - sum(r.size for r in victims)
        for r in info.repositories:  # least recently used first
            if projected <= max_size:
                break
            if all(r.name != v.name for v in victims) and r.name not in keep:
                victims.append(r)
                projected -= r.size + _content_share(info, r)
    victims = list({r.name: r for r in victims if r.name not in keep}.values())
    keys = _file_keys(directory, victims)  # read before the databases go
    if dry_run:
        report.removed = victims
    else:
        for path in report.leftovers:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        for r in victims:
            reason = _remove_repository(directory, r)
            if reason is None:
                report.removed.append(r)
            else:
                report.skipped.append(f"repository {r.root or r.name}: {reason}")
    gone = [k for r in report.removed for k in keys[r.name]]
    report.content_rows = _content_rows(directory, info, report, gone, older_than)
    if not dry_run:
        report.size_after = inspect(directory, rows=False, databases=False).total_size
    return report


def _content_share(info: CacheInfo, repo: Repository) -> int:
    """An estimate of the content database's bytes ``repo``'s rows take (its share of them by
    its file count; the real figure is known once the rows are gone)."""
    counted = [r for r in info.repositories if r.rows.get("files")]
    total = sum(r.rows["files"] for r in counted)
    return info.content_size * repo.rows.get("files", 0) // total if total else 0


def _remove_repository(directory: Path, repo: Repository) -> str | None:
    """Remove a repository's files; the reason when it cannot be. The database is taken with an
    exclusive lock first: in WAL mode every open connection holds a shared lock, so a database
    another process has open (an MCP server, a map running now) is busy and left alone. Under
    the lock the database leaves WAL mode (its -wal and -shm files checkpointed and removed by
    SQLite), then its file and the stored state are unlinked before the lock is let go."""
    db = directory / f"{repo.name}.sqlite3"
    # the database's -wal and -shm files are SQLite's to remove (under its lock)
    others = (
        [p for p in repo.files if not p.name.startswith(db.name)] if db.exists() else repo.files
    )
    try:
        if db.exists():
            with _open(db) as conn:
                conn.execute("PRAGMA locking_mode=EXCLUSIVE")
                conn.execute("BEGIN EXCLUSIVE")
                conn.execute("ROLLBACK")
                mode = conn.execute("PRAGMA journal_mode=DELETE").fetchone()[0]
                if mode != "delete":  # its WAL would outlive it, and could meet a new database
                    return f"its journal could not be closed ({mode}); left alone"
                conn.execute("BEGIN EXCLUSIVE")
                db.unlink()
                conn.execute("ROLLBACK")
        for path in others:
            path.unlink(missing_ok=True)
    except sqlite3.OperationalError as exc:
        return f"in use by another process ({exc}); left alone"
    except sqlite3.DatabaseError as exc:  # corrupt: no one can be using it
        log.debug("removing corrupt %s: %s", db, exc)
        for path in repo.files:
            path.unlink(missing_ok=True)
    except OSError as exc:
        return f"cannot be removed ({exc})"
    return None


def _file_keys(
    directory: Path,
    repos: Sequence[Repository],
    state_rows: list[tuple[str, str, str]] | None = None,
) -> dict[str, list[tuple[str, str]]]:
    """Each repository's (path, digest) pairs: its files' and its stored state's (see
    :func:`_state_rows`); a database that cannot be read has none of its own. With
    ``state_rows``, the stored states' full content keys are added to it as they are read."""
    out: dict[str, list[tuple[str, str]]] = {}
    for r in repos:
        db = directory / f"{r.name}.sqlite3"
        try:
            with _open(db) as conn:
                out[r.name] = conn.execute("SELECT path, digest FROM files").fetchall()
        except sqlite3.Error:
            out[r.name] = []
        for path in r.files:
            if path.name.endswith(".state.npz"):
                rows = _state_rows(path)
                out[r.name] += [(p, d) for p, d, _ in rows]
                if state_rows is not None:
                    state_rows += rows
    return out


def _state_rows(path: Path) -> list[tuple[str, str, str]]:
    """The content key (path, digest, backends) of each file a stored ranking state was made
    from, and of each file that is not mapped (the state holds what their rows say besides
    their texts), none when it cannot be read. A file changed since the state was stored is
    updated in it from its old row: that row goes with the state, not with the file's current
    content."""
    import numpy as np

    from .stringarrays import split, triples

    try:
        with open(path, "rb") as f:
            arrays = np.lib.npyio.NpzFile(f, allow_pickle=False)  # an array of objects refused
            files = split(arrays["files"])
            digests = split(arrays["digests"], len(files))
            fingerprints = split(arrays["fingerprints"], len(files))
            return [*zip(files, digests, fingerprints, strict=True), *triples(arrays["context"])]
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        log.debug("stored state %s unreadable: %s", path, exc)  # the next map rebuilds it
        return []


def keys_by_use(
    directory: Path, state_rows: list[tuple[str, str, str]] | None = None
) -> list[tuple[float, list[tuple[str, str]]]]:
    """Each repository's last use with the (path, digest) of its files and of its stored
    state's (see :func:`_file_keys`): what the content table's eviction keeps longest. With
    ``state_rows``, the content keys of the rows the stored states were made from are added to
    it (each state read once)."""
    repos = inspect(directory, rows=False).repositories
    keys = _file_keys(directory, repos, state_rows)
    return [(r.last_used, keys[r.name]) for r in repos]


def _content_rows(
    directory: Path,
    info: CacheInfo,
    report: PruneReport,
    gone: Sequence[tuple[str, str]],
    older_than: float | None,
) -> int:
    """Delete (count, in a dry run) the content rows of the removed repositories (``gone``: their
    files' path and digest) that no remaining repository refers to, and with ``older_than``
    every unreferenced row written before the cut; the database is vacuumed after (its file
    shrinks)."""
    db = directory / "content.sqlite3"
    if not db.exists() or not (gone or older_than is not None):
        return 0
    removed = {r.name for r in report.removed}
    kept = [r for r in info.repositories if r.name not in removed]
    try:
        with _open(db) as conn:
            if "blobs" not in _tables(conn):
                return 0
            conn.execute("CREATE TEMP TABLE refs (path TEXT, digest TEXT)")
            conn.execute("CREATE TEMP TABLE gone (path TEXT, digest TEXT)")
            for keys in _file_keys(directory, kept).values():
                conn.executemany("INSERT INTO refs VALUES (?, ?)", keys)
            conn.executemany("INSERT INTO gone VALUES (?, ?)", gone)
            conn.execute("CREATE INDEX temp.refs_key ON refs (path, digest)")
            conn.execute("CREATE INDEX temp.gone_key ON gone (path, digest)")
            cond = "EXISTS (SELECT 1 FROM gone g WHERE g.path = b.path AND g.digest = b.digest)"
            params: tuple[int, ...] = ()
            if older_than is not None:
                cond += " OR b.written < ?"
                params = (int((time.time() - older_than) * 1e9),)
            cond = (
                f"({cond}) AND NOT EXISTS"
                " (SELECT 1 FROM refs r WHERE r.path = b.path AND r.digest = b.digest)"
            )
            if report.dry_run:
                count: int = conn.execute(
                    f"SELECT COUNT(*) FROM blobs AS b WHERE {cond}", params
                ).fetchone()[0]
                return count
            conn.execute("BEGIN IMMEDIATE")
            n = conn.execute(f"DELETE FROM blobs AS b WHERE {cond}", params).rowcount
            conn.execute("COMMIT")
            if n:
                try:
                    conn.execute("VACUUM")
                    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.OperationalError as exc:
                    report.skipped.append(
                        f"shrinking the content database: {exc} (its free pages are reused)"
                    )
            return n
    except sqlite3.Error as exc:
        report.skipped.append(f"content rows: the content database is busy or unreadable ({exc})")
        return 0
