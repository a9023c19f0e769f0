"""``repomapper index export``: a repository's index built (or found in the cache) and written
as one bundle (see :mod:`.format`).

What a fresh clone's first map would otherwise spend its time on goes in (measured on django,
see ``docs/benchmarks.md``): every file's content row (the summaries, or the extraction), the
stored ranking state (the graph build), the remembered token counts (the tokenizer and the
counting), the lexical index's rows (a map with a task reads every file without them) and the
memoised maps of the export's budgets (a clone's first map with one of them is then a replay,
as a warm run is). The resolved imports are part of the ranking state.
"""

from __future__ import annotations

import base64
import contextlib
import gc
import logging
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

from .. import snapshot
from ..cache import (
    CacheKey,
    TagCache,
    content_rows,
    held_content_rows,
    open_cache,
    remembered_counts,
)
from ..codedigest import made_by
from ..memo import map_code, map_digest
from ..model import Diagnostic
from ..relevance.lexical import lexical_version
from ..repomap import RepoMap
from ..settings import ALL_FILES
from ..snapshot.stored import state_version
from ..summaryview import mapped_files
from .format import COUNT, LEXICAL, MAP, ROW, STATE, STATE_CHUNK, Writer, header

log = logging.getLogger(__name__)


def producing_code() -> dict[str, str]:
    """The digests of the code that made each part (the keys the cache uses for them)."""
    return {
        "extraction": made_by("extraction"),
        "state": str(state_version()),
        "lexical": lexical_version(),
        "map": map_code(),
    }


@dataclass(frozen=True)
class Exported:
    """What a bundle holds."""

    rows: int
    counts: int
    lexical: int
    state_bytes: int
    #: files with no content row (unreadable ones: they are extracted again where imported)
    missing: int
    maps: int = 0
    #: files extracted here by the export (not found in the cache)
    extracted: int = 0


def export_bundle(
    root: str | os.PathLike[str],
    out: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str] | None = None,
    map_tokens: int | Sequence[int] = 1024,
    **options: Any,
) -> Exported:
    """Build ``root``'s index in the cache (a map of each budget of ``map_tokens``, the lexical
    index) and write it to ``out`` (written to a temporary name and renamed). ``options`` go
    to :class:`~repomapper.repomap.RepoMap` (plugins, jobs, gitignore, ...)."""
    budgets = [map_tokens] if isinstance(map_tokens, int) else list(dict.fromkeys(map_tokens))
    if not budgets:
        raise ValueError("at least one budget is needed")
    root_path, keys, maps, extracted, state = _built(root, budgets, cache_dir, options)
    with state if state is not None else contextlib.nullcontext():
        # the closed repository state is cyclic garbage (its parts refer to each other), freed
        # at the next full collection: the kernel's every cache row (700 MB) was still held
        # while the bundle was written
        gc.collect()
        cache = open_cache(root_path, Path(cache_dir) if cache_dir is not None else None)
        target = Path(out)
        tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            with open(tmp, "wb") as f:
                found = _write(Writer(f), cache, keys, maps, state)
            os.replace(tmp, target)
        finally:
            cache.close()
            tmp.unlink(missing_ok=True)
    return replace(found, extracted=extracted)


def _built(
    root: str | os.PathLike[str],
    budgets: Sequence[int],
    cache_dir: str | os.PathLike[str] | None,
    options: Mapping[str, Any],
) -> tuple[Path, dict[str, CacheKey], dict[str, str], int, BinaryIO | None]:
    """The index built in the cache: a map of each budget, the ranking state, the lexical
    index. Returns the root, every file's content key, the memoised maps, the files extracted
    and the stored ranking state when it is of these files (open at its start: see
    :func:`_stored_state`); the repository state (the graph, every summary) is let go before
    the bundle is written."""
    with RepoMap(root, budgets[0], cache_dir=cache_dir, **options) as rm:
        rm.map()
        state = rm.state
        extracted = state.last_stats.get("extracted", 0)
        maps = _memoised(rm)
        for budget in budgets[1:]:  # the same state: extracted and ranked once
            other = RepoMap(root, budget, state=state)
            other.map()
            maps.update(_memoised(other))
        diags: list[Diagnostic] = []
        files = state.prepare(ALL_FILES, (), diags)
        keys = {k.path: k for k in (files.extractor.key(e) for e in files.all_entries)}
        if rm.graph_state is None:
            # a memoised map is replayed without the ranking state: ranking loads the stored
            # one, whose heads answer for every file below (their rows would be read instead:
            # 700 MB on the kernel), or builds and stores it when there is none (a clone's
            # other budgets and tasks need it: the bundle carries it)
            rm.rank()
        found, stored = _stored_state(state.cache, keys)
        if stored and found is None:
            # a state stored for an older version of the tree is updated in memory by each
            # map, never stored: built again and stored, so the bundle carries one (none
            # stored: the maps just made could not store it, and a build would not either)
            log.info("the stored ranking state is of an older version of the tree: built again")
            state.graphs.drop(rm.settings().selection)
            state.graphs.rebuild = True
            rm.rank()
            found, stored = _stored_state(state.cache, keys)
        if stored and found is None:
            log.info("the stored ranking state is of other files: not exported")
        try:
            summaries = state.summarise(files.extractor, files.all_entries)
            mapped = mapped_files(summaries)
            state.lexical_index(files.extractor, files.all_entries, mapped)
        except BaseException:
            if found is not None:
                found.close()
            raise
        return state.root, keys, maps, extracted, found


def _memoised(rm: RepoMap) -> dict[str, str]:
    """The memoised map of ``rm``'s settings, by its digest (none when it was not stored: a
    map reporting a cache problem or an unsettled extraction is not)."""
    settings = rm.settings()
    diags: list[Diagnostic] = []
    files = rm.state.prepare(settings.selection, settings.chat_files, diags)
    digest = map_digest(settings, rm.state, files.extractor, files.all_entries, diags, files.chat)
    found = rm.state.cache.get_shared_map(digest)
    return {digest: found} if isinstance(found, str) else {}


def _write(
    w: Writer,
    cache: TagCache,
    keys: Mapping[str, CacheKey],
    maps: Mapping[str, str],
    state: BinaryIO | None,
) -> Exported:
    """Every part written as it is read: a large tree's rows (the kernel's are gigabytes of
    text) and postings (tens of millions) are never held at once; ``state``, the stored
    ranking state of these files (or none), a chunk at a time."""
    wanted = [keys[p].content for p in sorted(keys) if keys[p].digest]
    counts = sorted(remembered_counts(cache))
    docs = _lexical_docs(cache, keys)
    state_size = _size(state) if state is not None else 0
    w.write(
        header(
            producing_code(),
            {
                ROW: held_content_rows(cache, wanted),
                COUNT: len(counts),
                LEXICAL: len(docs),
                STATE: state_size,
                MAP: len(maps),
            },
        )
    )
    found = _write_parts(w, cache, wanted, counts, docs, state)
    for digest in sorted(maps):
        w.write({"k": MAP, "key": digest, "map": maps[digest]})
    w.close()
    rows, lexical = found
    return Exported(rows, len(counts), lexical, state_size, len(keys) - rows, len(maps))


def _write_parts(
    w: Writer,
    cache: TagCache,
    wanted: list[tuple[str, str, str]],
    counts: list[tuple[str, bytes, int]],
    docs: Mapping[str, tuple[Any, ...]],
    state: BinaryIO | None,
) -> tuple[int, int]:
    """The rows, counts, lexical rows and state parts, each as read (the state from its open
    file, a chunk at a time); the rows and lexical rows written."""
    rows = 0
    for (path, digest, fingerprint), row in content_rows(cache, wanted):
        w.write({"k": ROW, "key": [path, digest, fingerprint], "row": list(row)})
        rows += 1
    for encoder, key, n in counts:
        w.write({"k": COUNT, "encoder": encoder, "key": key.hex(), "tokens": n})
    lexical = 0
    for record in _lexical_records(cache, docs):
        w.write(record)
        lexical += 1
    at = 0
    while state is not None and (part := state.read(STATE_CHUNK)):
        w.write({"k": STATE, "at": at, "data": base64.b64encode(part).decode("ascii")})
        at += len(part)
    return rows, lexical


def _stored_state(cache: TagCache, keys: Mapping[str, CacheKey]) -> tuple[BinaryIO | None, bool]:
    """The stored ranking state, open at its start, when it is the one of these files, and
    whether one is stored at all. Checked where it lies (a large tree's is hundreds of
    megabytes) and read again a chunk at a time while written: the file stays open, so a state
    another process stores meanwhile (under the same name) is not mixed in."""
    found = cache.read_state()
    if found is None:
        return None, False
    # (this cache wrote it: its names are checked by their checksum, not split and compared
    # one by one, a large tree's 3 million of them)
    stored = snapshot.decode(found, own=True)
    same = stored is not None and all(
        (key := keys.get(path)) is not None and stored.content(i) == key.content
        for i, path in enumerate(stored.files)
    )
    if stored is not None:
        stored.give_back()
    if not same:
        found.close()
        return None, stored is not None
    found.seek(0)
    return found, True


def _size(f: BinaryIO) -> int:
    size = f.seek(0, os.SEEK_END)
    f.seek(0)
    return size


def _lexical_docs(cache: TagCache, keys: Mapping[str, CacheKey]) -> dict[str, tuple[Any, ...]]:
    """The lexical index's documents of these files' versions (see
    :mod:`repomapper.relevance.lexical`): path -> (key, lengths), sorted by path."""
    from ..relevance.lexical import _key_text

    conn = getattr(cache, "conn", None)
    if conn is None:
        return {}
    try:
        found = conn.execute("SELECT path, key, lp, ln, ld, lb FROM lexdocs")
        docs = {
            path: (key, lengths)
            for path, key, *lengths in found
            if path in keys and key == _key_text(keys[path])
        }
        conn.execute("SELECT 1 FROM postings LIMIT 1").fetchall()  # (read while writing)
    except sqlite3.Error as exc:  # no index was built (or another version's was dropped)
        log.debug("no lexical rows exported: %s", exc)
        return {}
    return {p: docs[p] for p in sorted(docs)}


def _lexical_records(
    cache: TagCache, docs: Mapping[str, tuple[Any, ...]]
) -> Iterator[dict[str, Any]]:
    """Each document's record with its postings (term order), in path order: the postings are
    read sorted by path and grouped as they come (SQLite sorts them on disk)."""
    conn = getattr(cache, "conn", None)
    if conn is None or not docs:
        return
    found = _postings(conn)
    pending = next(found, None)
    for path, (key, lengths) in docs.items():
        postings: dict[str, list[int]] = {}
        while pending is not None and pending[1] <= path:
            term, at, *tfs = pending
            if at == path:
                postings[term] = tfs
            pending = next(found, None)
        yield {"k": LEXICAL, "path": path, "key": key, "lengths": lengths, "postings": postings}


def _postings(conn: sqlite3.Connection) -> Iterator[tuple[str, str, int, int, int, int]]:
    yield from conn.execute("SELECT term, path, tp, tn, td, tb FROM postings ORDER BY path, term")
