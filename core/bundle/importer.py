"""``repomapper index import``: a bundle's rows loaded into this machine's cache.

Everything is checked as a row read from a corrupt cache would be, and more: the file as a whole
(format, version, the end record's digest, the bounds of :class:`.format.Limits`), then each
record's fields. A record that does not hold together (a path outside the root, a digest that is
not one, a text that is not JSON) is skipped and counted; the bundle as a whole is refused, and
nothing is imported, when the file is not a whole bundle or ``verify`` finds a row that
disagrees with a local re-extraction. The only things written are rows of the cache's databases
and the repository's stored ranking state in the cache directory: no path in a bundle is used to
name a file.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import os
import random
import re
import shutil
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from .. import snapshot
from ..cache import (
    ContentRow,
    SqliteTagCache,
    bulk_writes,
    insert_content_rows,
    insert_counts,
    open_cache,
)
from ..discover import check_root
from ..relevance.lexical import FIELDS, LexicalIndex, lexical_version
from .export import producing_code
from .format import COUNT, LEXICAL, MAP, ROW, STATE, BundleError, Limits, read, valid_path
from .verify import Verified, verify_rows

log = logging.getLogger(__name__)

#: rows written per statement batch
BATCH = 2000
#: rows re-extracted by ``verify`` unless told otherwise
DEFAULT_SAMPLE = 200

_DIGEST = re.compile(r"[0-9a-f]{32}")
#: a count is remembered under a digest of its text (of 16 or 24 bytes today)
_COUNT_KEY = re.compile(r"(?:[0-9a-f]{2}){8,64}")


@dataclass
class Imported:
    """What an import loaded, and what it skipped and why."""

    rows: int = 0
    counts: int = 0
    lexical: int = 0
    state: bool = False
    maps: int = 0
    #: files of the clone whose content digest the import recorded (read and hashed here, or
    #: known from git's index), so its first map reads none of them
    keyed: int = 0
    #: reason -> records skipped for it
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    verified: Verified | None = None

    def skip(self, reason: str) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


def import_bundle(
    bundle: str | os.PathLike[str],
    root: str | os.PathLike[str] = ".",
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    verify: bool = False,
    sample: int = DEFAULT_SAMPLE,
    rows_only: bool = False,
    limits: Limits | None = None,
    rng: random.Random | None = None,
) -> Imported:
    """Load ``bundle`` into the cache: its content rows into the shared database (they serve
    any clone of the same content), its token counts, lexical rows and ranking state into the
    cache of ``root`` (the clone it is for). With ``verify``, up to ``sample`` rows chosen at
    random among those whose file is in ``root`` with the same content are extracted again, and
    the bundle is refused (BundleError, nothing imported) when one disagrees. ``rows_only``
    imports the content rows alone (what ``verify`` checks): the ranking state, token counts,
    lexical rows and memoised maps are then made here by the first map. BundleError for a
    bundle that cannot be used; a skipped record is counted in the result. Once imported, the
    files of ``root`` are keyed as a map would key them (each read and hashed once, unless
    git's index says which content each holds: see :mod:`repomapper.gitindex`), so the
    clone's first map reads no file, as a warm run."""
    root_path = check_root(Path(root))
    cache = open_cache(root_path, Path(cache_dir) if cache_dir is not None else None)
    try:
        if not isinstance(cache, SqliteTagCache):
            msgs = "; ".join(d.message for d in cache.diagnostics)
            raise BundleError(f"the cache cannot be written: {msgs or cache.location}")
        result = _import(
            cache, bundle, root_path, verify, sample, rows_only, limits or Limits(), rng
        )
    finally:
        cache.close()
    try:
        result.keyed = _keyed(root_path, cache_dir)
    except (OSError, sqlite3.Error) as exc:  # imported all the same: the first map keys them
        result.notes.append(f"the files of {root_path} were not keyed: {exc}")
    return result


def _keyed(root: Path, cache_dir: str | os.PathLike[str] | None) -> int:
    """Key ``root``'s files in its cache as a map's first step does (listing, content digests
    remembered by stat): what a fresh clone's first map would spend its time on."""
    from ..repomap import RepoMap
    from ..settings import ALL_FILES

    with RepoMap(root, cache_dir=cache_dir) as rm:
        return len(rm.state.prepare(ALL_FILES, (), []).all_entries)


def _import(
    cache: SqliteTagCache,
    bundle: str | os.PathLike[str],
    root: Path,
    verify: bool,
    sample: int,
    rows_only: bool,
    limits: Limits,
    rng: random.Random | None,
) -> Imported:
    result = Imported()
    maps: dict[str, str] = {}
    lexical_ok = True
    try:
        LexicalIndex(cache)  # its tables, for this code's version
    except sqlite3.Error as exc:
        lexical_ok = False
        result.notes.append(f"lexical rows not imported: {exc}")
    chooser = _Sample(root, sample if verify else 0, rng or random.SystemRandom())
    with _SpooledState(cache.state_path.parent, limits.state_bytes) as state:
        try:
            with bulk_writes(cache):
                head, same = _records(
                    cache, read(bundle, limits), rows_only, lexical_ok, chooser, state, maps, result
                )
                if verify:
                    result.verified = verify_rows(root, chooser.rows)
                    _check_verified(result.verified)
        except sqlite3.Error as exc:
            raise BundleError(f"the cache could not be written ({exc}); nothing imported") from exc
        if rows_only:
            return result
        if not same[STATE] and head["counts"].get(STATE):
            result.notes.append("the ranking state was made by other code: not imported")
        elif state.size:
            result.state = _store_state(cache, state.spooled(), result)
    if not same[LEXICAL] and head["counts"].get(LEXICAL):
        result.notes.append("the lexical rows were made by other code: not imported")
    if not same[MAP] and head["counts"].get(MAP):
        result.notes.append("the memoised maps were made by other code: not imported")
    for digest in sorted(maps):  # few (bounded by Limits.maps), each in its own transaction
        cache.put_shared_map(digest, maps[digest])
    result.maps = len(maps)
    return result


def _records(
    cache: SqliteTagCache,
    records: Iterator[dict[str, Any]],
    rows_only: bool,
    lexical_ok: bool,
    chooser: _Sample,
    state: _SpooledState,
    maps: dict[str, str],
    result: Imported,
) -> tuple[dict[str, Any], dict[str, bool]]:
    """Read the bundle's records into the cache (rows, counts and lexical rows written as they
    come, the state spooled, the maps kept for later): its header, and per kind of record
    (STATE, LEXICAL, MAP) whether this code made it and it is imported."""
    ours = producing_code()
    rows: list[ContentRow] = []
    counts: list[tuple[str, bytes, int]] = []
    head = next(records)
    code = head["code"]
    if code.get("extraction") != ours["extraction"]:
        raise BundleError(
            "the bundle was made by another version of repomapper's extraction code"
            f" ({str(code.get('extraction'))[:20]}, this one is {ours['extraction']}):"
            " none of its rows would be used"
        )
    same = {
        STATE: code.get("state") == ours["state"] and not rows_only,
        LEXICAL: lexical_ok and code.get("lexical") == ours["lexical"] and not rows_only,
        MAP: code.get("map") == ours["map"] and not rows_only,
    }
    for record in records:
        kind = record["k"]
        if rows_only and kind != ROW:
            continue
        if kind == ROW:
            row = _row(record, result)
            if row is not None:
                rows.append(row)
                chooser.offer(row)
                if len(rows) >= BATCH:
                    result.rows += insert_content_rows(cache, rows)
                    rows = []
        elif kind == MAP:
            if same[MAP] and _map(record, result):
                maps[record["key"]] = record["map"]
        elif kind == COUNT:
            count = _count(record, result)
            if count is not None:
                counts.append(count)
        elif kind == LEXICAL:
            if same[LEXICAL] and _lexical(cache, record, result):
                result.lexical += 1
        elif kind == STATE and same[STATE]:
            state.add(record)
    result.rows += insert_content_rows(cache, rows)
    result.counts = insert_counts(cache, counts)
    return head, same


_MAP_KEY = re.compile(r"[0-9a-f]{64}")


def _map(record: dict[str, Any], result: Imported) -> bool:
    """Whether a memoised map record reads as a map (a replay checks it again)."""
    from ..memo import stored_map

    key, text = record.get("key"), record.get("map")
    if isinstance(key, str) and _MAP_KEY.fullmatch(key) and isinstance(text, str):
        try:
            stored_map(text)
            return True
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
    result.skip("a memoised map is malformed")
    return False


def _check_verified(verified: Verified) -> None:
    if verified.disagreed:
        shown = ", ".join(verified.disagreed[:5])
        raise BundleError(
            f"verification failed: {len(verified.disagreed)} of {verified.checked} re-extracted"
            f" rows disagree with the bundle ({shown}); nothing imported"
        )
    if not verified.checked:
        raise BundleError(
            "verification found no row to check (no file of the bundle is in the root with the"
            " same content and backends); nothing imported"
        )


class _Sample:
    """A uniform random sample of the rows whose file exists under the root (reservoir
    sampling: the rows checked cannot be told in advance by whoever made the bundle)."""

    def __init__(self, root: Path, size: int, rng: random.Random):
        self.root, self.size, self.rng = root, size, rng
        self.rows: list[ContentRow] = []
        self.seen = 0

    def offer(self, row: ContentRow) -> None:
        if not self.size or not os.path.isfile(os.path.join(self.root, row[0][0])):
            return
        self.seen += 1
        if len(self.rows) < self.size:
            self.rows.append(row)
        else:
            i = self.rng.randrange(self.seen)
            if i < self.size:
                self.rows[i] = row


def _text_of(value: Any, shape: type) -> bool:
    """Whether ``value`` is JSON text of a value of ``shape`` (a list or a dict)."""
    if not isinstance(value, str):
        return False
    try:
        return isinstance(json.loads(value), shape)
    except ValueError:
        return False


def _row(record: dict[str, Any], result: Imported) -> ContentRow | None:
    found = checked_row(record.get("key"), record.get("row"))
    if isinstance(found, str):
        result.skip(found)
        return None
    return found


def checked_row(key: Any, row: Any) -> ContentRow | str:
    """A content row from untrusted plain data (a bundle's record, a cluster worker's answer),
    checked as the cache's own rows are shaped: the row, or why it is refused."""
    if not (isinstance(key, list) and len(key) == 3 and all(isinstance(k, str) for k in key)):
        return "a row's key is malformed"
    path, digest, fingerprint = key
    if not valid_path(path):
        return "a row's path is not inside the root"
    if not _DIGEST.fullmatch(digest) or not fingerprint or len(fingerprint) > 2000:
        return "a row's digest or backends are malformed"
    if not isinstance(row, list) or len(row) != 7:
        return "a row's columns are malformed"
    plugin, language, defs, refs, summary, imports, diags = row
    if not all(v is None or (isinstance(v, str) and len(v) <= 200) for v in (plugin, language)):
        return "a row's backend is malformed"
    if not (
        all(_text_of(v, list) for v in (defs, refs, imports, diags)) and _text_of(summary, dict)
    ):
        return "a row's texts are not JSON of the cache's shape"
    return (path, digest, fingerprint), tuple(row)


def _count(record: dict[str, Any], result: Imported) -> tuple[str, bytes, int] | None:
    encoder, key, n = record.get("encoder"), record.get("key"), record.get("tokens")
    if (
        isinstance(encoder, str)
        and 0 < len(encoder) <= 200
        and isinstance(key, str)
        and _COUNT_KEY.fullmatch(key)
        and type(n) is int
        and 0 <= n <= 1 << 31
    ):
        return encoder, bytes.fromhex(key), n
    result.skip("a token count is malformed")
    return None


def _tfs(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == len(FIELDS)
        and all(type(v) is int and 0 <= v < 1 << 31 for v in value)
    )


def _lexical(cache: SqliteTagCache, record: dict[str, Any], result: Imported) -> bool:
    """One file's lexical rows written as :mod:`repomapper.relevance.lexical` writes them
    (its ``lexdocs`` and ``postings`` tables, the file's old rows replaced)."""
    path, key = record.get("path"), record.get("key")
    lengths: list[int] = record.get("lengths")  # type: ignore[assignment]  # checked below
    postings = record.get("postings")
    if not (
        valid_path(path)
        and isinstance(key, str)
        and key.startswith(lexical_version() + "|")
        and len(key) < 3000
        and _tfs(lengths)
        and isinstance(postings, dict)
        and all(isinstance(t, str) and 0 < len(t) <= 1000 for t in postings)
        and all(_tfs(v) for v in postings.values())
    ):
        result.skip("a lexical row is malformed")
        return False
    conn = cache.conn
    old = conn.execute("SELECT terms FROM lexdocs WHERE path=?", (path,)).fetchone()
    if old is not None:
        conn.executemany(
            "DELETE FROM postings WHERE term=? AND path=?",
            [(t, path) for t in (old[0] or "").split()],
        )
    conn.executemany(
        "INSERT OR REPLACE INTO postings VALUES (?,?,?,?,?,?)",
        [(t, path, *tfs) for t, tfs in sorted(postings.items())],
    )
    conn.execute(
        "INSERT OR REPLACE INTO lexdocs VALUES (?,?,?,?,?,?,?)",
        (path, key, *lengths, " ".join(postings)),
    )
    return True


class _SpooledState:
    """The ranking state's parts as they are read, written to an unnamed temporary file in the
    cache directory (a large tree's state is hundreds of megabytes: held as parts, joined and
    read whole to be checked, it was most of an import's peak memory). The file goes when the
    import ends, stored or not."""

    def __init__(self, where: Path, limit: int):
        self.where, self.limit = where, limit
        self.size = 0
        self._file: BinaryIO | None = None

    def add(self, record: dict[str, Any]) -> None:
        part = _state_part(record, self.size)
        self.size += len(part)
        if self.size > self.limit:
            raise BundleError(f"the ranking state is over {self.limit} bytes")
        if self._file is None:  # (closed by __exit__)
            spool = tempfile.TemporaryFile(prefix="repomapper-state-", dir=self.where)  # noqa: SIM115
            self._file = cast(BinaryIO, spool)
        self._file.write(part)

    def spooled(self) -> BinaryIO:
        """The state's file, at its start."""
        if self._file is None:
            raise BundleError("the bundle holds no ranking state")
        self._file.flush()
        self._file.seek(0)
        return self._file

    def __enter__(self) -> _SpooledState:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def _state_part(record: dict[str, Any], at: int) -> bytes:
    data = record.get("data")
    if record.get("at") != at or not isinstance(data, str):
        raise BundleError("the ranking state's parts are out of order")
    try:
        return base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise BundleError(f"a part of the ranking state is not base64 ({exc})") from exc


def _store_state(cache: SqliteTagCache, spooled: BinaryIO, result: Imported) -> bool:
    """Store the ranking state when it reads as one of this code (the arrays checked for shape
    where they lie, ``allow_pickle=False``); a map uses it only for the files whose content
    keys it holds. Copied into place a chunk at a time."""
    stored = snapshot.decode(spooled)
    if stored is None:
        result.notes.append("the ranking state is unreadable: not imported")
        return False
    stored.give_back()

    def write(out: BinaryIO) -> None:
        spooled.seek(0)
        shutil.copyfileobj(spooled, out, 1 << 20)

    before = _identity(cache.state_path)
    cache.write_state(write)  # (which says nothing when it cannot write: a map rebuilds it)
    after = _identity(cache.state_path)
    if after is None or after == before:
        result.notes.append(
            f"the ranking state could not be written to {cache.state_path} (a full or"
            " read-only disk?): not imported, the first map builds it"
        )
        return False
    return True


def _identity(path: Path) -> tuple[int, int, int] | None:
    """What tells a file from the one written in its place (None: there is none)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns, st.st_size


def skipped_lines(result: Imported) -> Iterable[str]:
    for reason, n in sorted(result.skipped.items()):
        yield f"{n} record(s) skipped: {reason}"
