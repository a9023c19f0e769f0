"""The library entry point: ``RepoMap``, shaped like Aider's so embedders can switch.

A thin facade: it holds a :class:`~repomapper.state.RepositoryState` (its own, or one a caller
shares) and the map settings Aider's interface carries on the object (``map_tokens``,
``repo_content_prefix``, ``map_mul_no_files``, the globs), and runs the stages of
:mod:`repomapper.stages` with a :class:`~repomapper.settings.MapSettings` per call.
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from .cache import TagCache
from .diagnostics import MAX_LISTED_PATHS, SUMMARISED, summarise
from .discover import DEFAULT_MAX_FILE_SIZE
from .extract import ProgressFn
from .fileentry import FileEntry
from .graph import SymbolTable, TargetResolver, build_graph
from .graphstate import GraphState
from .index import RepoIndex
from .listing import WatchedListing
from .memo import MAP_VERSION
from .model import Diagnostic, FileExtraction, FileSymbols, MapResult
from .ranked import RankedRepository
from .registry import PluginSet
from .settings import DEFAULT_MAP_TOKENS, MapSettings, Selection
from .stages import map_repository, warm_up
from .stages import rank as rank_stage
from .stages import render as render_stage
from .state import RepositoryState, StateOptions
from .timings import StageTimer
from .tokens import MapCounter

if TYPE_CHECKING:
    import networkx as nx

log = logging.getLogger(__name__)

__all__ = ["MAP_VERSION", "MAX_LISTED_PATHS", "SUMMARISED", "RepoMap", "summarise"]


class RepoMap:
    """Build ranked, token-budgeted maps of the repository at ``root``.

    ``map_tokens`` is a hard cap on the map's size in tokens. ``token_counter`` may be a
    :class:`~repomapper.tokens.TokenCounter` or any ``str -> int`` callable (for the embedding
    application's own tokenizer); by default exact ``cl100k_base`` counts are used. ``state``
    shares an existing repository state (the caller keeps it and closes it); otherwise the
    RepoMap makes its own and :meth:`close` closes it. ``gitignore``: None honours ``.gitignore``
    files as git does (inside a git work tree only), True also outside one, False never;
    ``.ignore`` and ``.repomapperignore`` files are honoured everywhere.
    """

    def __init__(
        self,
        root: str | os.PathLike[str] = ".",
        map_tokens: int = DEFAULT_MAP_TOKENS,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        use_cache: bool = True,
        token_counter: MapCounter | Callable[[str], int] | None = None,
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
        gitignore: bool | None = None,
        state: RepositoryState | None = None,
    ):
        if map_tokens < 1:
            raise ValueError(f"map_tokens must be at least 1 (got {map_tokens})")
        self._owns_state = state is None
        self.state = state or RepositoryState(
            root,
            StateOptions(
                cache_dir=cache_dir,
                use_cache=use_cache,
                plugins=plugins,
                python_backend=python_backend,
                max_file_size=max_file_size,
                jobs=jobs,
                progress=progress,
                plugin_timeout=plugin_timeout,
                token_counter=token_counter,
                gitignore=gitignore,
            ),
            timer,
        )
        self.map_tokens = int(map_tokens)
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.repo_content_prefix = repo_content_prefix
        self.map_mul_no_files = map_mul_no_files

    # -- the state's parts, read through the facade --------------------------------------------
    @property
    def root(self) -> Path:
        return self.state.root

    @property
    def cache(self) -> TagCache:
        return self.state.cache

    @property
    def counter(self) -> MapCounter:
        return self.state.counter

    @property
    def plugins(self) -> PluginSet:
        return self.state.plugins

    @property
    def use_cache(self) -> bool:
        return self.state.use_cache

    @property
    def max_file_size(self) -> int:
        return self.state.max_file_size

    @property
    def timer(self) -> StageTimer:
        return self.state.timer

    @property
    def last_stats(self) -> dict[str, int]:
        return self.state.last_stats

    @property
    def listing(self) -> WatchedListing | None:
        return self.state.listing

    @property
    def selection(self) -> Selection:
        """The files this RepoMap maps: its globs."""
        return Selection(self.include, self.exclude)

    @property
    def graph_state(self) -> GraphState | None:
        """The graph state of this object's selection, once a call built it."""
        return self.state.graphs.get(self.selection)

    def settings(
        self,
        chat_files: Sequence[str | os.PathLike[str]] = (),
        other_files: Sequence[str | os.PathLike[str]] | None = None,
        mentioned_fnames: Iterable[str] | None = None,
        mentioned_idents: Iterable[str] | None = None,
        task: str | None = None,
        **rest: object,
    ) -> MapSettings:
        """The settings of one call: this object's budget, prefix and globs, and the request."""
        selection = (
            self.selection
            if other_files is None
            else Selection.of(self.include, self.exclude, other_files)
        )
        return MapSettings.of(
            self.map_tokens,
            selection,
            chat_files,
            mentioned_fnames,
            mentioned_idents,
            task,
            map_mul_no_files=self.map_mul_no_files,
            prefix=self.repo_content_prefix,
            **rest,
        )

    # -- lifetime ------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the state this RepoMap made (a shared state is its owner's to close)."""
        if self._owns_state:
            self.state.close()

    def __enter__(self) -> RepoMap:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def watch(self) -> bool:
        """Watch the tree for changes (see :meth:`RepositoryState.watch`); stopped by
        :meth:`close`."""
        return self.state.watch()

    @property
    def warm(self) -> bool:
        return self.state.warm

    def warm_up(self) -> None:
        """Build the ranking state now (see :func:`repomapper.stages.warm_up`)."""
        warm_up(self.state, self.selection)

    def save_maps(self) -> None:
        """Store the maps (and the ranking state) kept for later (see ``state.memo_later``)."""
        self.state.save()

    # -- pieces --------------------------------------------------------------------------------
    def collect(
        self, paths: Sequence[str | os.PathLike[str]] | None = None
    ) -> tuple[list[FileEntry], list[Diagnostic], int]:
        """The files to map: discovered under the root (with this object's globs), or exactly
        ``paths``."""
        if paths is None:
            return self.state.collect(self.selection)
        return self.state.collect(Selection.of(files=paths))

    @overload
    def extract(
        self, entries: Sequence[FileEntry], full: Literal[False] = False
    ) -> dict[str, FileSymbols]: ...

    @overload
    def extract(
        self, entries: Sequence[FileEntry], full: Literal[True]
    ) -> dict[str, FileExtraction]: ...

    def extract(
        self, entries: Sequence[FileEntry], full: bool = False
    ) -> dict[str, FileExtraction] | dict[str, FileSymbols]:
        """Extractions for ``entries``: every tag with ``full``, else each file's summary (the
        very objects the state's ranking holds for files whose key is unchanged)."""
        return self.state.extract_full(entries) if full else dict(self.state.extract(entries))

    def resolve_imports(
        self, extractions: Mapping[str, FileSymbols], index: RepoIndex | None = None
    ) -> dict[str, Counter[str]]:
        return self.state.resolve_imports(extractions, index)

    def file_imports(self, path: str, fs: FileSymbols, index: RepoIndex) -> Counter[str]:
        return self.state.file_imports(path, fs, index)

    def target_resolver(self, index: RepoIndex) -> TargetResolver:
        return self.state.target_resolver(index)

    def graph(
        self,
        chat_files: Sequence[str | os.PathLike[str]] = (),
        mentioned_idents: Iterable[str] = (),
    ) -> nx.MultiDiGraph[str]:
        """The explicit dependency graph of the repository (networkx), for inspection.

        Ranking computes the same PageRank on a factored form of this graph (see
        :mod:`repomapper.rank`), so a map never needs to build it.
        """
        entries, _, _ = self.collect(None)
        diags: list[Diagnostic] = []
        chat = frozenset(e.path for e in self.state.entries_for(chat_files, diags))
        mapped = {p: fs for p, fs in self.extract(entries).items() if fs.plugin is not None}
        table = SymbolTable.build(mapped, self.target_resolver(RepoIndex(self.root, mapped)))
        return build_graph(
            mapped, table, self.resolve_imports(mapped), chat, frozenset(mentioned_idents)
        )

    # -- ranking and the map -------------------------------------------------------------------
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
        settings = self.settings(
            chat_files,
            other_files,
            mentioned_fnames,
            mentioned_idents,
            task,
            disabled_signals=frozenset(disabled_signals),
        )
        return rank_stage(settings, self.state)

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
        settings = self.settings(
            chat_files,
            other_files,
            mentioned_fnames,
            mentioned_idents,
            task,
            force_refresh=force_refresh,
        )
        return map_repository(settings, self.state)

    def render(self, ranked: RankedRepository, budget: int | None = None) -> MapResult:
        """The map text of a ranked repository within ``budget`` (default: ``map_tokens``)."""
        return render_stage(self.settings(), self.state, ranked, budget)

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
