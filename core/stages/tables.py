"""The repository's lookup tables as the MCP tools read them: every listed file's summary, who
defines and who references each name, and the import edges, from the state's graph state (the
very tables the ranking reads; no copy is kept)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from ..fileentry import FileEntry
from ..graph import SymbolTable
from ..importrows import importers_of
from ..index import RepoIndex
from ..model import Diagnostic, FileExtraction, FileSymbols, Tag
from ..rank import asked_by_include
from ..settings import ALL_FILES, Selection
from ..state import RepositoryState
from ..summaryview import mapped_files
from .ranking import graph_state


@dataclass(frozen=True, eq=False)
class RepositoryTables:
    root: Path
    #: every listed file of the selection, by path
    entries: Mapping[str, FileEntry]
    #: every listed file's summary (a file no backend mapped has one with its diagnostics)
    files: Mapping[str, FileSymbols]
    table: SymbolTable
    #: importer -> {imported file: count}
    imports: Mapping[str, Mapping[str, int]]
    index: RepoIndex
    seen: int
    diagnostics: tuple[Diagnostic, ...]
    #: files over this many bytes are not listed
    max_file_size: int
    #: every tag of some files (references with their lines), from the cache where it has them
    extract_full: Callable[[Sequence[str]], Mapping[str, FileExtraction]]

    def full_extraction(self, paths: Sequence[str]) -> Mapping[str, FileExtraction]:
        return self.extract_full([p for p in paths if p in self.entries])

    @cached_property
    def mapped(self) -> Mapping[str, FileSymbols]:
        return mapped_files(self.files)

    def defined_names(self) -> Iterable[str]:
        return self.table.defines.keys()

    def definers(self, name: str) -> list[str]:
        return sorted(self.table.defines.get(name, ()))

    def definitions(self, name: str) -> list[Tag]:
        """Every definition of ``name``, by file, then line."""
        out: list[Tag] = []
        for path in self.definers(name):
            tags = self.table.definitions.get((path, name), ())
            out.extend(sorted(tags, key=lambda t: (t.start_line, t.end_line)))
        return out

    def references(self, name: str) -> Mapping[str, int]:
        """The files referencing ``name``, with how often."""
        return self.table.references.get(name) or {}

    def importers_of(self, path: str) -> dict[str, int]:
        """The files importing ``path``, with their counts."""
        return importers_of(self.imports, path)


def current_tables(state: RepositoryState, selection: Selection = ALL_FILES) -> RepositoryTables:
    """The tables of ``selection`` as the tree is now: listed, summarised and the graph state
    brought up to date per changed file (its rankings are not computed: the tables need none)."""
    diags: list[Diagnostic] = []
    files = state.prepare(selection, (), diags)
    stored, summaries = state.summarised(files, selection)
    mapped = mapped_files(summaries)
    # the tables do not depend on the chat files and mentions a map ranked with: the graph
    # state keeps the ones it has (changing them would rank again for nothing)
    kept = state.graphs.get(selection)
    _, mentioned_files, mentioned_idents = kept.boosts if kept is not None else ((), (), ())
    files = files._replace(chat=kept.boosts[0]) if kept is not None else files
    graph = graph_state(
        state,
        files,
        mapped,
        frozenset(mentioned_files),
        frozenset(mentioned_idents),
        selection,
        stored,
        # the same files asked for as the map of this selection, or the tools would rank again
        kept.asked if kept is not None else asked_by_include(selection.include, mapped),
        summaries,
    )
    entries = {e.path: e for e in files.entries}
    return RepositoryTables(
        state.root,
        entries,
        summaries,
        graph.table,
        graph.imports,
        graph.index,
        files.seen,
        tuple(diags),
        state.max_file_size,
        lambda paths: _full(state, entries, paths),
    )


def _full(
    state: RepositoryState, entries: Mapping[str, FileEntry], paths: Sequence[str]
) -> Mapping[str, FileExtraction]:
    wanted = [entries[p] for p in paths if p in entries]
    return state.extract_full(wanted) if wanted else {}
