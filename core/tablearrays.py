"""The symbol table as arrays over interned ids: what a built state holds and a stored one
loads (see :mod:`repomapper.snapshot`).

Files and names are ids: a file's id is its position among the sorted paths, a name's its
position among the sorted distinct names, so ordering by id is ordering by string and the
arrays come out in the order the ranking reads them. Each name's rows are ranges of flat
arrays (its definers, its referencers with their counts, its resolved targets); each file's
top-level names a range of another. Building them from the files' summaries costs a dict
lookup per name a file mentions and numpy's sorts, and keeps no Python object per row: on a
large tree a dict of referencing files per name and a set of (file, name) tuples per fact
were most of a cold run's memory. The table's mappings (:func:`table_of`) make a name's row
when it is first read.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property
from typing import Any

from .graph import DefinitionsByName, SymbolTable, TargetResolver, definitions_by_name
from .joinedstrings import InternedNames, JoinedStrings, position_of
from .layered import Layered, LayeredSet
from .model import FileSymbols
from .namecounts import NameCounts

#: entries an elementwise step over a large tree's arrays takes at a time (its temporaries are
#: then each a few times this many values, not as many as the tree has references)
ELEMENT_CHUNK = 1 << 20


def element_chunks(n: int) -> Iterator[slice]:
    """Slices that cover ``range(n)`` in order, :data:`ELEMENT_CHUNK` entries each."""
    for lo in range(0, n, ELEMENT_CHUNK):
        yield slice(lo, min(lo + ELEMENT_CHUNK, n))


def starts(counts: Any) -> Any:
    """Where each of consecutive runs of ``counts`` items starts, and the total at the end."""
    import numpy as np

    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def name_objects(names: Sequence[str]) -> Any:
    """A numpy object array of the strings (gathered by index arrays in one call)."""
    import numpy as np

    out = np.empty(len(names), dtype=object)
    out[:] = names
    return out


class NamesAt:
    """The names at ``ids`` (positions in ``names``, a numpy object array of strings), read
    as a numpy object array would be: one name by position, an array of them by slice or index
    array. Gathered where read: a large tree's definition index has four million pairs, and
    gathering every pair's name up front cost each new process a third of a second, while an
    edit inside a body reads none of them. A read of a quarter of them or more (a splice's runs)
    gathers them all once and keeps them."""

    __slots__ = ("ids", "names", "shape", "_all")

    def __init__(self, ids: Any, names: Any):
        self.ids, self.names = ids, names
        self.shape = ids.shape
        self._all: Any = None

    def __len__(self) -> int:
        return len(self.ids)

    def __getitem__(self, at: Any) -> Any:
        found = self._all
        if found is not None:
            return found[at]
        if isinstance(at, slice):
            lo, hi, step = at.indices(len(self.ids))
            if 4 * len(range(lo, hi, step)) >= len(self.ids):
                return self.gathered()[at]
        return self.names[self.ids[at]]

    def gathered(self) -> Any:
        """Every name, as an object array (gathered on the first call)."""
        found = self._all
        if found is None:
            found = self._all = self.names[self.ids]
        return found

    def tolist(self) -> list[str]:
        return self.gathered().tolist()  # type: ignore[no-any-return]

    def __array__(self, dtype: Any = None, copy: Any = None) -> Any:
        gathered = self.gathered()
        return gathered if dtype is None else gathered.astype(dtype)


class NameRuns:
    """A names column spliced from runs of another (:meth:`keep`) and names laid out again
    (:meth:`add`). When the other is a :class:`NamesAt` over
    :class:`~repomapper.joinedstrings.InternedNames` (a stored state's), the runs are its ids
    copied and the result is one too, so no kept name is made; otherwise an object array."""

    __slots__ = ("_interned", "_parts")

    def __init__(self, old: Any):
        names = old.names if isinstance(old, NamesAt) else None
        self._interned = names if isinstance(names, InternedNames) else None
        self._parts: list[Any] = []

    def keep(self, old: Any, lo: int, hi: int) -> None:
        """The names ``lo:hi`` of ``old`` (the column this splices), as they are."""
        if self._interned is not None:
            self._parts.append(old.ids[lo:hi])
            return
        part = old[lo:hi]
        self._parts.append(part if hasattr(part, "dtype") else name_objects(part))

    def add(self, names: Sequence[str]) -> None:
        """``names``, in this order."""
        import numpy as np

        if self._interned is not None:
            ids = self._interned.id_of
            self._parts.append(np.fromiter(map(ids, names), np.int64, len(names)))
        else:
            self._parts.append(name_objects(names))

    def joined(self) -> Any:
        import numpy as np

        parts = self._parts
        if self._interned is None:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=object)
        ids = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        return NamesAt(ids, self._interned)


class TableArrays:
    """A symbol table's rows per name, over ``files`` and ``names`` (both sorted; ids are
    positions). Every index is checked against what it indexes when the arrays are given:
    a stored state's arrays come from a file."""

    def __init__(
        self,
        files: Sequence[str],
        names: Sequence[str],
        arrays: Mapping[str, Any],
    ):
        """``arrays``: ``def_at`` (where each name's definers start, and their total at the
        end), ``def_file``, ``def_data`` (every definition of the name in the file is data),
        ``def_unref`` (no other file references it); ``ref_at``, ``ref_file``, ``ref_count``;
        ``tg_at`` (where each name's referencing files with resolved targets start),
        ``tg_ref``, ``tg_files_at`` (where each entry's targets start); ``tl_at`` (where each
        file's top-level names start), ``tl_names`` (their name ids); and ``tg_files``, a
        sequence of paths. Offsets rather than counts: a stored state's are read where they
        are used (a count per name turned into offsets read a large tree's millions of them
        in every process that loads it)."""
        import numpy as np

        self.files, self.names = files, names
        n, m = len(files), len(names)
        self.def_at, self.ref_at = _offsets(arrays, "def_at", m), _offsets(arrays, "ref_at", m)
        self.tg_at, self.tl_at = _offsets(arrays, "tg_at", m), _offsets(arrays, "tl_at", n)
        self.tg_files_at = _offsets(arrays, "tg_files_at", int(self.tg_at[-1]))
        checks = (
            ("def_file", self.def_at, ("def_data", "def_unref")),
            ("ref_file", self.ref_at, ("ref_count",)),
            ("tg_ref", self.tg_at, ()),
        )
        for index, at, parallel in checks:
            total = int(at[-1])
            for k in (index, *parallel):
                if arrays[k].shape != (total,):
                    raise ValueError(f"{k} does not match its counts")
            if total and (int(arrays[index].min()) < 0 or int(arrays[index].max()) >= n):
                raise ValueError(f"{index} names a file that is not mapped")
        self.def_file, self.def_data, self.def_unref = (
            arrays["def_file"],
            arrays["def_data"],
            arrays["def_unref"],
        )
        self.ref_file, self.ref_count = arrays["ref_file"], arrays["ref_count"]
        self.tg_ref = arrays["tg_ref"]
        self.tg_files: Sequence[str] = arrays["tg_files"]
        if len(self.tg_files) != int(self.tg_files_at[-1]):
            raise ValueError("tg_files does not match its counts")
        self.tl_ids = self.checked_ids(arrays["tl_names"], int(self.tl_at[-1]))
        self.tl_names = NamesAt(self.tl_ids, self.name_column)
        self.np = np

    @cached_property
    def name_column(self) -> Any:
        """The names as one column read by position, slice or index array: the stored names
        (each decoded when read, see :class:`~repomapper.joinedstrings.JoinedStrings`), or the
        names as a numpy object array."""
        names = self.names
        return names if isinstance(names, JoinedStrings) else name_objects(names)

    @property
    def name_objects(self) -> Any:
        """Every name as a numpy object array (a stored state's names are then all made)."""
        column = self.name_column
        return column.objects() if isinstance(column, JoinedStrings) else column

    @property
    def def_n(self) -> Any:
        """Definers per name."""
        return self.np.diff(self.def_at)

    @property
    def ref_n(self) -> Any:
        """Referencing files per name."""
        return self.np.diff(self.ref_at)

    def checked_ids(self, ids: Any, count: int | None = None) -> Any:
        """``ids`` when they are name ids (and ``count`` of them)."""
        if ids.dtype.kind != "i" or ids.ndim != 1 or (count is not None and len(ids) != count):
            raise ValueError("name positions do not match their counts")
        if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(self.names)):
            raise ValueError("a name position is out of the names")
        return ids

    def names_at(self, ids: Any, count: int | None = None) -> NamesAt:
        """The names at positions ``ids``, gathered where read (see :class:`NamesAt`)."""
        return NamesAt(self.checked_ids(ids, count), self.name_column)

    def name_at(self, name: object) -> int | None:
        """The id of ``name`` (found by bisection: on a large tree a dict of every name costs
        far more than the few lookups an update makes)."""
        return position_of(self.names, name)

    def def_names(self) -> Any:
        """The name id of each definer entry (entries grouped by name)."""
        np = self.np
        return np.repeat(np.arange(len(self.names), dtype=np.int32), self.def_n)

    def ref_names(self) -> Any:
        np = self.np
        return np.repeat(np.arange(len(self.names), dtype=np.int32), self.ref_n)

    def internal_refs(self) -> Any:
        """Per reference entry, whether its file defines the name too (its use of its own
        names says nothing of its importance to others: see
        :meth:`~repomapper.graph.SymbolTable.external_refs`)."""
        return _pairs_in(
            self.ref_names(), self.ref_file, self.def_names(), self.def_file, len(self.files)
        )


def _offsets(arrays: Mapping[str, Any], key: str, runs: int) -> Any:
    """``arrays[key]``, offsets of ``runs`` consecutive runs: one more than the runs, from
    zero (the total at the end is checked against the arrays it indexes)."""
    at = arrays[key]
    if getattr(at, "shape", None) != (runs + 1,) or at.dtype.kind not in "iu" or int(at[0]):
        raise ValueError(f"{key} does not match what it counts")
    return at


def _starts_or_none(counts: Any) -> Any:
    """:func:`starts`, or a view of one zero for every name when none has any (most
    repositories resolve no reference to a file: a row of zeros per name is memory for
    nothing)."""
    import numpy as np

    if not counts.any():
        return np.broadcast_to(np.zeros(1, dtype=np.int64), (len(counts) + 1,))
    return starts(counts)


def _pairs_in(names: Any, files: Any, in_names: Any, in_files: Any, n_files: int) -> Any:
    """Per (name, file) pair of the first arrays, whether the second holds it (the second
    sorted by name, then file)."""
    import numpy as np

    width = max(n_files, 1)
    within = in_names.astype(np.int64)
    within *= width
    within += in_files
    out = np.zeros(len(names), dtype=bool)
    if not len(within):
        return out
    for part in element_chunks(len(names)):  # (each key array at once was a peak)
        keys = names[part].astype(np.int64)
        keys *= width
        keys += files[part]
        at = np.searchsorted(within, keys)
        np.minimum(at, len(within) - 1, out=at)
        out[part] = within[at] == keys
    return out


def build_arrays(files: Mapping[str, FileSymbols], resolve: TargetResolver | None) -> TableArrays:
    """The table of ``files`` (what :meth:`~repomapper.graph.SymbolTable.build` holds as
    dicts) as arrays. Names are interned in the order they are met, then sorted once."""
    import numpy as np

    paths = sorted(files)
    ids: dict[str, int] = {}
    by_id: list[str] = []

    def intern(name: str) -> int:
        found = ids.get(name)
        if found is None:
            found = ids[name] = len(by_id)
            by_id.append(name)
        return found

    def interned(names: Sequence[str]) -> list[int]:
        """The ids of distinct ``names`` (one dict lookup each in C; a call per new name)."""
        got = list(map(ids.get, names))
        if None in got:
            for j, name in enumerate(names):
                if got[j] is None:
                    got[j] = intern(name)
        return got  # type: ignore[return-value]

    d_name, d_file, d_data = array("i"), array("i"), array("b")
    t_name, t_file = array("i"), array("i")
    for fi, path in enumerate(paths):
        facts = definitions_by_name(files[path].definitions)
        d_name.extend(interned(facts.names))
        d_file.extend([fi] * len(facts.names))
        d_data.frombytes(facts.data)
        if any(facts.top):
            tops = [ids[n] for n, top in zip(facts.names, facts.top, strict=True) if top]
            t_name.extend(tops)
            t_file.extend([fi] * len(tops))
    r_name, r_file, r_count = array("i"), array("i"), array("q")
    targets: dict[tuple[int, int], set[str]] = defaultdict(set)
    for fi, path in enumerate(paths):
        fs = files[path]
        names, counts = _columns(fs.references)
        r_name.extend(interned(names))
        r_file.extend([fi] * len(names))
        r_count.extend(counts if getattr(counts, "typecode", "") == "q" else array("q", counts))
        # in the same pass: a cached summary's references and targets are parsed from one
        # text, kept until both are read
        if resolve is not None:
            for name, target in fs.targets:
                hit = resolve(fs, target)
                if hit:
                    targets[(fi, intern(name))].update(hit)
    # ids in sorted order of the names: every array below is ordered by them (the names
    # sorted as strings, each looked up once: a sort keyed by a Python int per name cost a
    # large tree 170 MB more)
    m = len(by_id)
    by_id.sort()
    names_sorted = by_id
    met = np.fromiter(map(ids.__getitem__, names_sorted), np.int32, m)
    ids.clear()  # the strings live on in names_sorted
    rank = np.empty(m, dtype=np.int32)
    rank[met] = np.arange(m, dtype=np.int32)
    del met

    def grouped(name_of: Any, file_of: Any, *columns: Any) -> tuple[Any, ...]:
        n_ = rank[np.frombuffer(name_of, dtype=np.int32)] if len(name_of) else _ints(0)
        f_ = np.frombuffer(file_of, dtype=np.int32) if len(file_of) else _ints(0)
        at = np.lexsort((f_, n_))
        return (
            np.bincount(n_, minlength=m).astype(np.int64),
            f_[at],
            *(np.asarray(c)[at] for c in columns),
        )

    def_n, def_file, def_data = grouped(d_name, d_file, np.frombuffer(d_data, np.int8) != 0)
    del d_name, d_file, d_data
    ref_n, ref_file, ref_count = grouped(r_name, r_file, np.frombuffer(r_count, np.int64))
    del r_name, r_file, r_count
    if not len(ref_count) or int(ref_count.max()) < 1 << 31:
        ref_count = ref_count.astype(np.int32)
    ref_names = np.repeat(np.arange(m, dtype=np.int32), ref_n)
    def_names = np.repeat(np.arange(m, dtype=np.int32), def_n)
    external = ~_pairs_in(ref_names, ref_file, def_names, def_file, len(paths))
    no_outside = np.bincount(ref_names[external], minlength=m) == 0
    def_unref = no_outside[def_names]
    del ref_names, def_names, external
    # a file's top-level names, files in order and each file's names sorted
    tl_file = np.frombuffer(t_file, np.int32) if len(t_file) else _ints(0)
    tl_names = rank[np.frombuffer(t_name, np.int32)] if len(t_name) else _ints(0)
    tl_names = tl_names[np.lexsort((tl_names, tl_file))]
    tl_at = starts(np.bincount(tl_file, minlength=len(paths)))
    del t_file, t_name, tl_file
    tg = _target_arrays(targets, rank, m, paths)
    return TableArrays(
        paths,
        names_sorted,
        {
            "def_at": starts(def_n),
            "def_file": def_file,
            "def_data": def_data,
            "def_unref": def_unref,
            "ref_at": starts(ref_n),
            "ref_file": ref_file,
            "ref_count": ref_count,
            "tl_at": tl_at,
            "tl_names": tl_names,
            **tg,
        },
    )


def _ints(n: int) -> Any:
    import numpy as np

    return np.zeros(n, dtype=np.int32)


def _columns(refs: Sequence[tuple[str, int]]) -> tuple[Sequence[str], Sequence[int]]:
    """A reference summary's names and counts (a :class:`~repomapper.namecounts.NameCounts`'
    own columns, or those of a plain sequence of pairs)."""
    if isinstance(refs, NameCounts):
        return refs.names, refs.counts
    made = getattr(refs, "made", None)  # a cached row's, parsed when first read
    if callable(made):
        return _columns(made())
    return [n for n, _ in refs], [c for _, c in refs]


def _target_arrays(
    targets: Mapping[tuple[int, int], set[str]], rank: Any, m: int, paths: Sequence[str]
) -> dict[str, Any]:
    """The resolved targets as rows per name: each name's referencing files in order, each
    with its target files sorted."""
    import numpy as np

    entries = sorted((int(rank[k]), fi, sorted(found)) for (fi, k), found in targets.items())
    tg_n = np.zeros(m, dtype=np.int64)
    tg_ref, tg_count, tg_files = array("i"), array("q"), []
    for k, fi, found in entries:
        tg_n[k] += 1
        tg_ref.append(fi)
        tg_count.append(len(found))
        tg_files.extend(found)
    return {
        "tg_at": _starts_or_none(tg_n),
        "tg_ref": np.array(tg_ref, dtype=np.int32),
        "tg_files_at": starts(np.array(tg_count, dtype=np.int64)),
        "tg_files": tg_files,
    }


# -- the table's mappings over the arrays ----------------------------------------------------


def table_of(arrays: TableArrays, files: Mapping[str, FileSymbols]) -> SymbolTable:
    """The symbol table answering from ``arrays``, each field a layer an update copies in
    O(changes); ``files`` gives a file's definitions when they are read."""
    rows = NameRows(arrays)
    defines = BaseDefines(rows)
    table = SymbolTable()
    table.defines = Layered(defines)
    table.references = Layered(BaseReferences(rows))
    table.definitions = Layered(DefinitionsByName(files, defines))
    table.targets = Layered(BaseTargets(rows))
    table.unreferenced = LayeredSet(rows.unreferenced, members=lambda: rows.pairs(rows.t.def_unref))
    table.data_only = LayeredSet(rows.data_only, members=lambda: rows.pairs(rows.t.def_data))
    table.top_level = Layered(BaseTopLevel(arrays))
    table.arrays = arrays
    return table


class NameRows:
    """Per name, its rows of the table, made on first read."""

    def __init__(self, t: TableArrays):
        self.t = t
        self._defs: dict[str, dict[str, tuple[bool, bool]]] = {}
        self._refs: dict[str, dict[str, int]] = {}
        self._targets: dict[str, dict[str, frozenset[str]]] = {}

    def definers(self, name: str) -> dict[str, tuple[bool, bool]]:
        """file -> (data only, unreferenced), in path order; empty for a name nobody defines."""
        found = self._defs.get(name)
        if found is None:
            t, found = self.t, {}
            k = t.name_at(name)
            if k is not None:
                lo, hi = int(t.def_at[k]), int(t.def_at[k + 1])
                data, unref = t.def_data[lo:hi].tolist(), t.def_unref[lo:hi].tolist()
                for j, i in enumerate(t.def_file[lo:hi].tolist()):
                    found[t.files[i]] = (data[j], unref[j])
            self._defs[name] = found
        return found

    def references(self, name: str) -> dict[str, int] | None:
        found = self._refs.get(name)
        if found is None:
            t = self.t
            k = t.name_at(name)
            if k is None:
                return None
            lo, hi = int(t.ref_at[k]), int(t.ref_at[k + 1])
            if lo == hi:
                return None
            counts = t.ref_count[lo:hi].tolist()
            found = self._refs[name] = {
                t.files[i]: c for i, c in zip(t.ref_file[lo:hi].tolist(), counts, strict=True)
            }
        return found

    def targets(self, name: str) -> dict[str, frozenset[str]]:
        found = self._targets.get(name)
        if found is None:
            t, found = self.t, {}
            k = t.name_at(name)
            if k is not None:
                for e in range(int(t.tg_at[k]), int(t.tg_at[k + 1])):
                    lo, hi = int(t.tg_files_at[e]), int(t.tg_files_at[e + 1])
                    found[t.files[int(t.tg_ref[e])]] = frozenset(t.tg_files[lo:hi])
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

    def pairs(self, flags: Any) -> Iterator[tuple[str, str]]:
        """The (file, name) definer entries whose flag is set (for a reader that lists a
        fact's members: tests and inspection, never a map)."""
        t = self.t
        names = t.def_names()
        for j in t.np.flatnonzero(flags).tolist():
            yield (t.files[int(t.def_file[j])], t.names[int(names[j])])


class BaseDefines(Mapping[str, frozenset[str]]):
    def __init__(self, rows: NameRows):
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
        t = self._rows.t
        k = t.name_at(name)
        return k is not None and t.def_at[k + 1] > t.def_at[k]

    def __iter__(self) -> Iterator[str]:
        t = self._rows.t
        return iter(t.name_objects[t.def_n > 0].tolist())

    def __len__(self) -> int:
        return int((self._rows.t.def_n > 0).sum())


class BaseReferences(Mapping[str, dict[str, int]]):
    def __init__(self, rows: NameRows):
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
        t = self._rows.t
        return iter(t.name_objects[t.ref_n > 0].tolist())

    def __len__(self) -> int:
        return int((self._rows.t.ref_n > 0).sum())


class BaseTargets(Mapping[tuple[str, str], frozenset[str]]):
    def __init__(self, rows: NameRows):
        self._rows = rows

    def __getitem__(self, key: tuple[str, str]) -> frozenset[str]:
        if not isinstance(key, tuple) or len(key) != 2:
            raise KeyError(key)
        return self._rows.targets(key[1])[key[0]]

    def get(self, key: tuple[str, str], default: Any = None) -> Any:
        if not isinstance(key, tuple) or len(key) != 2:
            return default
        if not len(self._rows.t.tg_ref):  # no reference was resolved (most backends)
            return default
        return self._rows.targets(key[1]).get(key[0], default)

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        return key[0] in self._rows.targets(key[1])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        t = self._rows.t
        for k in t.np.flatnonzero(t.tg_at[1:] > t.tg_at[:-1]).tolist():
            name = t.names[k]
            for path in self._rows.targets(name):
                yield (path, name)

    def __len__(self) -> int:
        return len(self._rows.t.tg_ref)


class BaseTopLevel(Mapping[str, tuple[str, ...]]):
    def __init__(self, t: TableArrays):
        self._t = t

    def _at(self, path: str) -> int | None:
        files = self._t.files
        i = bisect_left(files, path)
        return i if i < len(files) and files[i] == path else None

    def __getitem__(self, path: str) -> tuple[str, ...]:
        i = self._at(path) if isinstance(path, str) else None
        if i is None:
            raise KeyError(path)
        lo, hi = int(self._t.tl_at[i]), int(self._t.tl_at[i + 1])
        if lo == hi:
            raise KeyError(path)
        return tuple(self._t.tl_names[lo:hi].tolist())

    def __contains__(self, path: object) -> bool:
        i = self._at(path) if isinstance(path, str) else None
        return i is not None and self._t.tl_at[i + 1] > self._t.tl_at[i]

    def __iter__(self) -> Iterator[str]:
        t = self._t
        return (f for i, f in enumerate(t.files) if t.tl_at[i + 1] > t.tl_at[i])

    def __len__(self) -> int:
        return int((self._t.tl_at[1:] > self._t.tl_at[:-1]).sum())
