"""The repository's graph state, built once and then brought up to date per changed file.

The symbol table, the resolved import edges, the factored graph and the task-free ranking are
what every output reads (the map, the relevance model, the packs, the graph view). Building
them reads every file's summary, which on a few thousand files costs far more than anything an
edit changes; :func:`update_state` replaces only the rows of the changed files (their
identifiers' blocks of the factored graph, their import edges, their definitions), recomputes
the blocks that other chat files or mentions boost, and ranks again; it gives the same state as
:func:`build_state` on the new files (a property test holds the two together). A change the
state cannot follow row by row (files added or removed, a file that is not mapped edited, most
files changed) builds it again.
"""

from __future__ import annotations

import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Protocol

from .definitions import DefinitionIndex
from .graph import SymbolTable, TargetResolver
from .importrows import ImportsCollector
from .index import RepoIndex
from .layered import Layered, copied_mapping
from .model import Diagnostic, FileSymbols
from .rank import (
    FactorBlocks,
    FactoredGraph,
    IdentBlock,
    PairScores,
    Ranking,
    demoted,
    pagerank,
    personalization,
    rank_definitions,
    role_weights,
)
from .summaryview import changed_files, diagnostics_of, same_files
from .tablearrays import build_arrays, table_of

log = logging.getLogger(__name__)

#: an update that changes more than this share of the files builds the state again instead
REBUILD_SHARE = 0.25
#: (importer, its summary, the index of the mapped files) -> imported file -> count
ImportResolver = Callable[[str, FileSymbols, RepoIndex], Counter[str]]


class ImportMemo(Protocol):
    """Resolved imports kept between processes (see :meth:`repomapper.cache.TagCache.load_imports`)."""

    def known(self) -> Iterable[tuple[str, Counter[str]]]:
        """(importer, imported files) for the importers whose resolution is remembered, one
        at a time; read them all before remembering more."""
        ...

    def remember(self, found: Mapping[str, Counter[str]]) -> None:
        """Keep these importers' resolutions (an empty Counter: resolved to nothing)."""
        ...


@dataclass(frozen=True)
class StateInputs:
    """What besides the files a state depends on: its resolvers, the chat/mention boosts, and
    ``context``: a token for everything else resolution may read (the versions of the files that
    are not mapped, such as ``tsconfig.json`` or ``go.mod``, which backends read to resolve
    imports); a state is only updated while its context is the same, and built again otherwise."""

    root: Path
    resolve_imports: ImportResolver
    target_resolver: Callable[[RepoIndex], TargetResolver]
    chat: frozenset[str] = frozenset()
    mentioned_files: frozenset[str] = frozenset()
    mentioned_idents: frozenset[str] = frozenset()
    context: object = None
    #: resolved imports remembered by an earlier process, used when the state is built
    imports_memo: ImportMemo | None = None
    #: files the user asked for by an include glob: not ranked below code for their role
    asked: frozenset[str] = frozenset()

    def boosts(self) -> tuple[frozenset[str], frozenset[str], frozenset[str]]:
        return self.chat, self.mentioned_files, self.mentioned_idents


class Rankings:
    """A state's factored graph and both rankings, computed when first read: a reader that
    needs only the symbol table and the import edges (the MCP tools) never ranks, and a state
    updated again before anyone read its rankings never computes them. An update that leaves
    the ranking as it was keeps this object, and with it what the answers made of the ranking
    (:attr:`files`)."""

    __slots__ = ("_compute", "_values", "files", "_before", "weights")

    def __init__(
        self,
        compute: Callable[[], tuple[FactoredGraph, Mapping[str, float], Ranking]] | None = None,
        values: tuple[FactoredGraph, Mapping[str, float], Ranking] | None = None,
        before: Rankings | None = None,
    ):
        """``before``: the rankings of the state these replace (what the answers made of
        them may serve these: see :meth:`files_before`)."""
        self._compute = compute
        self._values = values
        #: the task-free ranking's files as the answers read them, once made (see
        #: :func:`repomapper.stages.ranking.ranked_files`)
        self.files: object = None
        self._before: object = before.files if before is not None else None
        #: each file's role weight the ranks were computed with, once known
        self.weights: Mapping[str, float] | None = None

    def files_before(self) -> object:
        """The ranked files made for the rankings these replaced (once: then let go)."""
        before, self._before = self._before, None
        return before

    def computed_prior(self) -> Mapping[str, float] | None:
        """The task-free file ranks when they have been computed (None otherwise)."""
        return self._values[1] if self._values is not None else None

    def computed_pairs(self) -> PairScores | None:
        """The definition pairs' scores when they have been computed (None otherwise)."""
        return self._values[2].pairs if self._values is not None else None

    def get(self) -> tuple[FactoredGraph, Mapping[str, float], Ranking]:
        if self._values is None:
            if self._compute is None:
                raise ValueError("rankings with neither values nor a way to compute them")
            self._values, self._compute = self._compute(), None
        return self._values


@dataclass(frozen=True)
class GraphState:
    """Everything ranking derives from the mapped files, for one set of chat files and mentions."""

    files: Mapping[str, FileSymbols]
    boosts: tuple[frozenset[str], frozenset[str], frozenset[str]]
    index: RepoIndex
    table: SymbolTable
    #: importer -> {imported file: count}
    imports: Mapping[str, Counter[str]]
    blocks: FactorBlocks
    definitions: DefinitionIndex
    rankings: Rankings
    #: how the state was arrived at: "built" or "updated" (with how many changed files)
    how: str = "built"
    context: object = None
    #: the files asked for whatever their role (see :attr:`StateInputs.asked`)
    asked: frozenset[str] = frozenset()

    @property
    def graph(self) -> FactoredGraph:
        return self.rankings.get()[0]

    @property
    def prior(self) -> Mapping[str, float]:
        """The task-free PageRank of files (personalized by chat files and mentions)."""
        return self.rankings.get()[1]

    @property
    def ranking(self) -> Ranking:
        return self.rankings.get()[2]

    @cached_property
    def by_file(self) -> Mapping[str, list[tuple[str, float]]]:
        """Per file, its identifiers in the order of ``ranking.definitions``."""
        return ByFile(self.ranking)


class ByFile(Mapping[str, list[tuple[str, float]]]):
    """Per file, its identifiers in the order of a ranking's definitions: grouped on first use
    (a map without a task never asks)."""

    def __init__(self, ranking: Ranking):
        self._ranking = ranking
        self._groups: dict[str, list[tuple[str, float]]] | None = None

    def _grouped(self) -> dict[str, list[tuple[str, float]]]:
        if self._groups is None:
            groups: dict[str, list[tuple[str, float]]] = defaultdict(list)
            for f, ident, score in self._ranking.definitions:
                groups[f].append((ident, score))
            self._groups = dict(groups)
        return self._groups

    def __getitem__(self, path: str) -> list[tuple[str, float]]:
        return self._grouped()[path]

    def __iter__(self) -> Iterator[str]:
        return iter(self._grouped())

    def __len__(self) -> int:
        return len(self._grouped())


def build_state(files: Mapping[str, FileSymbols], inputs: StateInputs) -> GraphState:
    """The state of ``files`` (mapped files only) from scratch: the symbol table, the
    definition index, the factored graph's layout and the resolved imports made as arrays
    over interned ids (:mod:`repomapper.tablearrays`), rows made as objects only when read."""
    index = RepoIndex(inputs.root, files)
    arrays = build_arrays(files, inputs.target_resolver(index))
    table = table_of(arrays, files)
    imports = _resolved_imports(files, arrays.files, index, inputs)
    definitions, local = DefinitionIndex.of_table(arrays)
    blocks = FactorBlocks.of_table(
        table, arrays, definitions, local, inputs.chat, inputs.mentioned_idents
    )
    del local
    return _ranked(files, inputs, index, table, imports, blocks, definitions, "built")


#: importers resolved (and remembered) at a time
RESOLVE_CHUNK = 1024


def _resolved_imports(
    files: Mapping[str, FileSymbols],
    paths: Sequence[str],
    index: RepoIndex,
    inputs: StateInputs,
) -> Layered[str, Counter[str]]:
    """Every mapped file's resolved imports, held as arrays as they come: those an earlier
    process remembered, the others resolved (and remembered) a chunk at a time."""
    memo = inputs.imports_memo
    collector = ImportsCollector(paths)
    done: set[str] = set()
    if memo is not None:
        for path, found in memo.known():
            collector.add(path, found)
            done.add(path)
    todo = [p for p in paths if p not in done]
    for lo in range(0, len(todo), RESOLVE_CHUNK):
        chunk = todo[lo : lo + RESOLVE_CHUNK]
        fresh = _resolve(files, chunk, index, inputs.resolve_imports)
        for path in chunk:
            collector.add(path, fresh.get(path, Counter()))
        if memo is not None:
            memo.remember({p: fresh.get(p, Counter()) for p in chunk if files[p].imports})
    imports: Layered[str, Counter[str]] = Layered(collector.rows())
    for path, found in collector.odd.items():
        imports[path] = found
    return imports


def update_state(
    state: GraphState | None, files: Mapping[str, FileSymbols], inputs: StateInputs
) -> GraphState:
    """The state of ``files``: ``state`` updated by the files whose summary changed (compared by
    identity: an unchanged file keeps its summary object) and by the chat files and mentions
    that changed, or built again when there is no usable state (files added or removed, or a
    file that is not mapped changed: resolution depends on both; or most files changed)."""
    if state is None or not same_files(state.files, files) or state.context != inputs.context:
        return build_state(files, inputs)
    old = state.files
    changed = changed_files(old, files)
    same_boosts = state.boosts == inputs.boosts() and state.asked == inputs.asked
    if not changed and same_boosts:
        return state
    if len(changed) > len(files) * REBUILD_SHARE:
        return build_state(files, inputs)
    index = state.index
    table = state.table
    touched: frozenset[str] = frozenset()
    imports = copied_mapping(state.imports)
    definitions = state.definitions
    redo: list[str] = []
    if changed:
        table, touched = table.updated(old, files, changed, inputs.target_resolver(index))
        definitions = definitions.updated(table, state.table, files, changed, touched)
        # a file whose imports are the same resolves them the same (the file set and the
        # files that are not mapped are unchanged here): most edits keep their imports
        redo = [p for p in changed if not _same_imports(old[p], files[p])]
        fresh = _resolve(files, redo, index, inputs.resolve_imports)
        for path in redo:
            imports.pop(path, None)
            if path in fresh:
                imports[path] = fresh[path]
    old_chat, _, old_mentioned = state.boosts
    boosted = set(old_mentioned ^ inputs.mentioned_idents)
    for path in old_chat ^ inputs.chat:  # every edge from a chat file weighs 50 times more
        for version in (old.get(path), files.get(path)):
            if version is not None:
                boosted.update(name for name, _ in version.references)
    how = f"updated ({len(changed)} changed)"
    # no import, chat file, mention or generated marker changed: what moves rank between files
    # is then only what the touched names' blocks say
    unmoved = (
        not boosted
        and not redo
        and same_boosts
        and all(_generated(old[p].diagnostics) == _generated(files[p].diagnostics) for p in changed)
    )
    if (
        changed
        and not touched
        and unmoved
        and all(definitions.rows[p] == state.definitions.rows[p] for p in changed)
    ):
        # no name's rows, no import, no definition row, no generated marker changed (an edit
        # inside a body): the graph and both rankings are the same; only the files and their
        # definitions' tags are
        return replace(state, files=files, table=table, imports=imports, how=how)
    blocks = state.blocks.updated(table, touched | boosted, inputs.chat, inputs.mentioned_idents)
    # the walk over the files reads each name's block (its referencers, weights, definers and
    # their factors), not where a name stands among its file's definitions: when every
    # touched block is the one before, or carries no reference before or after (a function not
    # yet called, one whose last caller went earlier), the walk is the one before, to the bit
    walk_kept = unmoved and all(
        _same_walk(state.blocks.blocks.get(n), blocks.blocks.get(n)) for n in touched
    )
    before = state.rankings
    prior = before.computed_prior() if walk_kept else None
    weights = before.weights if walk_kept else None  # (the same files, roles and boosts)
    return _ranked(
        files, inputs, index, table, imports, blocks, definitions, how, before, prior, weights
    )


def _same_walk(before: IdentBlock | None, after: IdentBlock | None) -> bool:
    """Whether a name's block moves rank between files as it did: the same block, or none
    that any file references."""
    return before == after or (
        (before is None or not before.rows) and (after is None or not after.rows)
    )


def _generated(diagnostics: Sequence[Diagnostic]) -> bool:
    """Whether extraction found a file marked as generated (its role then: see
    :func:`~repomapper.rank.role_weights`), by its diagnostics."""
    return any(d.code == "generated" for d in diagnostics)


def _same_imports(old: FileSymbols, new: FileSymbols) -> bool:
    """Whether a file's import resolution is the same for both summaries: the same backend
    asked about equal imports (``resolve_import`` sees the import and the index only)."""
    return old.plugin == new.plugin and tuple(old.imports) == tuple(new.imports)


def _resolve(
    files: Mapping[str, FileSymbols],
    paths: Iterable[str],
    index: RepoIndex,
    resolve: ImportResolver,
) -> dict[str, Counter[str]]:
    edges: dict[str, Counter[str]] = {}
    for path in paths:
        fs = files[path]
        if fs.imports and fs.plugin is not None:
            found = resolve(path, fs, index)
            if found:
                edges[path] = found
    return edges


def _ranked(
    files: Mapping[str, FileSymbols],
    inputs: StateInputs,
    index: RepoIndex,
    table: SymbolTable,
    imports: Mapping[str, Counter[str]],
    blocks: FactorBlocks,
    definitions: DefinitionIndex,
    how: str,
    before: Rankings | None = None,
    prior: Mapping[str, float] | None = None,
    weights: Mapping[str, float] | None = None,
) -> GraphState:
    """The state over these parts, its rankings computed when first read; ``before``: the
    rankings it replaces; ``prior`` and ``weights``: the task-free file ranks and the files'
    role weights, when they are known to be those of ``before``."""
    chat, mentioned_f, mentioned_i = inputs.boosts()
    # a stored state's imports stay layered: their values are made only when read
    ordered = imports if isinstance(imports, Layered) else {p: imports[p] for p in sorted(imports)}

    def compute() -> tuple[FactoredGraph, Mapping[str, float], Ranking]:
        graph = blocks.factored(files, ordered, definitions)
        roles = weights
        if roles is None:
            marked = [p for p in files if _generated(diagnostics_of(files, p))]
            roles = role_weights(files, chat, mentioned_f, mentioned_i, inputs.asked, marked)
        rankings.weights = roles
        walked = prior
        if walked is None:
            pers = personalization(files, chat, mentioned_f, mentioned_i, roles)
            walked = demoted(pagerank(graph, pers), roles)
        ranking = rank_definitions(graph, table, walked, mentioned_i, roles, pairs)
        return graph, walked, ranking

    # the walk, roles and boosts of ``before``: only the pairs of the files laid out again move
    pairs = before.computed_pairs() if before is not None and prior is not None else None

    rankings = Rankings(compute, before=before)

    return GraphState(
        files,
        inputs.boosts(),
        index,
        table,
        ordered,
        blocks,
        definitions,
        rankings,
        how,
        inputs.context,
        inputs.asked,
    )
