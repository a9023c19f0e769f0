"""Extraction: read each file, route it to its backends, call the hooks, cache the answers.

Cache hits are found in one bulk read; misses are extracted in batches, across processes when
there are enough of them, and stream into the cache as they complete.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from contextlib import contextmanager
from pathlib import Path

from .backfill import backfill_references, needs_backfill
from .cache import CacheKey, EncodedRow, TagCache, encode
from .discover import FileEntry
from .model import Diagnostic, FileExtraction, FileSymbols, Import, SourceFile, Tag, tag_sort_key
from .registry import PluginSet

log = logging.getLogger(__name__)

#: Bump when the core's own treatment of backend output changes (it keys the cache).
EXTRACT_VERSION = "1"
BATCH_SIZE = 48
PARALLEL_THRESHOLD = 96  # fewer misses than this are extracted in-process
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
    if lower.endswith(MINIFIED_EXTENSIONS) and len(data) > 4096:
        sample = data[:65536]
        if sample.count(b"\n") * 400 < len(sample):  # average line over 400 bytes
            return Diagnostic("minified", "looks minified (very long lines); skipped", path, "info")
    return None


def extract_source(plugins: PluginSet, source: SourceFile) -> FileExtraction:
    """Route one file to its backends and return what the first one that answers gives."""
    names = plugins.candidates(source.path)
    infos = plugins.infos
    available = [n for n in names if infos[n].available]
    diags: list[Diagnostic] = []
    tags: Sequence[Tag] | None = None
    imports: Sequence[Import] | None = None
    plugin: str | None = None
    with capture_warnings() as captured:
        for name in available:
            try:
                answered, result = plugins.call_first("extract_tags", [name], source=source)
            except Exception as exc:
                diags.append(
                    Diagnostic(
                        "backend_error", f"{name} crashed: {type(exc).__name__}: {exc}", source.path
                    )
                )
                continue
            if answered is None:
                continue
            plugin, tags = answered, result
            try:
                _, imports = plugins.call_first("extract_imports", [name], source=source)
            except Exception as exc:
                diags.append(
                    Diagnostic(
                        "backend_error",
                        f"{name} crashed extracting imports: {type(exc).__name__}: {exc}",
                        source.path,
                    )
                )
            break
    for record in captured.records:
        diags.append(
            Diagnostic(
                getattr(record, "code", None) or "backend_warning",
                _record_message(record, source.path),
                source.path,
            )
        )
    if plugin is None:
        unavailable = [n for n in names if not infos[n].available]
        if unavailable:
            reasons = "; ".join(f"{n}: {infos[n].detail or 'unavailable'}" for n in unavailable)
            diags.append(
                Diagnostic("backend_unavailable", f"no available backend ({reasons})", source.path)
            )
        elif not names:
            diags.append(
                Diagnostic("no_backend", "no backend handles this file type", source.path, "info")
            )
        elif not any(d.code == "backend_error" for d in diags):
            diags.append(
                Diagnostic(
                    "no_backend",
                    f"no backend answered (asked: {', '.join(available)})",
                    source.path,
                    "info",
                )
            )
        return FileExtraction(source.path, diagnostics=_unique(diags))
    tag_list = [t for t in (tags or ()) if isinstance(t, Tag)]
    if "references" not in infos[plugin].capabilities and needs_backfill(tag_list):
        tag_list += backfill_references(source.path, source.data.decode("utf-8", "replace"))
    tag_list = sorted(set(tag_list), key=tag_sort_key)
    import_list = sorted(
        set(i for i in (imports or ()) if isinstance(i, Import)), key=_import_order
    )
    language = infos[plugin].language_for(source.path)
    return FileExtraction(
        source.path, tuple(tag_list), tuple(import_list), plugin, language, _unique(diags)
    )


def _record_message(record: logging.LogRecord, path: str) -> str:
    msg = record.getMessage()
    prefix = f"{path}: "
    return msg[len(prefix) :] if msg.startswith(prefix) else msg


def _unique(diags: list[Diagnostic]) -> tuple[Diagnostic, ...]:
    return tuple(dict.fromkeys(diags))


def _import_order(i: Import) -> tuple:
    return (i.line_number, i.source, i.names, i.level, i.aliases, i.alias or "")


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


#: One extracted file as it leaves a worker: its path, its cache row, and the requested view.
Extracted = tuple[str, EncodedRow, "FileExtraction | FileSymbols"]


def extract_batch(
    plugins: PluginSet, root: Path, entries: Sequence[FileEntry]
) -> list[FileExtraction]:
    """Extract a batch: read, let batch backends prepare once, then ask per file."""
    results: dict[str, FileExtraction] = {}
    sources: list[SourceFile] = []
    for entry in entries:
        src, skipped = read_source(root, entry)
        if skipped is not None:
            results[entry.path] = skipped
        elif src is not None:
            sources.append(src)
    by_plugin: dict[str, list[SourceFile]] = defaultdict(list)
    for src in sources:
        first = next((n for n in plugins.candidates(src.path) if plugins.infos[n].available), None)
        if first is not None:
            by_plugin[first].append(src)
    for name, group in sorted(by_plugin.items()):
        try:
            plugins.call_each("prepare_batch", [name], sources=group)
        except Exception as exc:
            log.warning("%s: prepare_batch failed: %s", name, exc)
    for src in sources:
        results[src.path] = extract_source(plugins, src)
    return [results[e.path] for e in entries if e.path in results]


def extract_encoded(
    plugins: PluginSet, root: Path, entries: Sequence[FileEntry], full: bool
) -> list[Extracted]:
    """Extract a batch and encode it for the cache where it runs (in the worker, in parallel)."""
    out: list[Extracted] = []
    for ex in extract_batch(plugins, root, entries):
        summary = FileSymbols.from_extraction(ex)
        out.append((ex.path, encode(ex, summary), ex if full else summary))
    return out


# -- parallel execution ------------------------------------------------------------------------
_WORKER: tuple[PluginSet, Path, bool] | None = None


def _worker_batch(entries: list[FileEntry]) -> list[Extracted]:
    assert _WORKER is not None
    plugins, root, full = _WORKER
    return extract_encoded(plugins, root, entries, full)


def _chunks(items: Sequence[FileEntry], size: int) -> list[list[FileEntry]]:
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


class Extractor:
    """Turns file entries into extractions, using and filling the cache.

    ``run(..., full=False)`` returns :class:`FileSymbols` (what ranking needs, cheap to load from
    the cache); ``full=True`` returns :class:`FileExtraction` with every tag.
    """

    def __init__(
        self,
        plugins: PluginSet,
        cache: TagCache,
        jobs: int | None = None,
        progress: ProgressFn | None = None,
    ):
        self.plugins = plugins
        self.cache = cache
        self.jobs = jobs if jobs and jobs > 0 else default_jobs()
        self.progress = progress
        self.stats = {"cached": 0, "extracted": 0}
        self.keys: dict[str, CacheKey] = {}

    def key(self, entry: FileEntry) -> CacheKey:
        fp = f"{EXTRACT_VERSION}|{self.plugins.fingerprint(entry.path)}"
        return CacheKey(entry.path, entry.mtime_ns, entry.size, fp)

    def run(self, root: Path, entries: Sequence[FileEntry], full: bool = False) -> dict:
        keys = {e.path: self.key(e) for e in entries}
        self.keys = keys
        results = self.cache.lookup(keys.values(), full=full)
        misses = [e for e in entries if e.path not in results]
        self.stats = {"cached": len(results), "extracted": len(misses)}
        total, done = len(entries), len(results)
        if self.progress:
            self.progress(done, total)
        batches = _chunks(misses, BATCH_SIZE)
        for batch_result in self._execute(root, batches, full):
            self.cache.store((keys[path], row) for path, row, _ in batch_result)
            for path, _, result in batch_result:
                results[path] = result
            done += len(batch_result)
            if self.progress:
                self.progress(done, total)
        return {e.path: results[e.path] for e in entries if e.path in results}

    def _execute(
        self, root: Path, batches: list[list[FileEntry]], full: bool
    ) -> Iterator[list[Extracted]]:
        misses = sum(len(b) for b in batches)
        use_pool = (
            self.jobs > 1
            and misses >= PARALLEL_THRESHOLD
            and "fork" in multiprocessing.get_all_start_methods()
        )
        if not use_pool:
            for batch in batches:
                yield extract_encoded(self.plugins, root, batch, full)
            return
        global _WORKER
        _WORKER = (self.plugins, root, full)
        try:
            ctx = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(max_workers=self.jobs, mp_context=ctx) as pool:
                pending = {pool.submit(_worker_batch, b) for b in batches}
                while pending:
                    finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for fut in sorted(finished, key=id):
                        yield fut.result()
        finally:
            _WORKER = None
