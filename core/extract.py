"""Extraction: read each file, route it to its backends, call the hooks, cache the answers.

Cache hits are found in one bulk read; misses are extracted in batches in supervised worker
processes (see :mod:`repomapper.isolation`), across several when there are enough of them, and
stream into the cache as they complete. A result touched by a crash, a hang or a disabled plugin
is never cached.
"""

from __future__ import annotations

import logging
import operator
import os
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from .backfill import backfill_references, needs_backfill
from .cache import RACY_NS, CacheKey, TagCache, content_digest, encode
from .codedigest import extraction_code
from .discover import FileEntry
from .isolation.limits import Limits
from .isolation.pool import WorkerPool
from .isolation.supervisor import (
    EXTRACT,
    FRAMEWORK,
    PREPARE,
    Extracted,
    Job,
    Outcome,
    Streaks,
    Supervisor,
    Tracker,
    null_tracker,
)
from .isolation.validate import Lines, validate_imports, validate_tags
from .model import (
    Diagnostic,
    FileExtraction,
    FileSymbols,
    Import,
    SourceFile,
    Tag,
    import_sort_key,
    tag_sort_key,
)
from .registry import PluginSet
from .rowtext import RowTags

log = logging.getLogger(__name__)

BATCH_SIZE = 48
PARALLEL_THRESHOLD = 96  # fewer misses than this are extracted by one worker
MINIFIED_EXTENSIONS = (".js", ".mjs", ".cjs", ".css", ".ts", ".json", ".svg", ".map")

ProgressFn = Callable[[int, int], None]


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def capture_warnings() -> Iterator[_Capture]:
    """Collect warnings logged by backends so they become diagnostics of the file."""
    handler = _Capture()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield handler
    finally:
        root.removeHandler(handler)


def content_problem(path: str, data: bytes) -> Diagnostic | None:
    """Why a file's content should not be mapped (binary, minified), or None."""
    head = data[:8192]
    if b"\0" in head:
        return Diagnostic("binary", "binary file (NUL byte); skipped", path, "info")
    lower = path.lower()
    if ".min." in lower.rsplit("/", 1)[-1]:
        return Diagnostic("minified", "minified file; skipped", path, "info")
    if lower.endswith(MINIFIED_EXTENSIONS) and _looks_minified(data):
        return Diagnostic("minified", "looks minified (very long lines); skipped", path, "info")
    return None


def _looks_minified(data: bytes) -> bool:
    """Lines over 400 bytes on average; in a file of at most 4096 bytes (a one-line bundle or
    translation after its licence comment), one line over 400 bytes that holds most of it."""
    if len(data) > 4096:
        sample = data[:65536]
        return sample.count(b"\n") * 400 < len(sample)
    if len(data) < 400:
        return False
    longest = max(len(line) for line in data.split(b"\n"))
    return longest > 400 and longest * 2 > len(data)


def extract_source(
    plugins: PluginSet,
    source: SourceFile,
    *,
    skip: frozenset[str] = frozenset(),
    limits: Limits | None = None,
    note: Callable[[str], None] | None = None,
    outcomes: list[Outcome] | None = None,
) -> FileExtraction:
    """Route one file to its backends and return what the first one that answers soundly gives.

    ``skip`` names backends not to ask (disabled, or at fault for this file before). Answers are
    validated (:mod:`repomapper.isolation.validate`): unsound items are dropped with one
    ``backend_invalid_output`` diagnostic per plugin, and an answer with nothing sound in it
    passes the file on to the next backend. ``note`` is told which plugin is about to run (the
    supervisor's tracker); ``outcomes`` collects (plugin, ok) for each answer or failure.

    Both hooks of a backend get ``source`` itself, so what one stored with
    :meth:`SourceFile.memo` the other finds; the memo is dropped when the file is done.
    """
    try:
        return _extract_source(plugins, source, skip, limits, note, outcomes)
    finally:
        source.drop_memo()


def _extract_source(
    plugins: PluginSet,
    source: SourceFile,
    skip: frozenset[str],
    limits: Limits | None,
    note: Callable[[str], None] | None,
    outcomes: list[Outcome] | None,
) -> FileExtraction:
    limits = limits or plugins.config.limits
    names = [n for n in plugins.candidates(source.path) if n not in skip]
    infos = plugins.infos
    available = [n for n in names if infos[n].available]
    diags: list[Diagnostic] = []
    tags: list[Tag] | None = None
    imports: list[Import] | None = None
    plugin: str | None = None
    lines: Lines | None = None
    calls = _Calls(plugins, source, skip, diags, outcomes)
    with capture_warnings() as captured:
        for name in available:
            if note is not None:
                note(name)
            try:
                answered, result = calls.ask("extract_tags", name)
            except KeyboardInterrupt:
                raise
            except BaseException as exc:  # SystemExit from a hook is a crash of the hook too
                diags.append(
                    Diagnostic(
                        "backend_error", f"{name} crashed: {type(exc).__name__}: {exc}", source.path
                    )
                )
                _outcome(outcomes, name, False)
                continue
            if answered is None:
                continue
            lines = lines or Lines.of(source)
            tags, problem = validate_tags(result, source, limits.max_tags, lines)
            problems = [problem] if problem else []
            if not tags and problem:  # nothing sound in the answer: the next backend is asked
                tags = None
            if tags is not None:
                try:
                    _, found = calls.ask("extract_imports", name)
                except KeyboardInterrupt:
                    raise
                except BaseException as exc:
                    diags.append(
                        Diagnostic(
                            "backend_error",
                            f"{name} crashed extracting imports: {type(exc).__name__}: {exc}",
                            source.path,
                        )
                    )
                    found = None
                if found is not None:
                    imports, problem = validate_imports(found, source, limits.max_tags, lines)
                    problems += [problem] if problem else []
            if problems:
                diags.append(
                    Diagnostic(
                        "backend_invalid_output",
                        f"plugin {name} returned invalid output: {'; '.join(problems)}",
                        source.path,
                    )
                )
            _outcome(outcomes, name, not problems)
            if tags is not None:
                plugin = name
                break
    for record in captured.records:
        diags.append(
            Diagnostic(
                getattr(record, "code", None) or "backend_warning",
                _record_message(record, source.path),
                source.path,
                _record_severity(record),
            )
        )
    if plugin is None:
        unavailable = [n for n in names if not infos[n].available]
        failed = any(d.code in ("backend_error", "backend_invalid_output") for d in diags)
        if unavailable:
            reasons = "; ".join(f"{n}: {infos[n].detail or 'unavailable'}" for n in unavailable)
            diags.append(
                Diagnostic("backend_unavailable", f"no available backend ({reasons})", source.path)
            )
        elif not names and not skip:
            diags.append(
                Diagnostic("no_backend", "no backend handles this file type", source.path, "info")
            )
        elif not failed and names:  # (every backend skipped: the reason is already reported)
            asked = ", ".join(available) or "none left"
            diags.append(
                Diagnostic(
                    "no_backend", f"no backend answered (asked: {asked})", source.path, "info"
                )
            )
        return FileExtraction(source.path, diagnostics=_unique(diags))
    tag_list = tags or []
    if "references" not in infos[plugin].capabilities and needs_backfill(tag_list):
        tag_list += backfill_references(source.path, source.data.decode("utf-8", "replace"))
    tag_list = _canonical(tag_list)
    import_list = sorted(set(imports or ()), key=import_sort_key)
    language = infos[plugin].language_for(source.path)
    return FileExtraction(
        source.path, tuple(tag_list), tuple(import_list), plugin, language, _unique(diags)
    )


class _Calls:
    """One file's hook calls, each routed to one backend inside the other plugins' wrappers.

    A wrapper that raises is contained like a plugin error: the file gets a ``backend_error``
    naming the wrapper's plugin, the failure counts against that plugin (not the backend it
    wrapped), the wrapper is left out of the file's later calls and the backend is asked again
    without it. An exception the backend raised itself propagates to the caller.
    """

    def __init__(
        self,
        plugins: PluginSet,
        source: SourceFile,
        skip: frozenset[str],
        diags: list[Diagnostic],
        outcomes: list[Outcome] | None,
    ) -> None:
        self.plugins, self.source, self.diags, self.outcomes = plugins, source, diags, outcomes
        #: plugins whose wrappers are left out: the skipped ones, then those that raised here
        self.left_out = skip

    def ask(self, hook_name: str, name: str) -> tuple[str | None, Any]:
        plugins = self.plugins
        while True:
            try:
                found = plugins.call_first(
                    hook_name, [name], skip=self.left_out, source=self.source
                )
            except KeyboardInterrupt:
                raise
            except BaseException as exc:
                culprit = plugins.culprit(exc, hook_name, name)
                if culprit == name or culprit in self.left_out:
                    raise
                self.left_out = self.left_out | {culprit}
                self.diags.append(
                    Diagnostic(
                        "backend_error",
                        f"{culprit} crashed wrapping {name}'s {hook_name}: "
                        f"{type(exc).__name__}: {exc}; the answer is {name}'s without it",
                        self.source.path,
                    )
                )
                _outcome(self.outcomes, culprit, False)
                continue
            for wrapper in plugins.wrappers(hook_name, self.left_out):
                _outcome(self.outcomes, wrapper, True)
            return found


def _canonical(tags: list[Tag]) -> list[Tag]:
    """A file's tags in their canonical order, each once. A backend that already returns them
    so (the tree-sitter backends do) is only checked: every key strictly above the one before
    (two tags of a file with equal keys are equal, so no set of tags is needed)."""
    keys = list(map(tag_sort_key, tags))
    if all(map(operator.lt, keys, keys[1:])):
        return tags
    return sorted(set(tags), key=tag_sort_key)


def _outcome(outcomes: list[Outcome] | None, name: str, ok: bool) -> None:
    if outcomes is not None:
        outcomes.append((name, ok))


def _record_message(record: logging.LogRecord, path: str) -> str:
    msg = record.getMessage()
    prefix = f"{path}: "
    return msg[len(prefix) :] if msg.startswith(prefix) else msg


def _record_severity(record: logging.LogRecord) -> str:
    """A backend's warning is a ``warning`` diagnostic unless it says ``severity="info"`` (or
    ``"error"``) in its ``extra``: an expected, harmless condition worth recording."""
    severity = getattr(record, "severity", None)
    return severity if severity in ("info", "error") else "warning"


def _unique(diags: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(dict.fromkeys(diags))


def read_source(root: Path, entry: FileEntry) -> tuple[SourceFile | None, FileExtraction | None]:
    """Read a file; a FileExtraction with the reason instead when it cannot or should not be."""
    try:
        data = (root / entry.path).read_bytes()
    except OSError as exc:
        diag = Diagnostic("unreadable", f"cannot read: {exc.strerror or exc}", entry.path)
        return None, FileExtraction(entry.path, diagnostics=(diag,))
    problem = content_problem(entry.path, data)
    if problem is not None:
        return None, FileExtraction(entry.path, diagnostics=(problem,))
    return SourceFile(root, entry.path, data), None


def extract_batch(
    plugins: PluginSet,
    root: Path,
    entries: Sequence[FileEntry],
    *,
    skip: Mapping[str, frozenset[str]] | None = None,
    limits: Limits | None = None,
    tracker: Callable[[int, str | None, int], None] = null_tracker,
    outcomes: list[Outcome] | None = None,
) -> list[FileExtraction]:
    """Extract a batch: read, let batch backends prepare once, then ask per file.

    ``skip`` maps a path to the backends not to ask for it; ``tracker`` is told which file and
    plugin each step works on (see :mod:`repomapper.isolation.supervisor`).
    """
    skip = skip or {}
    results: dict[str, FileExtraction] = {}
    sources: list[tuple[int, SourceFile]] = []
    tracker(-1, None, FRAMEWORK)
    for i, entry in enumerate(entries):
        src, skipped = read_source(root, entry)
        if skipped is not None:
            results[entry.path] = skipped
        elif src is not None:
            sources.append((i, src))
    by_plugin: dict[str, list[tuple[int, SourceFile]]] = defaultdict(list)
    for i, src in sources:
        excluded = skip.get(src.path, frozenset())
        first = next(
            (
                n
                for n in plugins.candidates(src.path)
                if n not in excluded and plugins.infos[n].available
            ),
            None,
        )
        if first is not None:
            by_plugin[first].append((i, src))
    # the wrappers a file leaves out are its skipped plugins: those every file skips here
    skips = [skip.get(src.path, frozenset()) for _, src in sources]
    left_out = frozenset.intersection(*skips) if skips else frozenset()
    for name, group in sorted(by_plugin.items()):
        tracker(group[0][0], name, PREPARE)
        try:
            plugins.call_each(
                "prepare_batch", [name], skip=left_out, sources=[src for _, src in group]
            )
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            culprit = plugins.culprit(exc, "prepare_batch", name)
            how = "" if culprit == name else f" (in a wrapper of {culprit})"
            log.warning("%s: prepare_batch failed%s: %s: %s", name, how, type(exc).__name__, exc)
    for i, src in sources:
        results[src.path] = extract_source(
            plugins,
            src,
            skip=skip.get(src.path, frozenset()),
            limits=limits,
            note=_noting(tracker, i),
            outcomes=outcomes,
        )
    tracker(-1, None, FRAMEWORK)
    return [results[e.path] for e in entries if e.path in results]


def extract_encoded(
    plugins: PluginSet, root: Path, entries: Sequence[FileEntry], full: bool, **kwargs: Any
) -> list[Extracted]:
    """Extract a batch and encode it for the cache where it runs (in the worker, in parallel)."""
    out: list[Extracted] = []
    for ex in extract_batch(plugins, root, entries, **kwargs):
        summary = FileSymbols.from_extraction(ex)
        # a file that could not be read is not cached: permissions change without its mtime or
        # size, so the next run must try again
        row = None if any(d.code == "unreadable" for d in ex.diagnostics) else encode(ex, summary)
        if row is not None and not full:  # the definitions travel and stay as their row's text
            summary = replace(summary, definitions=RowTags(ex.path, row[2]))
        out.append((ex.path, row, ex if full else summary))
    return out


#: files to hash before the hashing is spread over threads (reading a file and BLAKE2b over
#: it release the interpreter, so the threads overlap them)
THREADED_HASHING = 256
#: files per task of the hashing threads (one future per file cost more than the hashing)
THREAD_CHUNK = 128


def _digests(root: Path, entries: Sequence[FileEntry]) -> dict[FileEntry, str]:
    """Each entry's content digest ("" for a file that cannot be read), read and hashed."""
    base = os.path.join(root, "")
    paths = [base + e.path for e in entries]
    if len(paths) < THREADED_HASHING:
        return dict(zip(entries, map(content_digest, paths), strict=True))
    from concurrent.futures import ThreadPoolExecutor

    def hashed(chunk: list[str]) -> list[str]:
        return [content_digest(p) for p in chunk]

    workers = max(2, min(4, default_jobs()))
    chunks = [paths[i : i + THREAD_CHUNK] for i in range(0, len(paths), THREAD_CHUNK)]
    with ThreadPoolExecutor(workers) as pool:
        digests = [d for chunk in pool.map(hashed, chunks) for d in chunk]
    return dict(zip(entries, digests, strict=True))


def _chunks(items: Sequence[FileEntry], size: int) -> list[list[FileEntry]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def default_jobs() -> int:
    """The CPUs this process may use: the default, and the cap, of ``jobs``."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


class Extractor:
    """Turns file entries into extractions, using and filling the cache.

    ``run(..., full=False)`` returns :class:`FileSymbols` (what ranking needs, cheap to load from
    the cache); ``full=True`` returns :class:`FileExtraction` with every tag.

    Plugin hooks run in supervised worker processes (:mod:`repomapper.isolation.supervisor`):
    one for a small run, up to ``jobs`` (capped at the CPU count) for a large one. A crash or a
    hang costs the file it happened on; ``diagnostics`` holds what concerns the whole run
    (plugins that failed to load, plugins disabled after failing on many files in a row).
    """

    def __init__(
        self,
        plugins: PluginSet,
        cache: TagCache,
        jobs: int | None = None,
        progress: ProgressFn | None = None,
        timeout: float | None = None,
        limits: Limits | None = None,
        pool: WorkerPool | None = None,
        settled: dict[FileEntry, CacheKey] | None = None,
    ):
        self.plugins = plugins
        #: idle workers kept between runs by a long-lived owner (see repomapper.isolation.pool)
        self.pool = pool
        self.cache = cache
        cap = default_jobs()
        wanted = jobs if jobs and jobs > 0 else cap
        if wanted > cap:
            log.info("jobs capped at %d (the CPU count; %d asked)", cap, wanted)
        self.jobs = min(wanted, cap)
        self.progress = progress
        self.limits = (limits or plugins.config.limits).with_timeout(timeout)
        self.stats = {"cached": 0, "extracted": 0}
        self.diagnostics: list[Diagnostic] = []
        self._keys: dict[FileEntry, CacheKey] = {}
        #: keys a long-lived owner keeps between calls: only those whose digest was taken well
        #: after the file's mtime (a file rewritten within one timestamp tick at the same size
        #: has an equal entry, so a key taken too close to its mtime is never reused)
        self._settled = settled
        self.root: Path | None = None
        #: paths whose content this extractor found changed since the cache last saw them (or
        #: never seen)
        self.content_changed: set[str] = set()

    def prepare(self, root: Path, entries: Iterable[FileEntry]) -> None:
        """Compute the cache keys of ``entries`` at once (see :meth:`key`). A file's content
        digest is the one the cache remembers for its mtime and size, unless the file changed
        too close to when that digest was taken to trust its mtime; otherwise the file is read
        and hashed (a fresh clone pays this once, a warm run never)."""
        self.root = root
        missing = [e for e in entries if e not in self._keys]
        if self._settled:
            kept = self._settled
            self._keys.update((e, kept[e]) for e in missing if e in kept)
            missing = [e for e in missing if e not in self._keys]
        if not missing:
            return
        known = self.cache.digests([e.path for e in missing])
        now = time.time_ns()
        taken: list[tuple[str, int, int, str, int]] = []
        versioned: dict[str, str] = {}  # backends fingerprint -> the key's (one string each)
        fingerprint = self.plugins.fingerprint

        def trusted(entry: FileEntry) -> str | None:
            """The remembered digest, when the file's stat is the one it was taken with, well
            after the file's mtime."""
            row = known.get(entry.path)
            if (
                row is not None
                and row[2]
                and (row[0], row[1]) == (entry.mtime_ns, entry.size)
                and entry.mtime_ns < row[3] - RACY_NS
            ):
                return row[2]
            return None

        remembered = {e: d for e in missing if (d := trusted(e)) is not None}
        hashed = _digests(root, [e for e in missing if e not in remembered])
        for entry in missing:
            digest = remembered.get(entry)
            if digest is None:
                digest = hashed[entry]
                if digest:
                    taken.append((entry.path, entry.mtime_ns, entry.size, digest, now))
                row = known.get(entry.path)
                if row is None or digest != row[2]:
                    self.content_changed.add(entry.path)
            backends = fingerprint(entry.path)
            fp = versioned.get(backends)
            if fp is None:
                code = extraction_code(self.plugins, entry.path)  # the core's and backends'
                fp = versioned[backends] = f"{code}|{backends}"
            key = self._keys[entry] = CacheKey(entry.path, entry.mtime_ns, entry.size, fp, digest)
            if self._settled is not None and digest and entry.mtime_ns < now - RACY_NS:
                self._settled[entry] = key
        self.cache.record_digests(taken)

    def prepared(self) -> dict[str, CacheKey]:
        """path -> cache key, for every entry prepared so far."""
        return {e.path: k for e, k in self._keys.items()}

    def key(self, entry: FileEntry) -> CacheKey:
        """The cache key of ``entry`` (path, stat, backends, content digest); computed once per
        entry for this extractor's call (the map's digest, the extraction, the reuse check and
        the lexical index all ask)."""
        key = self._keys.get(entry)
        if key is None:
            if self.root is None:
                raise RuntimeError("Extractor.prepare(root, entries) must come before key()")
            self.prepare(self.root, [entry])
            key = self._keys[entry]
        return key

    def cached(
        self,
        root: Path,
        entries: Sequence[FileEntry],
        full: bool = False,
        deferred: bool = False,
    ) -> dict[str, FileExtraction | FileSymbols]:
        """The cache's entries for ``entries`` (see :meth:`TagCache.lookup`) that pass the read
        check a miss would: a file made unreadable since it was cached (a permission change
        keeps its mtime and size) is not served from the cache."""
        self.prepare(root, entries)
        keys = [self.key(e) for e in entries]
        found = self.cache.lookup(keys, full=full, deferred=deferred)
        base = os.path.join(root, "")  # a string join: pathlib's cost per file was most of this
        for path in [p for p in found if not os.access(base + p, os.R_OK)]:
            del found[path]
        return found

    def run(
        self,
        root: Path,
        entries: Sequence[FileEntry],
        full: bool = False,
        misses: Callable[[int], None] | None = None,
        deferred: bool = False,
    ) -> dict[str, FileExtraction | FileSymbols]:
        """Every entry's extraction: from the cache when it holds the file's content, else
        extracted (in workers). ``misses`` is told how many files are to be extracted, once the
        cache has answered; ``deferred`` reads cached summaries' texts only when they are read
        (see :meth:`repomapper.cache.TagCache.lookup`)."""
        self.prepare(root, entries)
        keys = {e.path: self.key(e) for e in entries}
        self.diagnostics = list(self.plugins.load_diagnostics())
        results = self.cached(root, entries, full=full, deferred=deferred)
        todo = [e for e in entries if e.path not in results]
        if misses is not None:
            misses(len(todo))
        self.stats = {"cached": len(results), "extracted": len(todo)}
        total, done = len(entries), len(results)
        if self.progress:
            self.progress(done, total)
        batches = _chunks(todo, BATCH_SIZE)
        for batch_result in self._execute(root, batches, full):
            self.cache.store((keys[path], row) for path, row, _ in batch_result if row is not None)
            for path, _, result in batch_result:
                results[path] = result
            done += len(batch_result)
            if self.progress:
                self.progress(done, total)
        return {e.path: results[e.path] for e in entries if e.path in results}

    def _disabled_for(self, path: str, disabled: frozenset[str]) -> bool:
        """Whether a plugin in ``disabled`` would have answered for ``path`` or wrapped the answer
        (its result is then not cached: the next run asks it)."""
        if not disabled:
            return False
        return any(n in disabled for n in self.plugins.candidates(path)) or not disabled.isdisjoint(
            self.plugins.wrapper_plugins()
        )

    def _run_batch(self, root: Path, full: bool) -> Callable[..., tuple[list[Any], list[Any]]]:
        """What a worker runs for a batch of jobs (the closure a worker is forked with)."""
        plugins, limits = self.plugins, self.limits

        def run_batch(
            jobs: Sequence[Job], disabled: frozenset[str], tracker: Tracker
        ) -> tuple[list[Extracted], list[Outcome]]:
            outcomes: list[Outcome] = []
            skip = {j.entry.path: j.skip | disabled for j in jobs if j.skip or disabled}
            out = extract_encoded(
                plugins,
                root,
                [j.entry for j in jobs],
                full,
                skip=skip,
                limits=limits,
                tracker=tracker,
                outcomes=outcomes,
            )
            return out, outcomes

        return run_batch

    def _supervisor(self, root: Path, full: bool, workers: int) -> Supervisor:
        view = (lambda ex: ex) if full else FileSymbols.from_extraction
        return Supervisor(
            self._run_batch(root, full),
            list(self.plugins.infos),
            self.limits,
            workers,
            self._disabled_for,
            view,
            self.pool,
            # a kept worker must see what a fresh one would: the same root, request, limits,
            # plugin set and environment (plugins read settings from it)
            ((str(root), full, self.limits, tuple(sorted(os.environ.items()))), self.plugins),
        )

    def keep_worker(self, root: Path, sample: FileEntry | None = None) -> None:
        """Start the worker a long-lived owner's next run will use, unless its pool has one
        (so that the first edit does not pay for forking it), and have it extract ``sample``
        once, the result dropped: a new worker's first file also pays for the pages and the
        plugin code it touches for the first time."""
        if self.pool is None or not (self.limits.isolate and Supervisor.available()):
            return
        self._supervisor(root, False, 1).start_idle()
        if sample is not None:
            for _ in self._supervisor(root, False, 1).run([[sample]]):
                pass

    def _execute(
        self, root: Path, batches: list[list[FileEntry]], full: bool
    ) -> Iterator[list[Extracted]]:
        if not batches:
            return
        misses = sum(len(b) for b in batches)
        if not (self.limits.isolate and Supervisor.available()):
            yield from self._in_process(self._run_batch(root, full), batches)
            return
        workers = self.jobs if misses >= PARALLEL_THRESHOLD else 1
        supervisor = self._supervisor(root, full, workers)
        try:
            yield from supervisor.run(batches)
        finally:
            self.diagnostics.extend(supervisor.diagnostics)

    def _in_process(
        self,
        run_batch: Callable[..., tuple[list[Extracted], list[Outcome]]],
        batches: list[list[FileEntry]],
    ) -> Iterator[list[Extracted]]:
        """Without fork (or with isolation off): the same bookkeeping, no crash or hang containment."""
        streaks = Streaks(self.limits.max_failures)
        try:
            for batch in batches:
                disabled = streaks.names
                out, outcomes = run_batch([Job(e) for e in batch], disabled, null_tracker)
                for plugin, ok in outcomes:
                    streaks.record(plugin, ok)
                # a file a disabled plugin would have answered is not cached: the next run asks it
                yield [
                    (path, None if self._disabled_for(path, disabled) else row, result)
                    for path, row, result in out
                ]
        finally:
            self.diagnostics.extend(streaks.disabled[n] for n in sorted(streaks.disabled))


def _noting(tracker: Callable[[int, str | None, int], None], i: int) -> Callable[[str], None]:
    """What tells ``tracker`` which backend extracts file ``i``."""
    return lambda name: tracker(i, name, EXTRACT)
