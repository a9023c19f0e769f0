"""The repository's definitions as arrays, so that ranking them costs numpy operations.

Every (file, identifier) pair the symbol table defines gets a position: files in sorted order,
each file's identifiers sorted, so the positions themselves are the tie-break order of a
ranking. What ranking needs per pair (the definer's kind factor, whether it is a top-level class
or function, whether nobody else references it) is kept per file and joined into arrays once
per version of the index; an edit rebuilds the rows of the files it touched only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from .graph import SymbolTable
from .model import FileSymbols


@dataclass(frozen=True, slots=True)
class FileRows:
    """One file's definitions: sorted identifiers and, per identifier, its kind factor, whether
    it is top-level (a class or function at module level) and whether it is unreferenced."""

    idents: tuple[str, ...]
    kind: tuple[float, ...]
    top: tuple[int, ...]  # local positions of the top-level identifiers
    unreferenced: tuple[bool, ...]

    @classmethod
    def of(cls, table: SymbolTable, path: str, idents: Iterable[str]) -> FileRows:
        names = tuple(sorted(idents))
        top = set(table.top_level.get(path, ()))
        return cls(
            names,
            tuple(table.kind_factor(path, n) for n in names),
            tuple(i for i, n in enumerate(names) if n in top),
            tuple((path, n) in table.unreferenced for n in names),
        )


class DefinitionIndex:
    """Positions and per-pair facts of every definition pair of a symbol table over ``files``."""

    def __init__(self, files: Sequence[str], rows: Mapping[str, FileRows]):
        self.files = list(files)
        self.rows = dict(rows)

    @classmethod
    def build(cls, table: SymbolTable, files: Iterable[str]) -> DefinitionIndex:
        names = sorted(set(files))
        per_file: dict[str, list[str]] = {f: [] for f in names}
        for path, ident in table.definitions:
            if path in per_file:
                per_file[path].append(ident)
        return cls(names, {f: FileRows.of(table, f, per_file[f]) for f in names})

    def updated(
        self,
        table: SymbolTable,
        old: SymbolTable,
        files: Mapping[str, FileSymbols],
        changed: Iterable[str],
        touched: Iterable[str],
    ) -> DefinitionIndex:
        """The index of ``table`` (made from ``old`` by the ``changed`` files, whose summaries
        are in ``files``): rows again for the changed files and for every file that defines, or
        defined, a ``touched`` identifier (its unreferenced flags may have changed)."""
        changed = set(changed)
        dirty = set(changed)
        for ident in touched:
            dirty.update(old.defines.get(ident, ()))
            dirty.update(table.defines.get(ident, ()))
        rows = dict(self.rows)
        for path in dirty:
            if path not in rows:
                continue
            if path in changed:
                idents = {t.name for t in files[path].definitions}
            else:
                idents = set(rows[path].idents)
            rows[path] = FileRows.of(table, path, idents)
        return DefinitionIndex(self.files, rows)

    # -- arrays, once per version ----------------------------------------------------------
    @cached_property
    def arrays(self) -> _Arrays:
        import numpy as np

        counts = [len(self.rows[f].idents) for f in self.files]
        offsets = np.zeros(len(self.files) + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        idents: list[str] = []
        kind: list[float] = []
        unref: list[bool] = []
        top_ids: list[int] = []
        top_file: list[int] = []
        top_count: list[int] = []
        local: dict[tuple[int, str], int] = {}
        for i, f in enumerate(self.files):
            r = self.rows[f]
            base = int(offsets[i])
            idents.extend(r.idents)
            kind.extend(r.kind)
            unref.extend(r.unreferenced)
            for k, n in enumerate(r.idents):
                local[(i, n)] = base + k
            for k in r.top:
                top_ids.append(base + k)
                top_file.append(i)
                top_count.append(len(r.top))
        return _Arrays(
            offsets,
            np.repeat(np.arange(len(self.files)), counts),
            idents,
            np.array(kind, dtype=np.float64),
            np.array(unref, dtype=bool),
            np.array(top_ids, dtype=np.int64),
            np.array(top_file, dtype=np.int64),
            np.array(top_count, dtype=np.float64),
            local,
        )


@dataclass(frozen=True)
class _Arrays:
    offsets: Any  # file i's pairs are offsets[i]:offsets[i + 1]
    pair_file: Any  # file index of each pair
    idents: list[str]  # identifier of each pair
    kind: Any  # kind factor of each pair
    unreferenced: Any  # bool per pair
    top_ids: Any  # pairs that are top-level, with their file and the file's top-level count
    top_file: Any
    top_count: Any
    local: dict[tuple[int, str], int]  # (file index, identifier) -> pair
