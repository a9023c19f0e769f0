"""One repository's state: everything long-lived that the outputs read.

A :class:`RepositoryState` owns the cache connection, the extraction worker kept between calls,
the file listing (and its watcher, when one runs), each file's summary, the graph states (symbol
table, import edges, factored graph, PageRank), the lexical index, the token-count memo and the
rendered files' lines. Each call brings it up to date per changed file (:meth:`prepare`,
:meth:`summaries`, :meth:`graph`). The map, the context packs, the MCP tools and the graph page
read it through the stages in :mod:`repomapper.stages`; none keeps a copy of its own. A
long-lived process keeps one per root and closes it when done (:meth:`close`).
"""

from __future__ import annotations

import logging
import os
from collections import Counter, OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import NamedTuple

from ..cache import CacheKey, RowHeads, TagCache, open_cache
from ..discover import DEFAULT_MAX_FILE_SIZE, Discovery, check_root, discover
from ..extract import Extractor, ProgressFn
from ..fileentry import FileEntry
from ..graph import TargetResolver
from ..graphstate import GraphState, update_state
from ..index import RepoIndex
from ..isolation.pool import WorkerPool
from ..listing import WatchedListing, select
from ..model import Diagnostic, FileExtraction, FileSymbols, MapResult
from ..paths import entries_for, relative_to_root
from ..registry import PluginConfig, PluginSet
from ..relevance import LexicalIndex
from ..render import SourceLines
from ..settings import ALL_FILES, Selection
from ..snapshot import Stored
from ..summaryview import plugin_of, plugins_of, with_summaries
from ..timings import StageTimer
from ..tokens import MapCounter, as_counter
from ..watch import Watcher
from .counts import CountMemo
from .graphs import GraphStates
from .summaries import Summaries

log = logging.getLogger(__name__)

#: idle extraction workers a state keeps for its next call (an edit needs one)
KEPT_WORKERS = 1
#: maps a state keeps as answered (see :meth:`RepositoryState.answered`)
KEPT_ANSWERS = 2
#: rendered files' lines kept between calls (by content digest)
MAX_SOURCE_FILES = 800
#: files of a backend asked for their imports when priming its lookup tables
PRIME_TRIES = 64


@dataclass(frozen=True)
class StateOptions:
    """How a repository state reads the repository: not part of any one call's settings."""

    cache_dir: str | os.PathLike[str] | None = None
    use_cache: bool = True
    plugins: PluginSet | None = None
    python_backend: str = "ast"
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    jobs: int | None = None
    progress: ProgressFn | None = None
    #: seconds per plugin hook call; None: the plugins' limits
    plugin_timeout: float | None = None
    token_counter: MapCounter | Callable[[str], int] | None = None
    #: honour ``.gitignore`` files: None, as git does (inside a git work tree only); True also
    #: outside one; False never (files git ignores are listed too)
    gitignore: bool | None = None

    def __post_init__(self) -> None:
        if self.max_file_size < 0:
            raise ValueError(f"max_file_size must be 0 or more (got {self.max_file_size})")
        if self.jobs is not None and self.jobs < 1:
            raise ValueError(f"jobs must be at least 1 (got {self.jobs})")


class CacheHandle:
    """The state's cache connection, opened on first use (and again after :meth:`close`). An
    object of its own, so that the parts of the state that read the cache hold no reference
    back to the state: a dropped state is freed at once (its worker stopped), not at some later
    collection of reference cycles."""

    def __init__(self, root: Path, cache_dir: str | os.PathLike[str] | None, use_cache: bool):
        self.root = root
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_cache = use_cache
        self.opened: TagCache | None = None

    def __call__(self) -> TagCache:
        if self.opened is None:
            self.opened = open_cache(self.root, self.cache_dir, self.use_cache)
        return self.opened

    def close(self) -> None:
        if self.opened is not None:
            self.opened.close()
            self.opened = None


class Resolvers:
    """Import and reference-target resolution by each file's own backend (its hooks)."""

    def __init__(self, plugins: PluginSet):
        self.plugins = plugins

    def file_imports(self, path: str, fs: FileSymbols, index: RepoIndex) -> Counter[str]:
        """The files of ``index`` that one file's imports resolve to, by its own backend."""
        found: Counter[str] = Counter()
        for imp in fs.imports:
            try:
                _, targets = self.plugins.call_first(
                    "resolve_import", [str(fs.plugin)], imp=imp, index=index
                )
            except Exception as exc:
                log.warning("%s: resolving %r failed: %s", path, imp.source, exc)
                continue
            for target in targets or ():
                if target in index.files and target != path:
                    found[target] += 1
        return found

    def target_resolver(self, index: RepoIndex) -> TargetResolver:
        """Qualified reference targets resolved by the backend that extracted the referencing
        file (its optional ``resolve_target`` hook), kept to files of ``index``. A backend
        without the hook, one that fails (logged) or answers garbage leaves the reference linked
        to every definer of its name."""
        plugins = self.plugins

        def resolve(fs: FileSymbols, target: str) -> tuple[str, ...]:
            if fs.plugin is None:
                return ()
            try:
                _, found = plugins.call_first(
                    "resolve_target", [fs.plugin], file_path=fs.path, target=target, index=index
                )
                if found is None or isinstance(found, str | bytes):
                    return ()
                return tuple(f for f in found if isinstance(f, str) and f in index.files)
            except Exception as exc:
                log.warning("%s: resolving target %r failed: %s", fs.path, target, exc)
                return ()

        return resolve


class Prepared(NamedTuple):
    """What one call works on: its extractor, the selected files, those plus the chat files,
    the chat files, and how many files discovery saw."""

    extractor: Extractor
    entries: list[FileEntry]
    all_entries: list[FileEntry]
    chat: frozenset[str]
    seen: int


class RepositoryState:
    """The long-lived state of the repository at ``root`` (see the module's docstring)."""

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        options: StateOptions | None = None,
        timer: StageTimer | None = None,
    ):
        self.options = o = options or StateOptions()
        self.root = check_root(Path(root))
        self.counter = as_counter(o.token_counter)
        self.plugins = o.plugins or PluginSet(PluginConfig(python_backend=o.python_backend))
        self.use_cache = o.use_cache
        self.max_file_size = o.max_file_size
        self.timer = timer or StageTimer()
        #: what the last call did: files from the cache, extracted, reused, memoised
        self.last_stats: dict[str, int] = {}
        #: set by an owner that answers first and stores later (the MCP server): finished maps
        #: and the built ranking state are stored by :meth:`save` instead of at once
        self.memo_later = False
        #: maps finished and not stored yet, by digest (replayed from here until stored)
        self.unsaved_maps: dict[str, MapResult] = {}
        #: the latest maps answered, by digest, oldest first: a long-lived owner asked the same
        #: again replays it from here instead of parsing it from the cache (a map's ranked files
        #: are one value per file of the repository)
        self._answered: OrderedDict[str, MapResult] = OrderedDict()
        self._cache = CacheHandle(self.root, o.cache_dir, o.use_cache)
        self.resolvers = Resolvers(self.plugins)
        self._workers = WorkerPool(KEPT_WORKERS)
        #: cache keys of files whose stat has not changed, kept between calls
        self.settled_keys: dict[FileEntry, CacheKey] = {}
        self.summaries = Summaries()
        self.graphs = GraphStates(
            self.root,
            self._cache,
            self.use_cache,
            self.resolvers.file_imports,
            self.resolvers.target_resolver,
        )
        self.counts = CountMemo(self.counter, self._cache, self.use_cache)
        #: rendered files' lines by content digest, kept between calls
        self.source_lines: dict[str, tuple[str, Sequence[str]]] = {}
        self.listing: WatchedListing | None = None
        #: the last listing discovery gave (what it left out and why, for the messages)
        self.last_listing: Discovery | None = None
        self._watcher: Watcher | None = None
        self._lexical: tuple[TagCache, LexicalIndex] | None = None
        self.closed = False

    # -- lifetime ----------------------------------------------------------------------------
    @property
    def cache(self) -> TagCache:
        """The cache connection (opened on first use; again by a call after :meth:`close`)."""
        self.closed = False
        return self._cache()

    def watch(self) -> bool:
        """Watch the tree (needs ``watchfiles``, installed by the ``mcp`` extra): while the
        watcher sees no file added, removed or renamed, a call stats the listed files and
        folders again instead of listing the tree (see :mod:`repomapper.listing`). False when
        nothing can watch."""
        if self._watcher is not None:
            return self._watcher.running
        watcher = Watcher.start(self.root)
        if watcher is None:
            return False
        listing = self.listing or WatchedListing(self.root)
        watcher.subscribe(listing.note, listing.arm)
        self._watcher, self.listing = watcher, listing
        return True

    @property
    def watcher(self) -> Watcher | None:
        """The watcher of the tree, while one runs for this state."""
        return self._watcher

    def answered(self, digest: str) -> MapResult | None:
        """A map answered lately for ``digest`` (stored or not), or None."""
        found = self.unsaved_maps.get(digest) or self._answered.get(digest)
        if found is not None:
            self.keep_answer(digest, found)
        return found

    def keep_answer(self, digest: str, result: MapResult) -> None:
        """Keep ``result`` as the latest map answered for ``digest`` (the last
        :data:`KEPT_ANSWERS` are kept)."""
        self._answered[digest] = result
        self._answered.move_to_end(digest)
        while len(self._answered) > KEPT_ANSWERS:
            self._answered.popitem(last=False)

    def store_maps(self) -> None:
        """Store the finished maps kept for later, oldest first."""
        from ..memo import remember

        while self.unsaved_maps:
            digest = next(iter(self.unsaved_maps))
            remember(self.cache, digest, self.unsaved_maps.pop(digest), self.root)

    def let_go_unsaved(self, keep: int) -> None:
        """Let the oldest finished maps go unstored until at most ``keep`` are left: storing
        them here would cost the call that answers (an owner that stores later stores when
        calls pause), and a map that many newer answers superseded is most likely of a tree
        that has changed since (the next identical request makes it again)."""
        while len(self.unsaved_maps) > keep:
            digest = next(iter(self.unsaved_maps))
            del self.unsaved_maps[digest]
            log.debug("map %s not stored: %d newer maps wait to be stored", digest[:12], keep)

    def save(self) -> None:
        """Store what an owner that stores later kept: finished maps, counts, the built state."""
        self.store_maps()
        self.counts.save()
        self.graphs.save()

    def close(self) -> None:
        """Store what is kept for later, stop the watcher and the kept extraction worker, and
        close the cache (which also keeps the shared content table within its bounds). No
        thread, process or file handle of the state outlives this call."""
        if self.closed and self._cache.opened is None:
            return
        try:
            if self._cache.opened is not None:
                self.save()
        finally:
            self.closed = True
            if self._watcher is not None:
                self._watcher.stop()
                self._watcher = None
            self._workers.close()
            self._cache.close()

    def __enter__(self) -> RepositoryState:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- which files -------------------------------------------------------------------------
    def relative(self, name: str | os.PathLike[str]) -> str | None:
        return relative_to_root(self.root, name)

    def entries_for(
        self, names: Iterable[str | os.PathLike[str]], diags: list[Diagnostic]
    ) -> list[FileEntry]:
        return entries_for(self.root, names, self.max_file_size, diags)

    def listed(self) -> Discovery:
        """Every file discovery lists now (no globs): the watched listing's when it holds."""

        def discovered() -> Discovery:
            return discover(self.root, (), (), self.max_file_size, gitignore=self.options.gitignore)

        if self.listing is None:
            found = discovered()
        else:
            found = self.listing.collect(discovered, self.max_file_size)
        self.last_listing = found
        return found

    def collect(
        self, selection: Selection = ALL_FILES
    ) -> tuple[list[FileEntry], list[Diagnostic], int]:
        """The files of ``selection``: discovered and filtered by its globs, or its files."""
        diags: list[Diagnostic] = []
        if selection.files is not None:
            return self.entries_for(selection.files, diags), diags, len(selection.files)
        return select(self.listed(), selection.include, selection.exclude)

    def extractor(self) -> Extractor:
        """An extractor with this state's plugins, cache, jobs, progress and time limit."""
        o = self.options
        return Extractor(
            self.plugins,
            self.cache,
            o.jobs,
            o.progress,
            o.plugin_timeout,
            pool=self._workers,
            settled=self.settled_keys,
        )

    def prepare(
        self,
        selection: Selection,
        chat_files: Sequence[str | os.PathLike[str]],
        diags: list[Diagnostic],
        keyed: bool = True,
    ) -> Prepared:
        """The files of a call (the selection's, plus the chat files) and their extractor, with
        every file's cache key computed (unless not ``keyed``: the extractor computes them when
        first asked, or by ``extractor.prepare``)."""
        chat_entries = self.entries_for(chat_files, diags)
        chat = frozenset(e.path for e in chat_entries)
        entries, more, seen = self.collect(selection)
        diags.extend(more)
        by_path = {e.path: e for e in [*entries, *chat_entries]}
        all_entries = [by_path[p] for p in sorted(by_path)]
        extractor = self.extractor()
        if keyed:
            extractor.prepare(self.root, all_entries)
        else:
            extractor.root = self.root
        if len(self.settled_keys) > 2 * len(all_entries) + 1024:  # keep the current files' keys
            current = set(all_entries)
            kept = {e: k for e, k in self.settled_keys.items() if e in current}
            self.settled_keys.clear()
            self.settled_keys.update(kept)
        return Prepared(extractor, entries, all_entries, chat, seen)

    # -- summaries ---------------------------------------------------------------------------
    def summarise(
        self,
        extractor: Extractor,
        entries: Sequence[FileEntry],
        misses: Callable[[int], None] | None = None,
        deferred: bool = False,
        heads: RowHeads | None = None,
    ) -> Mapping[str, FileSymbols]:
        """Each file's summary, brought up to date (only files whose key changed are looked up
        in the cache or extracted)."""
        with self.timer.stage("extract"):
            found = self.summaries.current(self.root, extractor, entries, misses, deferred, heads)
        self.last_stats = dict(self.summaries.last_stats)
        return found

    def summarised(
        self,
        files: Prepared,
        selection: Selection,
        misses_for: Callable[[Stored | None], Callable[[int], None] | None] | None = None,
    ) -> tuple[Stored | None, Mapping[str, FileSymbols]]:
        """The stored state this call can update (read before extraction: a call that will
        update it reads only the summaries it needs) and every file's summary, brought up to
        date (the files the stored state was made from known from it, without their rows: see
        :meth:`~repomapper.snapshot.Stored.heads`). A cached summary's texts are read when
        first parsed, in chunks, also when the state is built from every summary: read at once
        with the rows, a large tree's texts waited in memory for the whole build.
        ``misses_for(stored)`` may give the callback told how many files are extracted."""
        with self.timer.stage("graph"):
            stored = self.graphs.peek(selection, files.extractor, files.all_entries)
        misses = misses_for(stored) if misses_for is not None else None
        if selection == ALL_FILES and len(self.summaries) > len(files.all_entries):
            self.summaries.forget(files.all_entries)  # files gone from the tree
        heads = stored.heads() if stored is not None and self.cache.keeps_state_rows() else None
        summaries = self.summarise(
            files.extractor, files.all_entries, misses, deferred=True, heads=heads
        )
        return stored, summaries

    def extract_full(self, entries: Sequence[FileEntry]) -> dict[str, FileExtraction]:
        """Every tag of ``entries`` (references with their lines), from the cache where it has
        them."""
        extractor = self.extractor()
        extractor.prepare(self.root, entries)
        result = {
            p: ex
            for p, ex in extractor.run(self.root, entries, full=True).items()
            if isinstance(ex, FileExtraction)
        }
        self.last_stats = dict(extractor.stats)
        return result

    def extract(self, entries: Sequence[FileEntry]) -> Mapping[str, FileSymbols]:
        """Each file's kept summary, brought up to date."""
        extractor = self.extractor()
        extractor.prepare(self.root, entries)
        return self.summarise(extractor, entries)

    # -- resolution --------------------------------------------------------------------------
    def file_imports(self, path: str, fs: FileSymbols, index: RepoIndex) -> Counter[str]:
        """The files of ``index`` that one file's imports resolve to, by its own backend."""
        return self.resolvers.file_imports(path, fs, index)

    def resolve_imports(
        self, extractions: Mapping[str, FileSymbols], index: RepoIndex | None = None
    ) -> dict[str, Counter[str]]:
        """importer -> Counter(target file), via each importer's own backend."""
        index = index or RepoIndex(self.root, extractions)
        edges: dict[str, Counter[str]] = defaultdict(Counter)
        for path in sorted(extractions):
            ex = extractions[path]
            if ex.imports and ex.plugin is not None:
                found = self.file_imports(path, ex, index)
                if found:
                    edges[path] = found
        return edges

    def target_resolver(self, index: RepoIndex) -> TargetResolver:
        """See :meth:`Resolvers.target_resolver`."""
        return self.resolvers.target_resolver(index)

    # -- derived tables ----------------------------------------------------------------------
    def lexical_index(
        self, extractor: Extractor, entries: Sequence[FileEntry], mapped: Mapping[str, FileSymbols]
    ) -> LexicalIndex:
        """The lexical index brought up to date with the mapped files (only changed files are
        read)."""
        if self._lexical is None or self._lexical[0] is not self.cache:
            self._lexical = (self.cache, LexicalIndex(self.cache))
        index = self._lexical[1]
        keys = {e.path: extractor.key(e) for e in entries if e.path in mapped}

        def read(path: str) -> bytes | None:
            try:
                return (self.root / path).read_bytes()
            except OSError as exc:
                log.debug("%s: unreadable for the lexical index: %s", path, exc)
                return None

        index.update(keys, mapped, read)
        return index

    def source(self, entries: Mapping[str, FileEntry]) -> SourceLines:
        """The rendered files' lines, read once per content digest and kept between calls."""
        settled = self.settled_keys

        def digest(path: str) -> str | None:  # only a digest taken well after the file's mtime
            key = settled.get(entries[path]) if path in entries else None
            return key.digest if key is not None else None

        if len(self.source_lines) > MAX_SOURCE_FILES:  # files no longer shown
            self.source_lines.clear()
        return SourceLines(self.root, self.source_lines, digest)

    # -- keeping warm ------------------------------------------------------------------------
    @property
    def warm(self) -> bool:
        """Whether a ranking state is built, so that a call after an edit only updates it."""
        return self.graphs.any

    def start_worker(self, mapped: Mapping[str, FileSymbols], entries: Sequence[FileEntry]) -> None:
        """Start the kept extraction worker, warmed on a file of the backend that maps most."""
        counts = Counter(plugin for _, plugin in plugins_of(mapped))
        common = min(counts, key=lambda p: (-counts[p], str(p)), default=None)
        sample = next(
            (e for e in entries if e.path in mapped and plugin_of(mapped, e.path) == common), None
        )
        self.extractor().keep_worker(self.root, sample)

    def prime_imports(self, state: GraphState) -> None:
        """Resolve one file's imports per backend: its lookup tables are built on first use.
        A backend's files are asked for their imports only until one has some, and at most
        :data:`PRIME_TRIES` of them (a summary loaded from a stored state reads its imports from
        the cache when asked: asking every file read the whole cache, seconds on a large tree,
        while the next call waited)."""
        tried: Counter[str] = Counter()
        primed: set[str] = set()
        for path, plugin in plugins_of(state.files):
            if plugin is None or plugin in primed or tried[plugin] >= PRIME_TRIES:
                continue
            tried[plugin] += 1
            fs = state.files[path]
            if fs.imports:
                primed.add(plugin)
                self.file_imports(path, fs, state.index)

    def rehearse_edit(self, selection: Selection) -> None:
        """Update the selection's state by one file whose summary is an equal copy (the result
        equals the state): the first real edit then copies the symbol table into memory an
        update has already used, instead of fresh memory from the allocator."""
        state = self.graphs.get(selection)
        some = next((p for p, fs in state.files.items() if fs.definitions), None) if state else None
        if state is None or some is None or not self.summaries.settled:
            return
        copy = replace(state.files[some])
        files = with_summaries(state.files, {some: copy}, state.files)
        chat, mentioned_f, mentioned_i = state.boosts
        inputs = self.graphs.inputs(chat, mentioned_f, mentioned_i, state.context)
        self.graphs.put(selection, update_state(state, files, inputs))
        # the summary is what the next call compares against: the copy stands for the file
        self.summaries.replace(some, copy)
