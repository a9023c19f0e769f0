"""The stored state's rows as read-only mappings that make a row when it is first read (the
base layers of a loaded state; see :mod:`repomapper.snapshot` and :mod:`repomapper.layered`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from ..definitions import FileRows
from ..graph import DefinitionsByName, SymbolTable
from ..layered import Layered, LayeredSet
from ..model import FileSymbols
from ..rank import IdentBlock, _Assembly, ident_block
from .stored import Stored

V = TypeVar("V")


def table_of(s: Stored, files: Mapping[str, FileSymbols]) -> SymbolTable:
    """The stored symbol table, each field answering from the arrays and kept in a layer an
    update copies in O(changes)."""
    rows = _NameRows(s)
    defines = _BaseDefines(rows)
    table = SymbolTable()
    table.defines = Layered(defines)
    table.references = Layered(_BaseReferences(rows))
    table.definitions = Layered(DefinitionsByName(files, defines))
    table.targets = Layered(_BaseTargets(rows))
    table.unreferenced = LayeredSet(rows.unreferenced)
    table.data_only = LayeredSet(rows.data_only)
    table.top_level = Layered(_BaseTopLevel(s))
    return table


class _NameRows:
    """Per name, its rows of the stored symbol table, made on first read."""

    def __init__(self, s: Stored):
        self.s = s
        self._defs: dict[str, dict[str, tuple[bool, bool]]] = {}
        self._refs: dict[str, dict[str, int]] = {}
        self._targets: dict[str, dict[str, frozenset[str]]] = {}

    def definers(self, name: str) -> dict[str, tuple[bool, bool]]:
        """file -> (data only, unreferenced), in path order; empty for a name nobody defines."""
        found = self._defs.get(name)
        if found is None:
            s, found = self.s, {}
            k = s.name_at(name)
            if k is not None:
                lo, hi = int(s.def_at[k]), int(s.def_at[k + 1])
                data, unref = s.a["def_data"][lo:hi].tolist(), s.a["def_unref"][lo:hi].tolist()
                for j, i in enumerate(s.def_file[lo:hi].tolist()):
                    found[s.files[i]] = (data[j], unref[j])
            self._defs[name] = found
        return found

    def references(self, name: str) -> dict[str, int] | None:
        found = self._refs.get(name)
        if found is None:
            s = self.s
            k = s.name_at(name)
            if k is None:
                return None
            lo, hi = int(s.ref_at[k]), int(s.ref_at[k + 1])
            if lo == hi:
                return None
            counts = s.a["ref_count"][lo:hi].tolist()
            found = self._refs[name] = {
                s.files[i]: c for i, c in zip(s.ref_file[lo:hi].tolist(), counts, strict=True)
            }
        return found

    def targets(self, name: str) -> dict[str, frozenset[str]]:
        found = self._targets.get(name)
        if found is None:
            s, found = self.s, {}
            k = s.name_at(name)
            if k is not None:
                for e in range(int(s.tg_at[k]), int(s.tg_at[k + 1])):
                    lo, hi = int(s.tg_files_at[e]), int(s.tg_files_at[e + 1])
                    found[s.files[int(s.tg_ref[e])]] = frozenset(s.tg_files[lo:hi])
            self._targets[name] = found
        return found

    def unreferenced(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        facts = self.definers(key[1]).get(key[0])
        return facts is not None and facts[1]

    def data_only(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        facts = self.definers(key[1]).get(key[0])
        return facts is not None and facts[0]


class _BaseDefines(Mapping[str, frozenset[str]]):
    def __init__(self, rows: _NameRows):
        self._rows = rows
        self._made: dict[str, frozenset[str]] = {}

    def __getitem__(self, name: str) -> frozenset[str]:
        found: frozenset[str] | None = self.get(name)
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: str, default: Any = None) -> Any:
        found = self._made.get(name)
        if found is None:
            definers = self._rows.definers(name) if isinstance(name, str) else None
            if not definers:
                return default
            found = self._made[name] = frozenset(definers)
        return found

    def __contains__(self, name: object) -> bool:
        s = self._rows.s
        k = s.name_at(name)
        return k is not None and s.def_at[k + 1] > s.def_at[k]

    def __iter__(self) -> Iterator[str]:
        s = self._rows.s
        return (n for k, n in enumerate(s.names) if s.def_at[k + 1] > s.def_at[k])

    def __len__(self) -> int:
        return int((self._rows.s.a["def_n"] > 0).sum())


class _BaseReferences(Mapping[str, dict[str, int]]):
    def __init__(self, rows: _NameRows):
        self._rows = rows

    def __getitem__(self, name: str) -> dict[str, int]:
        found = self._rows.references(name)
        if found is None:
            raise KeyError(name)
        return found

    def get(self, name: str, default: Any = None) -> Any:
        found = self._rows.references(name) if isinstance(name, str) else None
        return default if found is None else found

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._rows.references(name) is not None

    def __iter__(self) -> Iterator[str]:
        s = self._rows.s
        return (n for k, n in enumerate(s.names) if s.ref_at[k + 1] > s.ref_at[k])

    def __len__(self) -> int:
        return int((self._rows.s.a["ref_n"] > 0).sum())


class _BaseTargets(Mapping[tuple[str, str], frozenset[str]]):
    def __init__(self, rows: _NameRows):
        self._rows = rows

    def __getitem__(self, key: tuple[str, str]) -> frozenset[str]:
        if not isinstance(key, tuple) or len(key) != 2:
            raise KeyError(key)
        return self._rows.targets(key[1])[key[0]]

    def get(self, key: tuple[str, str], default: Any = None) -> Any:
        if not isinstance(key, tuple) or len(key) != 2:
            return default
        return self._rows.targets(key[1]).get(key[0], default)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        return key[0] in self._rows.targets(key[1])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for name in self._rows.s.names:
            for path in self._rows.targets(name):
                yield (path, name)

    def __len__(self) -> int:
        return len(self._rows.s.a["tg_ref"])


class _BaseTopLevel(Mapping[str, tuple[str, ...]]):
    def __init__(self, s: Stored):
        self._s = s
        self._at = {f: i for i, f in enumerate(s.files)}

    def __getitem__(self, path: str) -> tuple[str, ...]:
        i = self._at[path]
        lo, hi = int(self._s.tl_at[i]), int(self._s.tl_at[i + 1])
        if lo == hi:
            raise KeyError(path)
        return tuple(self._s.tl_names[lo:hi].tolist())

    def __iter__(self) -> Iterator[str]:
        return (f for i, f in enumerate(self._s.files) if self._s.tl_at[i + 1] > self._s.tl_at[i])

    def __len__(self) -> int:
        return int((self._s.a["tl_n"] > 0).sum())


class _RowsByKey(Mapping[str, V]):
    """Keys in a stored order, each key's value made from its position when first read."""

    def __init__(self, keys: Iterable[str]):
        self._at = {k: i for i, k in enumerate(keys)}
        self._made: dict[str, V] = {}

    def _row(self, i: int) -> V:
        raise NotImplementedError

    def __getitem__(self, key: str) -> V:
        found = self._made.get(key)
        if found is None:
            found = self._made[key] = self._row(self._at[key])
        return found

    def __contains__(self, key: object) -> bool:
        return key in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


class _BaseImports(_RowsByKey[Counter[str]]):
    """importer -> {imported file: count}, each made when first read."""

    def __init__(
        self, files: Sequence[str], importers: Iterable[str], starts: Any, targets: Any, counts: Any
    ) -> None:
        super().__init__(importers)
        self._files, self._starts = files, starts
        self._targets, self._counts = targets, counts

    def _row(self, j: int) -> Counter[str]:
        lo, hi = int(self._starts[j]), int(self._starts[j + 1])
        names = [self._files[t] for t in self._targets[lo:hi].tolist()]
        return Counter(dict(zip(names, self._counts[lo:hi].tolist(), strict=True)))


class _BaseFileRows(_RowsByKey[FileRows]):
    """Per file, its row of the stored definition index, made on first read."""

    def __init__(
        self,
        files: Iterable[str],
        offsets: Any,
        top_offsets: Any,
        idents: Any,
        kind: Any,
        unref: Any,
        top_ids: Any,
    ) -> None:
        super().__init__(files)
        self._offsets, self._top_offsets = offsets, top_offsets
        self._idents, self._kind, self._unref, self._top_ids = idents, kind, unref, top_ids

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


class _BaseBlocks(Mapping[str, IdentBlock]):
    """The stored layout's identifiers; a block is computed from the stored table when read
    (only an update that touched the identifier, or laying out a new file set, reads one)."""

    def __init__(
        self,
        table: SymbolTable,
        assembly: _Assembly,
        chat: frozenset[str],
        mentioned: frozenset[str],
    ) -> None:
        self._table, self._pos = table, assembly.pos
        self._chat, self._mentioned = chat, mentioned

    def __getitem__(self, ident: str) -> IdentBlock:
        if ident not in self._pos:
            raise KeyError(ident)
        block = ident_block(self._table, ident, self._chat, self._mentioned)
        if block is None:
            raise KeyError(ident)
        return block

    def __contains__(self, ident: object) -> bool:
        return ident in self._pos

    def __iter__(self) -> Iterator[str]:
        return iter(self._pos)

    def __len__(self) -> int:
        return len(self._pos)
