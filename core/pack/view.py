"""What one pack reads of the repository state: nothing of its own.

A :class:`StateView` is made per pack over the state's summaries, symbol table and import edges
(those the pack's ranking just brought up to date, or the current tables the MCP tools read)
and the state itself (for the lines of a reference, which the summaries count but
do not place, and for file contents). It reads on demand and keeps what it read only for the
pack it is made for.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..fileentry import FileEntry
from ..graph import SymbolTable
from ..index import RepoIndex
from ..model import DEF, FileSymbols, Import, Tag
from ..ranked import RankedRepository
from ..render import SourceLines
from ..state import RepositoryState

if TYPE_CHECKING:
    from ..stages.tables import RepositoryTables

log = logging.getLogger(__name__)

#: (name, line, kind) of one reference (kind is the backend's: ``call``, ``attribute``, ...)
Reference = tuple[str, int, str]


@dataclass(frozen=True, slots=True)
class ResolvedImport:
    """One import statement of a file and the repository files it resolves to (through the
    file's own backend, kept to the files the state's import edges hold)."""

    imp: Import
    files: tuple[str, ...]


class StateView:
    """The repository state as one pack reads it (see the module's docstring).

    ``mapped`` are the files a pack may select (the ranking's mapped files less ``left_out``,
    the mapper's own output when it lies under the root)."""

    def __init__(
        self,
        state: RepositoryState,
        mapped: Mapping[str, FileSymbols],
        table: SymbolTable,
        imports: Mapping[str, Mapping[str, int]],
        entries: Iterable[FileEntry],
        index: RepoIndex | None,
        left_out: Collection[str] = (),
    ):
        self.state = state
        self.table = table
        self.left_out = frozenset(left_out)
        self.mapped: Mapping[str, FileSymbols] = (
            {p: fs for p, fs in mapped.items() if p not in left_out} if left_out else mapped
        )
        self._edges = imports
        self.entries: dict[str, FileEntry] = {e.path: e for e in entries}
        self._index = index
        self._source: SourceLines = state.source(self.entries)
        self._references: dict[str, tuple[Reference, ...]] = {}
        self._imports: dict[str, tuple[ResolvedImport, ...]] = {}
        self._importers: dict[str, list[str]] | None = None
        self._by_qualified: dict[str, dict[str, Tag]] = {}

    @classmethod
    def of_ranked(
        cls,
        state: RepositoryState,
        ranked: RankedRepository,
        index: RepoIndex | None,
        left_out: Collection[str] = (),
    ) -> StateView:
        """The view of the state a ranking just brought up to date (its summaries, symbol
        table and import edges; ``index`` is its graph state's)."""
        return cls(
            state, ranked.mapped, ranked.table, ranked.imports, ranked.all_entries, index, left_out
        )

    @classmethod
    def of_tables(
        cls, state: RepositoryState, tables: RepositoryTables, left_out: Collection[str] = ()
    ) -> StateView:
        """The view of the state's current tables (no ranking: what the MCP tools read)."""
        return cls(
            state,
            tables.mapped,
            tables.table,
            tables.imports,
            tables.entries.values(),
            tables.index,
            left_out,
        )

    def reads_as(self, ranked: RankedRepository, left_out: Collection[str]) -> bool:
        """Whether this view reads the state ``ranked`` was ranked on: the same symbol table
        and every file's summary the same object (the state keeps a file's summary while its
        content and backends are unchanged, and its table while no summary changed)."""
        if ranked.table is not self.table or self.left_out != frozenset(left_out):
            return False
        mapped = {p: fs for p, fs in ranked.mapped.items() if p not in self.left_out}
        return len(mapped) == len(self.mapped) and all(
            self.mapped.get(p) is fs for p, fs in mapped.items()
        )

    # -- definitions -------------------------------------------------------------------------
    def definitions(self, path: str) -> Sequence[Tag]:
        """A mapped file's definitions as its summary holds them (in the backend's order)."""
        fs = self.mapped.get(path)
        return fs.definitions if fs is not None else ()

    def definition(self, path: str, qualified_name: str) -> Tag | None:
        """The first definition of ``qualified_name`` in ``path``."""
        found = self._by_qualified.get(path)
        if found is None:
            found = {}
            for t in self.definitions(path):
                found.setdefault(t.qualified_name, t)
            self._by_qualified[path] = found
        return found.get(qualified_name)

    def definers(self, name: str) -> list[str]:
        """The mapped files defining ``name`` (the symbol table's), in path order."""
        return sorted(p for p in self.table.defines.get(name, ()) if p in self.mapped)

    def named(self, path: str, name: str) -> Sequence[Tag]:
        """The definitions of ``name`` in ``path``, in file order (the symbol table's)."""
        return self.table.definitions.get((path, name), ())

    def referrers(self, name: str) -> list[str]:
        """The mapped files that refer to ``name`` (the symbol table's), in path order."""
        return sorted(p for p in self.table.references.get(name) or () if p in self.mapped)

    def language(self, path: str) -> str:
        fs = self.mapped.get(path)
        return (fs.language or "") if fs is not None else ""

    # -- references and imports --------------------------------------------------------------
    def references(self, path: str) -> tuple[Reference, ...]:
        """Every reference of a mapped file with its line, in (line, name, kind) order."""
        self.read_references([path])
        return self._references.get(path, ())

    def read_references(self, paths: Sequence[str]) -> None:
        """Read the references of these files (one pass over the state's full extraction,
        from the cache where it has them) unless read already."""
        wanted = [
            self.entries[p]
            for p in dict.fromkeys(paths)
            if p not in self._references and p in self.mapped and p in self.entries
        ]
        if not wanted:
            return
        found = self.state.extract_full(wanted)
        for e in wanted:
            ex = found.get(e.path)
            if ex is None:  # the extraction said why (a file gone since it was ranked)
                log.debug("%s: no references read", e.path)
            tags = ex.tags if ex is not None else ()
            refs = {(t.name, t.start_line, str(t.symbol_kind)) for t in tags if t.kind != DEF}
            self._references[e.path] = tuple(sorted(refs, key=lambda r: (r[1], r[0], r[2])))

    def imports(self, path: str) -> tuple[ResolvedImport, ...]:
        """A mapped file's imports, each with the files it resolves to."""
        found = self._imports.get(path)
        if found is None:
            found = self._imports[path] = self._resolve(path)
        return found

    def _resolve(self, path: str) -> tuple[ResolvedImport, ...]:
        fs = self.mapped.get(path)
        if fs is None or not fs.imports:
            return ()
        edges = self._edges.get(path) or {}
        out = []
        for imp in fs.imports:
            files: tuple[str, ...] = ()
            if edges and self._index is not None and fs.plugin is not None:
                files = self._resolve_one(path, fs.plugin, imp, edges)
            out.append(ResolvedImport(imp, files))
        return tuple(out)

    def _resolve_one(
        self, path: str, plugin: str, imp: Import, edges: Mapping[str, int]
    ) -> tuple[str, ...]:
        """The files of the state's import edges one import resolves to (the state keeps the
        edges per file; which statement made which edge is the backend's to say again)."""
        try:
            _, targets = self.state.plugins.call_first(
                "resolve_import", [plugin], imp=imp, index=self._index
            )
        except Exception as exc:  # a faulty backend costs this import, not the pack
            log.warning("%s: resolving %r failed: %s", path, imp.source, exc)
            return ()
        return tuple(sorted({t for t in targets or () if t in edges and t in self.mapped}))

    def imported(self, path: str) -> Mapping[str, int]:
        """The files ``path`` imports (the state's import edges)."""
        return self._edges.get(path) or {}

    def importers(self, path: str) -> list[str]:
        """The mapped files that import ``path``, in path order."""
        if self._importers is None:
            backward: dict[str, list[str]] = {}
            for src in sorted(self._edges):
                if src in self.mapped:
                    for dst in self._edges[src]:
                        backward.setdefault(dst, []).append(src)
            self._importers = backward
        return self._importers.get(path, [])

    def import_lines(self, path: str) -> list[int]:
        """The lines of a mapped file's imports."""
        fs = self.mapped.get(path)
        return [imp.line_number for imp in fs.imports] if fs is not None else []

    # -- contents ----------------------------------------------------------------------------
    def content(self, path: str) -> Sequence[str] | str:
        """A file's lines, or why it cannot be read. A mapped file's come from the state's
        source lines (read once per content digest, as the map reads them); a file no backend
        mapped (a target given as text) is read here, as UTF-8: a binary file is no text."""
        if path in self.mapped:
            return self._source.get(path)
        try:
            return (self.state.root / path).read_bytes().decode("utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            return f"unreadable: {exc}"
