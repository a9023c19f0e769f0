"""The repository's definitions as arrays, so that ranking them costs numpy operations.

Every (file, identifier) pair the symbol table defines gets a position: files in sorted order,
each file's identifiers sorted, so the positions themselves are the tie-break order of a
ranking. What ranking needs per pair (the definer's kind factor, whether it is a top-level class
or function, whether nobody else references it) is kept per file and joined into arrays once
per version of the index; an edit rebuilds the rows of the files it touched only.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, overload

from .graph import DATA_DEFINITION_FACTOR, SymbolTable
from .joinedstrings import InternedNames
from .layered import Layered, copied_mapping
from .mappedpages import give_back
from .model import FileSymbols
from .tablearrays import NameRuns

if TYPE_CHECKING:
    from numpy.typing import DTypeLike

    from .tablearrays import TableArrays


@dataclass(frozen=True, slots=True)
class FileRows:
    """One file's definitions: sorted identifiers and, per identifier, its kind factor, whether
    it is top-level (a class or function at module level) and whether it is unreferenced."""

    idents: tuple[str, ...]
    kind: tuple[float, ...]
    top: tuple[int, ...]  # local positions of the top-level identifiers
    unreferenced: tuple[bool, ...]
    position: Mapping[str, int] = field(compare=False)  # identifier -> local position

    @classmethod
    def of(cls, table: SymbolTable, path: str, idents: Iterable[str]) -> FileRows:
        names = tuple(sorted(idents))
        top = set(table.top_level.get(path, ()))
        return cls(
            names,
            tuple(table.kind_factor(path, n) for n in names),
            tuple(i for i, n in enumerate(names) if n in top),
            tuple((path, n) in table.unreferenced for n in names),
            {n: i for i, n in enumerate(names)},
        )


class DefinitionIndex:
    """Positions and per-pair facts of every definition pair of a symbol table over ``files``."""

    def __init__(
        self,
        files: Sequence[str],
        rows: Mapping[str, FileRows],
        parent: tuple[DefinitionIndex, frozenset[str]] | None = None,
    ):
        self.files = list(files)
        self.rows = rows if isinstance(rows, Layered) else dict(rows)
        #: the index this was updated from and the files whose rows were made again, for
        #: splicing the arrays (dropped once they are made)
        self._parent = parent
        #: once the arrays were spliced: the parent's arrays and the positions of the files
        #: laid out again (see :meth:`spliced_from`)
        self._spliced_from: tuple[_Arrays, tuple[int, ...]] | None = None

    @classmethod
    def build(cls, table: SymbolTable, files: Iterable[str]) -> DefinitionIndex:
        names = sorted(set(files))
        per_file: dict[str, list[str]] = {f: [] for f in names}
        for path, ident in table.definitions:
            if path in per_file:
                per_file[path].append(ident)
        return cls(names, {f: FileRows.of(table, f, per_file[f]) for f in names})

    @classmethod
    def of_columns(
        cls,
        files: Sequence[str],
        counts: Any,
        tops: Any,
        idents: Any,
        kind: Any,
        unref: Any,
        top_ids: Any,
        ident_ids: Any = None,
    ) -> DefinitionIndex:
        """The index from its per-pair columns (pairs in file order, a file's in identifier
        order; ``counts`` and ``tops``: pairs and top-level pairs per file, ``top_ids``: the
        top-level pairs), every index checked (a stored state's come from a file); a file's
        row is made when read. ``ident_ids``: the pairs' name ids, when they are known."""
        import numpy as np

        n = len(files)
        counts, tops = np.asarray(counts, dtype=np.int64), np.asarray(tops, dtype=np.int64)
        if counts.shape != (n,) or tops.shape != (n,):
            raise ValueError("definition counts do not match the file list")
        offsets, top_offsets = _starts(counts), _starts(tops)
        if idents.shape != (int(offsets[-1]),):
            raise ValueError("definition identifiers do not match their counts")
        if kind.shape != idents.shape or unref.shape != idents.shape:
            raise ValueError("definition arrays differ in length")
        if top_ids.shape != (int(top_offsets[-1]),):
            raise ValueError("top-level pairs do not match their counts")
        if len(top_ids):  # each file's top-level pairs lie among its own pairs
            owner = np.repeat(np.arange(n), tops)
            if bool(((top_ids < offsets[owner]) | (top_ids >= offsets[owner + 1])).any()):
                raise ValueError("a top-level pair is not among its file's pairs")
        rows = Layered(FileRowsAt(files, offsets, top_offsets, idents, kind, unref, top_ids))
        index = cls(files, rows)
        index.__dict__["arrays"] = _arrays(
            RowsAt(index.files, rows),
            counts,
            tops,
            idents,
            _names(files),
            kind,
            unref,
            top_ids,
            ident_ids,
        )
        return index

    @classmethod
    def of_table(cls, t: TableArrays) -> tuple[DefinitionIndex, Any]:
        """The index of a table held as arrays, and for each of its definer entries (in the
        table's order: by name, then file) the position of the name among its file's pairs."""
        import numpy as np

        n, m = len(t.files), len(t.names)
        names, files = t.def_names(), t.def_file
        order = np.lexsort((names, files))  # by file, then name: the pairs' order
        counts = np.bincount(files, minlength=n)
        ident_ids = names[order]
        del names
        # (the keys built in place: each temporary of these arrays is one per definition)
        pair_keys = files[order].astype(np.int64)
        pair_keys *= max(m, 1)
        pair_keys += ident_ids
        tl_file = np.repeat(np.arange(n, dtype=np.int64), np.diff(t.tl_at))
        tl_keys = tl_file * max(m, 1) + t.tl_ids
        top_ids = np.searchsorted(pair_keys, tl_keys)
        found = pair_keys[np.minimum(top_ids, len(pair_keys) - 1)] if len(pair_keys) else tl_keys
        if len(top_ids) and not bool((found == tl_keys).all()):
            raise ValueError("a top-level name is not among its file's definitions")
        del pair_keys, found, tl_keys
        index = cls.of_columns(
            t.files,
            counts,
            np.bincount(tl_file, minlength=n),
            t.names_at(ident_ids),
            np.where(t.def_data[order], DATA_DEFINITION_FACTOR, 1.0),
            t.def_unref[order],
            top_ids.astype(np.int64),
            ident_ids,
        )
        # (32 bits while every position fits: a position among a file's definitions)
        wide = np.int32 if len(order) < 1 << 31 else np.int64
        local: Any = np.empty(len(order), dtype=wide)
        local[order] = np.arange(len(order), dtype=wide)
        local -= index.arrays.offsets[files].astype(wide)
        return index, local

    def updated(
        self,
        table: SymbolTable,
        old: SymbolTable,
        files: Mapping[str, FileSymbols],
        changed: Iterable[str],
        touched: Iterable[str],
    ) -> DefinitionIndex:
        """The index of ``table`` (made from ``old`` by the ``changed`` files, whose summaries
        are in ``files``): rows again for the changed files and for every other file whose
        definition of a ``touched`` identifier became referenced or unreferenced (the only fact
        of an unchanged file's row an edit elsewhere can change)."""
        changed = set(changed)
        dirty = set(changed)
        was, now = old.unreferenced, table.unreferenced
        for ident in touched:
            for definer in table.defines.get(ident, ()):
                if definer not in dirty and ((definer, ident) in was) != ((definer, ident) in now):
                    dirty.add(definer)
        rows = copied_mapping(self.rows)
        for path in dirty:
            if path not in rows:
                continue
            if path in changed:
                idents = {t.name for t in files[path].definitions}
            else:
                idents = set(rows[path].idents)
            rows[path] = FileRows.of(table, path, idents)
        parent = (self, frozenset(dirty)) if "arrays" in self.__dict__ else None
        return DefinitionIndex(self.files, rows, parent)

    # -- arrays, once per version ----------------------------------------------------------
    @cached_property
    def arrays(self) -> _Arrays:
        """The per-pair arrays: spliced from the parent's for the files whose rows are the
        same, laid out again for the others."""
        parent, self._parent = self._parent, None
        old = parent[0].__dict__.get("arrays") if parent is not None else None
        if old is None or parent is None:
            return self._laid_out()
        return self._spliced(old, parent[1])

    def spliced_from(self) -> tuple[_Arrays, tuple[int, ...]] | None:
        """When :attr:`arrays` were spliced from the parent's: those arrays and the positions
        of the files whose rows were laid out again (every other file's pairs are the
        parent's, moved); None otherwise. Given once, then let go."""
        found, self._spliced_from = self._spliced_from, None
        return found

    def _laid_out(self) -> _Arrays:
        import numpy as np

        rows = [self.rows[f] for f in self.files]
        counts = np.array([len(r.idents) for r in rows], dtype=np.int64)
        tops = np.array([len(r.top) for r in rows], dtype=np.int64)
        offsets = _starts(counts)
        names = [n for r in rows for n in r.idents]
        kind = np.fromiter((k for r in rows for k in r.kind), np.float64, len(names))
        unref = np.fromiter((u for r in rows for u in r.unreferenced), bool, len(names))
        top_ids = np.fromiter(
            (t + int(offsets[i]) for i, r in enumerate(rows) for t in r.top), np.int64
        )
        return _arrays(
            RowsAt(self.files, self.rows), counts, tops, _names(names), _names(self.files), kind,
            unref, top_ids,
        )  # fmt: skip

    def _spliced(self, old: _Arrays, dirty: frozenset[str]) -> _Arrays:
        """The parent's arrays with the rows of the ``dirty`` files laid out again (every
        other file's row is the parent's: see :meth:`updated`)."""
        import numpy as np

        at = {f: i for f in dirty if (i := bisect_left(self.files, f)) < len(self.files)}
        redo = sorted(i for f, i in at.items() if self.files[i] == f)
        counts = np.diff(old.offsets)
        tops = np.diff(old.top_offsets)
        for i in redo:
            counts[i] = len(self.rows[self.files[i]].idents)
            tops[i] = len(self.rows[self.files[i]].top)
        offsets = _starts(counts)
        idents = NameRuns(old.idents)
        parts: tuple[list[Any], ...] = ([], [], [])  # kind, unreferenced, top pair ids
        done = 0  # files before this are in parts

        def keep(upto: int) -> None:  # files done:upto are the parent's, shifted
            if upto <= done:
                return
            a, b = int(old.offsets[done]), int(old.offsets[upto])
            ta, tb = int(old.top_offsets[done]), int(old.top_offsets[upto])
            idents.keep(old.idents, a, b)
            parts[0].append(old.kind[a:b])
            parts[1].append(old.unreferenced[a:b])
            parts[2].append(old.top_ids[ta:tb] + (int(offsets[done]) - a))

        for i in redo:
            keep(i)
            r = self.rows[self.files[i]]
            idents.add(r.idents)
            parts[0].append(np.array(r.kind, dtype=np.float64))
            parts[1].append(np.array(r.unreferenced, dtype=bool))
            parts[2].append(np.array(r.top, dtype=np.int64) + int(offsets[i]))
            done = i + 1
        keep(len(self.files))

        def joined(chunks: list[Any], dtype: DTypeLike) -> Any:
            return np.concatenate(chunks) if chunks else np.zeros(0, dtype=dtype)

        self._spliced_from = (old, tuple(redo))
        spliced = _arrays(
            RowsAt(self.files, self.rows),
            counts,
            tops,
            idents.joined(),
            old.file_names,
            joined(parts[0], np.float64),
            joined(parts[1], bool),
            joined(parts[2], np.int64),
        )
        # copied: the pages a stored index read them from are not needed (see mappedpages)
        give_back(old.kind, old.unreferenced, old.top_ids)
        return spliced


def _starts(counts: Any) -> Any:
    import numpy as np

    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _arrays(
    rows: Sequence[FileRows],
    counts: Any,
    tops: Any,
    idents: Any,
    file_names: Any,
    kind: Any,
    unref: Any,
    top_ids: Any,
    ident_ids: Any = None,
) -> _Arrays:
    import numpy as np

    n = len(counts)
    files_at = np.arange(n, dtype=np.int32)  # (32 bits: an index per pair)
    top_file = np.repeat(files_at, tops)
    return _Arrays(
        rows,
        _starts(counts),
        _starts(tops),
        np.repeat(files_at, counts),
        idents,
        file_names,
        kind,
        unref,
        top_ids,
        top_file,
        tops[top_file].astype(np.float64),
        ident_ids,
    )


class RowsAt(Sequence[FileRows]):
    """The rows of ``files`` by position, read from ``rows`` (which may make them on read)."""

    __slots__ = ("_files", "_rows")

    def __init__(self, files: Sequence[str], rows: Mapping[str, FileRows]):
        self._files, self._rows = files, rows

    def __len__(self) -> int:
        return len(self._files)

    @overload
    def __getitem__(self, i: int) -> FileRows: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[FileRows]: ...
    def __getitem__(self, i: int | slice) -> FileRows | Sequence[FileRows]:
        if isinstance(i, slice):
            return [self._rows[f] for f in self._files[i]]
        return self._rows[self._files[i]]

    def position(self, i: int, ident: str) -> int:
        """The position of ``ident`` among the definitions of the ``i``-th file (KeyError when
        it defines no such name). A stored row not made yet is read by its name ids: an edit
        lays out again every identifier of the file it changed, and one of them defined in
        thousands of files made each of those rows, and with them every name of the tree."""
        path, rows = self._files[i], self._rows
        if isinstance(rows, Layered) and isinstance(rows.base, FileRowsAt) and rows.from_base(path):
            return rows.base.position_of(path, ident)
        return rows[path].position[ident]


class FileRowsAt(Mapping[str, FileRows]):
    """Per file, its row of an index held as columns (see :meth:`DefinitionIndex.of_columns`),
    made on first read."""

    def __init__(
        self,
        files: Sequence[str],
        offsets: Any,
        top_offsets: Any,
        idents: Any,
        kind: Any,
        unref: Any,
        top_ids: Any,
    ) -> None:
        self._files = files
        self._made: dict[str, FileRows] = {}
        self._name_ids: dict[str, int | None] = {}  # (see position_of)
        self._offsets, self._top_offsets = offsets, top_offsets
        self._idents, self._kind, self._unref, self._top_ids = idents, kind, unref, top_ids

    def _at(self, path: object) -> int | None:
        if not isinstance(path, str):
            return None
        i = bisect_left(self._files, path)
        return i if i < len(self._files) and self._files[i] == path else None

    def __getitem__(self, path: str) -> FileRows:
        found = self._made.get(path)
        if found is None:
            i = self._at(path)
            if i is None:
                raise KeyError(path)
            found = self._made[path] = self._row(i)
        return found

    def position_of(self, path: str, ident: str) -> int:
        """The position of ``ident`` among ``path``'s definitions, from the row when it is
        made, else from the name ids of the file's pairs (no name is made); KeyError when the
        file is not listed or defines no such name."""
        found = self._made.get(path)
        if found is not None:
            return found.position[ident]
        i = self._at(path)
        ids, names = getattr(self._idents, "ids", None), getattr(self._idents, "names", None)
        if i is None or ids is None or not isinstance(names, InternedNames):
            return self[path].position[ident]
        name_id = self._name_ids.get(ident, -1)
        if name_id == -1:  # (asked per definer; a name given an id later is in no row here)
            name_id = self._name_ids[ident] = names.known_id(ident)
        lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
        if name_id is not None:  # (a file has one pair per name)
            hit = (ids[lo:hi] == name_id).nonzero()[0]
            if len(hit):
                return int(hit[0])
        raise KeyError(ident)

    def _row(self, i: int) -> FileRows:
        lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
        tlo, thi = int(self._top_offsets[i]), int(self._top_offsets[i + 1])
        names = tuple(self._idents[lo:hi].tolist())
        return FileRows(
            names,
            tuple(self._kind[lo:hi].tolist()),
            tuple(t - lo for t in self._top_ids[tlo:thi].tolist()),
            tuple(self._unref[lo:hi].tolist()),
            {name: j for j, name in enumerate(names)},
        )

    def __contains__(self, path: object) -> bool:
        return self._at(path) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


@dataclass(frozen=True)
class _Arrays:
    rows: Sequence[FileRows]  # per file index, the rows the arrays were made from
    offsets: Any  # file i's pairs are offsets[i]:offsets[i + 1]
    top_offsets: Any  # file i's top-level pairs are top_ids[top_offsets[i]:top_offsets[i + 1]]
    pair_file: Any  # file index of each pair
    idents: Any  # numpy object array: the identifier of each pair
    file_names: Any  # numpy object array: the name of each file
    kind: Any  # kind factor of each pair
    unreferenced: Any  # bool per pair
    top_ids: Any  # pairs that are top-level, with their file and the file's top-level count
    top_file: Any
    top_count: Any
    #: the name id of each pair (see :class:`~repomapper.tablearrays.TableArrays`) when the
    #: index was made from a table's arrays; None once an update laid out rows again
    ident_ids: Any = None

    def pair(self, file_index: int, ident: str) -> int | None:
        """The pair of (file, identifier), or None when the file does not define it."""
        if not 0 <= file_index < len(self.rows):
            return None
        local = self.rows[file_index].position.get(ident)
        return None if local is None else int(self.offsets[file_index]) + local


def _names(names: Sequence[str]) -> Any:
    """A numpy object array of strings (gathered by index arrays in one call)."""
    import numpy as np

    out = np.empty(len(names), dtype=object)
    out[:] = names
    return out
