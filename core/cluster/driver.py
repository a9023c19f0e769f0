"""The driver: which files need extracting, their batches sent to the cluster, and the rows that
come back checked and stored in the content-keyed cache.

For each root the driver lists the files and computes their cache keys as a map does (so it
reads and hashes each file once); files whose row the cache holds are not sent. The others go
out in batches (:mod:`.batching`) to :func:`.work.extract_rows`; every answer is untrusted plain
data, checked as an imported bundle's row is (:func:`repomapper.bundle.importer.checked_row`),
and a row is stored only under the content key (path, content digest, backends and extraction
code) the driver computed itself: a worker that read other content (the file changed, another
checkout) or runs other code cannot put a row where a map would read it. A batch that fails (a
lost worker, an error, after the engine's retry) is reported; its files, and every file the
workers gave no usable row for, are extracted here by the export's map, so there is never a gap.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..bundle.importer import checked_row
from ..cache import CacheKey, SqliteTagCache, TagCache, open_cache
from ..fileentry import FileEntry
from ..model import Diagnostic
from ..settings import ALL_FILES
from ..state import RepositoryState
from ..state.repository import StateOptions
from .batching import MAX_FILES, Batch, batch_files, batches_of
from .engine import ClusterError, Outcome
from .work import extract_rows

log = logging.getLogger(__name__)

#: distinct reasons kept of those the workers give (their answers are not trusted to be few)
MAX_REASONS = 20
#: (files done, files to do, batches done, batches to do)
ClusterProgress = Callable[[int, int, int, int], None]


class Engine(Protocol):
    """What the driver needs of an engine (:class:`.engine.DaskEngine`)."""

    @property
    def workers(self) -> int: ...

    def run(
        self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]
    ) -> Iterator[Outcome]: ...


@dataclass
class ClusterRun:
    """What the cluster did for an export."""

    roots: int = 0
    #: files listed in all roots, those whose row the cache already held, those sent out
    files: int = 0
    cached: int = 0
    sent: int = 0
    #: rows the workers returned that were checked and stored
    stored: int = 0
    #: files sent out with no usable row back: extracted here by the export's map
    left: int = 0
    batches: int = 0
    #: one line per batch that failed on the cluster (its files are extracted here)
    failed: list[str] = field(default_factory=list)
    #: reason -> rows refused
    refused: dict[str, int] = field(default_factory=dict)
    #: reason a worker gave -> files it returned no row for (a file missing there, say)
    unextracted: dict[str, int] = field(default_factory=dict)
    #: what the workers reported (a plugin disabled, a file unreadable there), once each
    notes: list[str] = field(default_factory=list)
    workers: int = 0
    #: seconds listing and hashing, and seconds from the first batch sent to the last stored
    planning_seconds: float = 0.0
    seconds: float = 0.0
    #: of ``seconds``, what the driver spent checking and storing the rows
    storing_seconds: float = 0.0
    #: seconds the workers spent in their batches, by worker (host:pid)
    busy: dict[str, float] = field(default_factory=dict)
    #: characters of the stored rows' texts (what came back over the network, about)
    row_chars: int = 0

    def refuse(self, reason: str, n: int = 1) -> None:
        self.refused[reason] = self.refused.get(reason, 0) + n

    @property
    def files_per_second(self) -> float:
        return self.stored / self.seconds if self.seconds > 0 else 0.0


@dataclass(frozen=True)
class _Plan:
    """One root's files to send, by path, with the content key each row must have."""

    root: Path
    keys: dict[str, tuple[str, str, str]]
    entries: list[FileEntry]
    listed: int


def extract_on_cluster(
    roots: Sequence[str | os.PathLike[str]],
    engine: Engine,
    cache_dir: str | os.PathLike[str] | None = None,
    progress: ClusterProgress | None = None,
    max_files: int = MAX_FILES,
) -> ClusterRun:
    """Extract every file of ``roots`` that the cache lacks on ``engine``'s workers and store
    the rows in the cache of ``cache_dir`` (the content rows every root shares). ClusterError
    when the cache cannot be written (the rows would be lost)."""
    run = ClusterRun(roots=len(roots), workers=engine.workers)
    started = time.perf_counter()
    plans = [_plan(Path(r), cache_dir) for r in roots]
    per_batch = batch_files(sum(len(p.keys) for p in plans), run.workers, max_files)
    run.files = sum(p.listed for p in plans)
    run.sent = sum(len(p.keys) for p in plans)
    run.cached = run.files - run.sent
    run.planning_seconds = time.perf_counter() - started
    work = [
        (plan, batch) for plan in plans for batch in batches_of(plan.root, plan.entries, per_batch)
    ]
    run.batches = len(work)
    if not work:
        return run
    cache = _writable_cache(Path(roots[0]), cache_dir)
    started = time.perf_counter()
    done_files = done_batches = 0
    try:
        tasks = [(str(batch.root), list(batch.paths)) for _, batch in work]
        for outcome in engine.run(extract_rows, tasks):
            plan, batch = work[outcome.tag]
            if outcome.error is not None:
                run.failed.append(
                    f"{plan.root}: a batch of {len(batch.paths)} files from {batch.paths[0]}"
                    f" failed on the cluster ({type(outcome.error).__name__}:"
                    f" {str(outcome.error)[:200]}); its files are extracted here"
                )
                run.left += len(batch.paths)
            else:
                begin = time.perf_counter()
                rows = _accepted(outcome.result, plan, batch, run)
                _store(cache, rows)
                run.storing_seconds += time.perf_counter() - begin
                run.row_chars += sum(len(t) for _, row in rows for t in row if t)
                run.stored += len(rows)
                run.left += len(batch.paths) - len(rows)
            done_files += len(batch.paths)
            done_batches += 1
            if progress is not None:
                progress(done_files, run.sent, done_batches, run.batches)
    finally:
        cache.close()
    run.seconds = time.perf_counter() - started
    return run


def _plan(root: Path, cache_dir: str | os.PathLike[str] | None) -> _Plan:
    """``root``'s files whose row the cache lacks, with their keys (computed as a map does)."""
    with RepositoryState(root, StateOptions(cache_dir=cache_dir)) as state:
        diags: list[Diagnostic] = []
        files = state.prepare(ALL_FILES, (), diags)
        entries = files.all_entries
        hits = files.extractor.cached(state.root, entries)
        todo = [e for e in entries if e.path not in hits]
        keys = {e.path: files.extractor.key(e) for e in todo}
        sendable = [e for e in todo if keys[e.path].digest]  # "": unreadable, left to the map
        return _Plan(
            state.root,
            {e.path: keys[e.path].content for e in sendable},
            sendable,
            len(entries),
        )


def _writable_cache(root: Path, cache_dir: str | os.PathLike[str] | None) -> SqliteTagCache:
    cache = open_cache(root, Path(cache_dir) if cache_dir is not None else None)
    if not isinstance(cache, SqliteTagCache) or cache._fallen_back:
        why = "; ".join(d.message for d in cache.diagnostics) or cache.location
        cache.close()
        raise ClusterError(f"the cluster's rows go to the cache, which cannot be written: {why}")
    return cache


def _store(cache: TagCache, rows: list[tuple[CacheKey, Any]]) -> None:
    if rows:
        cache.store(rows)
        if getattr(cache, "_fallen_back", False):
            raise ClusterError(f"the cache at {cache.location} could not be written")


def _accepted(
    answer: Any, plan: _Plan, batch: Batch, run: ClusterRun
) -> list[tuple[CacheKey, Any]]:
    """The rows of one worker's answer that hold together and carry the content key the driver
    computed for a file of this batch."""
    if not isinstance(answer, dict) or not isinstance(answer.get("rows"), list):
        run.refuse("a worker's answer is malformed", len(batch.paths))
        return []
    wanted = set(batch.paths)
    out: dict[str, tuple[CacheKey, Any]] = {}
    for item in answer["rows"]:
        if not (isinstance(item, list) and len(item) == 4):
            run.refuse("a row's key is malformed")
            continue
        found = checked_row(item[:3], item[3])
        if isinstance(found, str):
            run.refuse(found)
            continue
        (path, digest, fingerprint), row = found
        if path not in wanted or path in out:
            run.refuse("a row is of a file not in its batch")
            continue
        if plan.keys.get(path) != (path, digest, fingerprint):
            run.refuse("a row is of other content or other code than the driver's")
            continue
        out[path] = (CacheKey(path, 0, 0, fingerprint, digest), row)
    left = answer.get("left")
    for item in left if isinstance(left, list) else ():
        why = str(item[1])[:200] if isinstance(item, list) and len(item) == 2 else "(malformed)"
        if why in run.unextracted or len(run.unextracted) < MAX_REASONS:
            run.unextracted[why] = run.unextracted.get(why, 0) + 1
    worker, seconds = answer.get("worker"), answer.get("seconds")
    if isinstance(worker, str) and isinstance(seconds, int | float):
        run.busy[worker[:200]] = run.busy.get(worker[:200], 0.0) + float(seconds)
    notes = answer.get("notes")
    for note in notes if isinstance(notes, list) else ():
        text = str(note)[:300]
        if text not in run.notes and len(run.notes) < MAX_REASONS:
            run.notes.append(text)
    return [out[p] for p in sorted(out)]
