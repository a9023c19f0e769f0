"""The ranking state kept in the cache as arrays, so that a new process updates it by the files
that changed instead of building it from every file's summary.

A process that builds the state (see :func:`repomapper.graphstate.build_state`) stores its
symbol table, the factored graph's layout, the definition index, the resolved imports, the
task-free PageRank and the definitions' ranking as numpy arrays (``allow_pickle=False``: nothing
but numbers and strings is read back), with the content key of every file it was built from
(path, content digest, backends), the files that are not mapped (resolution reads some of
them), and the chat files and mentions. A repository keeps its newest one.

A later process over the same files loads it as a :class:`~repomapper.graphstate.GraphState`
whose rows are made only when read (:mod:`repomapper.layered`): the symbol table answers a
name from its arrays, a block of the factored graph is computed again only when an update
reads it, a file's definitions are parsed only when a map shows them. The files whose content
changed since enter with their old summaries (read from the cache by their old content keys),
so :func:`~repomapper.graphstate.update_state` replaces their rows as it would in a long-lived
process. The result equals a state built from scratch (tests compare the maps byte for byte);
anything missing, foreign or unreadable builds the state again.
"""

from __future__ import annotations

import io
import logging
from collections import Counter, defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, BinaryIO

from .cache import CacheKey
from .definitions import DefinitionIndex, FileRows, RowsAt, _Arrays, _starts
from .graph import SymbolTable
from .graphstate import ByFile, GraphState, StateInputs
from .index import RepoIndex
from .layered import Layered, LayeredSet
from .model import FileSymbols, Tag
from .rank import (
    STORED,
    Coo,
    FactorBlocks,
    FactoredGraph,
    IdentBlock,
    RankedPairs,
    Ranking,
    _Assembly,
    ident_block,
    stable,
)

log = logging.getLogger(__name__)

#: the format's version, stored with the arrays; a state of another version is not read
VERSION = 4
#: a stored state is updated by at most this many changed files; more build it again (each
#: changed file's old summary is read and its rows replaced, and a state that drifted far from
#: the stored one is better built and stored again)
MAX_CHANGED = 64

#: (path, digest, backends) of a file, what its cache row is keyed by
Content = tuple[str, str, str]


# -- encoding -----------------------------------------------------------------------------------
def encode(
    state: GraphState, keys: Mapping[str, CacheKey], context: frozenset[CacheKey]
) -> memoryview:
    """The state's arrays as an ``.npz`` archive in memory (see :func:`write`)."""
    out = io.BytesIO()
    write(out, state, keys, context)
    return out.getbuffer()


def write(
    out: BinaryIO, state: GraphState, keys: Mapping[str, CacheKey], context: frozenset[CacheKey]
) -> None:
    """Write the state's arrays (an ``.npz`` archive) to ``out``, with the content keys of its
    files (``keys``, every mapped file's) and of the files that are not mapped (``context``).
    ValueError when a name holds a NUL character (the format's separator), before anything
    is written."""
    import numpy as np

    files = sorted(state.files)
    if list(state.graph.files) != files or state.definitions.files != files:
        raise ValueError("the state's graph is not over its files")
    at = {f: i for i, f in enumerate(files)}
    i32 = np.int32
    table = state.table
    arrays: dict[str, Any] = {
        "version": np.array([VERSION], dtype=np.int64),
        "files": _strings(files),
        "digests": _strings([keys[f].digest for f in files]),
        "fingerprints": _strings([keys[f].fingerprint for f in files]),
        "chat": _strings(sorted(state.boosts[0])),
        "mentioned_files": _strings(sorted(state.boosts[1])),
        "mentioned_idents": _strings(sorted(state.boosts[2])),
        "prior": np.array([state.prior.get(f, 0.0) for f in files], dtype=np.float64),
        "out_weight": np.asarray(state.graph.out_weight, dtype=np.float64),
    }
    tables, name_at = _table_arrays(table, files, at)
    arrays.update(tables)

    def name_ids(values) -> Any:  # identifiers as positions among the table's names
        return np.fromiter((name_at[v] for v in values), i32)

    ctx = sorted(k.content for k in context)
    arrays["context"] = _strings([part for c in ctx for part in c])
    # the factored graph's layout
    a = state.blocks._assembly(tuple(files), state.definitions)
    arrays["order"] = name_ids(a.order)
    arrays["counts"] = np.asarray(a.counts, dtype=np.int64)
    for name in ("r_rows", "r_cols", "d_rows", "d_cols", "d_local"):
        arrays[name] = np.asarray(getattr(a, name), dtype=i32)
    arrays["r_vals"] = np.asarray(a.r_vals, dtype=np.float64)
    arrays["d_vals"] = np.asarray(a.d_vals, dtype=np.float64)
    g = state.graph
    arrays["i_rows"] = np.asarray(g.I.rows, dtype=i32)
    arrays["i_cols"] = np.asarray(g.I.cols, dtype=i32)
    arrays["i_vals"] = np.asarray(g.I.vals, dtype=np.float64)
    # resolved imports
    importers = sorted(state.imports)
    edges = [sorted(state.imports[p].items()) for p in importers]
    arrays["imp_file"] = np.fromiter((at[p] for p in importers), i32, len(importers))
    arrays["imp_counts"] = np.array([len(e) for e in edges], dtype=np.int64)
    try:
        targets = [at[t] for e in edges for t, _ in e]
    except KeyError as exc:
        raise ValueError(f"an import resolves to a file that is not mapped: {exc}") from exc
    arrays["imp_target"] = np.array(targets, dtype=i32)
    arrays["imp_n"] = np.array([c for e in edges for _, c in e], dtype=np.int64)
    # the definitions' ranking
    pair_files, pair_idents, pair_ranks = _columns(state.ranking.definitions)
    arrays["pair_file"] = np.fromiter((at[f] for f in pair_files), i32, len(pair_files))
    arrays["pair_ident"] = name_ids(pair_idents)
    arrays["pair_rank"] = np.array(pair_ranks, dtype=np.float64)
    # the definition index
    d = state.definitions.arrays
    arrays["di_counts"] = np.diff(d.offsets)
    arrays["di_tops"] = np.diff(d.top_offsets)
    arrays["di_idents"] = name_ids(d.idents)
    arrays["di_kind"] = np.asarray(d.kind, dtype=np.float64)
    arrays["di_unref"] = np.asarray(d.unreferenced, dtype=bool)
    arrays["di_top_ids"] = np.asarray(d.top_ids, dtype=np.int64)
    np.savez(out, **arrays)


def _table_arrays(
    table: SymbolTable, files: list[str], at: Mapping[str, int]
) -> tuple[dict[str, Any], dict[str, int]]:
    """The symbol table as rows per name (names sorted; each name's files in path order, which
    is their index order), gathered in one pass per field and ordered by numpy."""
    import numpy as np

    targets: dict[str, list[tuple[str, set[str]]]] = defaultdict(list)
    for (path, name), found in table.targets.items():
        if found:
            targets[name].append((path, found))
    names = sorted(set(table.defines) | set(table.references) | set(targets))
    k = {name: i for i, name in enumerate(names)}
    m = len(names)

    def grouped(name_of: list[int], file_of: list[int], *columns: list) -> tuple[Any, ...]:
        n_ = np.array(name_of, dtype=np.int64)
        f_ = np.array(file_of, dtype=np.int64)
        order = np.lexsort((f_, n_))
        counts = np.bincount(n_, minlength=m) if len(n_) else np.zeros(m, dtype=np.int64)
        return (counts, f_[order].astype(np.int32), *(np.asarray(c)[order] for c in columns))

    d_name, d_file, d_data, d_unref = [], [], [], []
    data_only, unreferenced = table.data_only, table.unreferenced
    for name, definers in table.defines.items():
        i = k[name]
        for f in definers:
            d_name.append(i)
            d_file.append(at[f])
            d_data.append((f, name) in data_only)
            d_unref.append((f, name) in unreferenced)
    def_n, def_file, def_data, def_unref = grouped(
        d_name, d_file, np.array(d_data, dtype=bool), np.array(d_unref, dtype=bool)
    )
    r_name, r_file, r_count = [], [], []
    for name, refs in table.references.items():
        i = k[name]
        r_name.extend([i] * len(refs))
        r_file.extend(at[f] for f in refs)
        r_count.extend(refs.values())
    ref_n, ref_file, ref_count = grouped(r_name, r_file, np.array(r_count, dtype=np.int64))
    tg_n, tg_ref, tg_count, tg_files = [0] * m, [], [], []
    for name in sorted(targets):  # fewer names have resolved targets: sorted in Python
        entries = sorted(targets[name], key=lambda e: e[0])
        tg_n[k[name]] = len(entries)
        for f, found in entries:
            tg_ref.append(at[f])
            tg_count.append(len(found))
            tg_files.extend(sorted(found))
    tops = [table.top_level.get(f, ()) for f in files]
    ints = np.int64
    return {
        "names": _strings(names),
        "tl_names": np.fromiter((k[n] for t in tops for n in t), np.int32),
        "def_n": def_n.astype(ints),
        "def_file": def_file,
        "def_data": def_data,
        "def_unref": def_unref,
        "ref_n": ref_n.astype(ints),
        "ref_file": ref_file,
        "ref_count": ref_count,
        "tg_n": np.array(tg_n, dtype=ints),
        "tg_ref": np.array(tg_ref, dtype=np.int32),
        "tg_count": np.array(tg_count, dtype=ints),
        "tg_files": _strings(tg_files),
        "tl_n": np.array([len(t) for t in tops], dtype=ints),
    }, k


def _columns(pairs) -> tuple[list[str], list[str], list[float]]:
    if isinstance(pairs, RankedPairs):
        return pairs.columns()
    return [f for f, _, _ in pairs], [i for _, i, _ in pairs], [r for _, _, r in pairs]


def _strings(values: Sequence[str]) -> Any:
    """Strings as one UTF-8 byte array, NUL-separated (a fixed-width string array would take
    four bytes per character of the longest name, for every name)."""
    import numpy as np

    joined = "\0".join(values)
    if joined.count("\0") != max(len(values) - 1, 0):
        raise ValueError("a name holds a NUL character")
    data = joined.encode("utf-8", "surrogateescape")
    return np.frombuffer(data, dtype=np.uint8) if values else np.zeros(0, dtype=np.uint8)


def _unstrings(array: Any, count: int | None = None) -> list[str]:
    if array.dtype != "uint8" or array.ndim != 1:
        raise ValueError("strings are a byte array")
    out = array.tobytes().decode("utf-8", "surrogateescape").split("\0") if len(array) else []
    if count is not None and len(out) != count:
        raise ValueError("a string array does not match its counts")
    return out


# -- loading ------------------------------------------------------------------------------------
class Stored:
    """A stored state's arrays, checked for shape, before it is matched against the files."""

    def __init__(self, a: Mapping[str, Any]):
        import numpy as np

        self.a = a
        if a["version"].shape != (1,) or int(a["version"][0]) != VERSION:
            raise ValueError("a stored state of another version")
        self.files = _unstrings(a["files"])
        n = len(self.files)
        self.digests = _unstrings(a["digests"], n)
        self.fingerprints = _unstrings(a["fingerprints"], n)
        ctx = _unstrings(a["context"])
        if len(ctx) % 3:
            raise ValueError("context keys are triples")
        self.context = frozenset((ctx[i], ctx[i + 1], ctx[i + 2]) for i in range(0, len(ctx), 3))
        self.boosts = tuple(
            frozenset(_unstrings(a[k])) for k in ("chat", "mentioned_files", "mentioned_idents")
        )
        for k in ("prior", "out_weight", "di_counts", "di_tops", "tl_n"):
            if a[k].shape != (n,):
                raise ValueError(f"{k} does not match the file list")
        self.names = _unstrings(a["names"])
        m = len(self.names)
        for k in ("def_n", "ref_n", "tg_n"):
            if a[k].shape != (m,):
                raise ValueError(f"{k} does not match the names")
        self.def_at = _starts(a["def_n"])
        self.ref_at = _starts(a["ref_n"])
        self.tg_at = _starts(a["tg_n"])
        self.tg_files_at = _starts(a["tg_count"])
        self.tl_at = _starts(a["tl_n"])
        self.name_objects = _objects(self.names)
        self.tl_names = self.named(a["tl_names"], int(self.tl_at[-1]))
        self.tg_files = _unstrings(a["tg_files"], int(self.tg_files_at[-1]))
        checks = (
            ("def_file", "def_at", ("def_data", "def_unref")),
            ("ref_file", "ref_at", ("ref_count",)),
            ("tg_ref", "tg_at", ("tg_count",)),
        )
        for index, starts, parallel in checks:
            total = int(getattr(self, starts)[-1])
            for k in (index, *parallel):
                if a[k].shape != (total,):
                    raise ValueError(f"{k} does not match its counts")
            if total and (int(a[index].min()) < 0 or int(a[index].max()) >= n):
                raise ValueError(f"{index} names a file that is not mapped")
        self.def_file, self.ref_file, self.tg_ref = a["def_file"], a["ref_file"], a["tg_ref"]
        self.name_at = {name: i for i, name in enumerate(self.names)}
        self.np = np

    def named(self, ids: Any, count: int | None = None) -> Any:
        """The names at positions ``ids`` (an object array sharing the names' strings)."""
        if ids.dtype.kind != "i" or ids.ndim != 1 or (count is not None and len(ids) != count):
            raise ValueError("name positions do not match their counts")
        if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(self.names)):
            raise ValueError("a name position is out of the names")
        return self.name_objects[ids]

    def content(self, i: int) -> Content:
        return (self.files[i], self.digests[i], self.fingerprints[i])


def decode(data: bytes | memoryview | BinaryIO) -> Stored | None:
    """The stored state's arrays (bytes, or a binary file read from where it is), or None when
    they cannot be read."""
    import numpy as np

    try:
        if isinstance(data, bytes | memoryview):
            data = io.BytesIO(data)
        elif not hasattr(data, "read") or not hasattr(data, "seek"):
            raise TypeError("a stored state is bytes or a binary file")
        with np.load(data, allow_pickle=False) as z:
            return Stored({k: z[k] for k in z.files})
    except Exception as exc:  # a damaged or foreign row is a miss, never a failure
        log.debug("stored state unreadable: %s", exc)
        return None


def changed_files(stored: Stored, keys: Mapping[str, CacheKey]) -> list[str] | None:
    """The mapped files whose content or backends differ from the stored state's, or None
    when the file set itself differs (the state is built again)."""
    if len(keys) != len(stored.files) or any(f not in keys for f in stored.files):
        return None
    return [
        f
        for i, f in enumerate(stored.files)
        if (keys[f].digest, keys[f].fingerprint) != (stored.digests[i], stored.fingerprints[i])
    ]


def load(
    stored: Stored,
    mapped: Mapping[str, FileSymbols],
    old: Mapping[str, FileSymbols],
    inputs: StateInputs,
    context: frozenset[CacheKey],
) -> GraphState | None:
    """The stored state over ``mapped`` (the current summaries), the changed files entering with
    their ``old`` summaries, so that :func:`~repomapper.graphstate.update_state` with
    ``mapped`` replaces their rows. None when it was stored for other files that are not mapped
    (resolution reads them) or its arrays do not hold together."""
    if frozenset(k.content for k in context) != stored.context:
        return None
    try:
        return _state(stored, mapped, old, inputs)
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        log.debug("stored state unusable: %s", exc)
        return None


def _state(
    s: Stored,
    mapped: Mapping[str, FileSymbols],
    old: Mapping[str, FileSymbols],
    inputs: StateInputs,
) -> GraphState:
    np = s.np
    a = s.a
    files = s.files
    n = len(files)
    summaries = {f: old.get(f) or mapped[f] for f in files}
    chat, mentioned_f, mentioned_i = s.boosts
    table = _table(s, summaries)
    # the definition index
    counts, tops = a["di_counts"].astype(np.int64), a["di_tops"].astype(np.int64)
    offsets, top_offsets = _starts(counts), _starts(tops)
    di_idents = s.named(a["di_idents"], int(offsets[-1]))
    kind, unref = a["di_kind"], a["di_unref"]
    top_ids = a["di_top_ids"].astype(np.int64)
    if kind.shape != di_idents.shape or unref.shape != di_idents.shape:
        raise ValueError("definition arrays differ in length")
    if top_ids.shape != (int(top_offsets[-1]),):
        raise ValueError("top-level pairs do not match their counts")
    if len(top_ids):  # each file's top-level pairs lie among its own pairs
        owner = np.repeat(np.arange(n), tops)
        if bool(((top_ids < offsets[owner]) | (top_ids >= offsets[owner + 1])).any()):
            raise ValueError("a top-level pair is not among its file's pairs")
    rows = Layered(_BaseFileRows(files, offsets, top_offsets, di_idents, kind, unref, top_ids))
    definitions = DefinitionIndex(files, rows)
    top_file = np.repeat(np.arange(n), tops)
    definitions.__dict__["arrays"] = _Arrays(
        RowsAt(definitions.files, rows),
        offsets,
        top_offsets,
        np.repeat(np.arange(n), counts),
        di_idents,
        _objects(files),
        kind,
        unref,
        top_ids,
        top_file,
        tops[top_file].astype(np.float64),
    )
    # the factored graph's layout and its blocks, made again only when read
    order = s.named(a["order"]).tolist()
    block_counts = a["counts"].astype(np.int64)
    if block_counts.shape != (len(order), 3):
        raise ValueError("block counts do not match the identifiers")
    columns = _objects(order)[np.repeat(np.arange(len(order)), block_counts[:, 1])].tolist()
    assembly = _Assembly(
        tuple(files),
        order,
        {ident: i for i, ident in enumerate(order)},
        block_counts,
        *(_indices(a[k]) for k in ("r_rows", "r_cols")),
        a["r_vals"],
        *(_indices(a[k]) for k in ("d_rows", "d_cols")),
        a["d_vals"],
        _indices(a["d_local"]),
        columns,
    )
    totals = block_counts.sum(axis=0)
    if (assembly.r_rows.shape, assembly.d_rows.shape) != ((totals[0],), (totals[2],)):
        raise ValueError("the layout's arrays do not match its counts")
    blocks = FactorBlocks(
        chat, mentioned_i, Layered(_BaseBlocks(table, assembly, chat, mentioned_i))
    )
    blocks._memo["assembly"] = assembly
    k = len(columns)
    R = Coo(assembly.r_rows, assembly.r_cols, assembly.r_vals, (n, k))
    D = Coo(assembly.d_rows, assembly.d_cols, assembly.d_vals, (k, n))
    I = Coo(  # noqa: E741
        _indices(a["i_rows"]), _indices(a["i_cols"]), a["i_vals"], (n, n)
    )
    for m in (R, D, I):
        if not (len(m.rows) == len(m.cols) == len(m.vals)):
            raise ValueError("a matrix's arrays differ in length")
        if len(m.rows) and not (
            0 <= int(m.rows.min()) <= int(m.rows.max()) < m.shape[0]
            and 0 <= int(m.cols.min()) <= int(m.cols.max()) < m.shape[1]
        ):
            raise ValueError("a matrix entry is out of its shape")
    if assembly.d_local.shape != assembly.d_rows.shape:
        raise ValueError("D's positions do not match its entries")
    if len(assembly.d_local):  # each D entry's definition pair lies in its definer's pairs
        pair = offsets[assembly.d_cols] + assembly.d_local
        if bool((assembly.d_local < 0).any() or (pair >= offsets[assembly.d_cols + 1]).any()):
            raise ValueError("a D entry's definition is not among its definer's")
    graph = FactoredGraph(
        list(files),
        columns,
        R,
        D,
        I,
        a["out_weight"],
        definitions,
        (assembly.d_rows, assembly.d_cols, assembly.d_vals, assembly.d_local),
    )
    # resolved imports, made into objects per importer when read; each importer's entries of I
    # are kept for the next layout while no update replaces its imports
    imp_file, imp_counts = a["imp_file"], a["imp_counts"].astype(np.int64)
    imp_target, imp_n = a["imp_target"], a["imp_n"]
    imp_at = _starts(imp_counts)
    if imp_file.shape != imp_counts.shape or imp_target.shape != imp_n.shape:
        raise ValueError("import arrays differ in length")
    if imp_target.shape != (int(imp_at[-1]),):
        raise ValueError("import targets do not match their counts")
    for arr in (imp_file, imp_target):
        if len(arr) and (int(arr.min()) < 0 or int(arr.max()) >= n):
            raise ValueError("an import names a file that is not mapped")
    importers = [files[i] for i in imp_file.tolist()]
    if importers != sorted(set(importers)):
        raise ValueError("importers are not sorted")
    imports = Layered(_BaseImports(files, importers, imp_at, imp_target, imp_n))
    i_rows = I.rows
    if len(i_rows) > 1 and bool((i_rows[1:] < i_rows[:-1]).any()):
        raise ValueError("import entries are not in importer order")
    los = np.searchsorted(i_rows, imp_file, "left").tolist()
    his = np.searchsorted(i_rows, imp_file, "right").tolist()
    if sum(h - lo for lo, h in zip(los, his, strict=True)) != len(i_rows):
        raise ValueError("import entries of a file that imports nothing")
    for importer, lo, hi in zip(importers, los, his, strict=True):
        assembly.import_rows[importer] = (STORED, importer in chat, lo, hi)
    assembly.import_base = (I.rows, I.cols, I.vals)
    # the task-free ranking
    prior = dict(zip(files, a["prior"].tolist(), strict=True))
    idents = s.named(a["pair_ident"]).tolist()
    if len(idents) != len(a["pair_file"]) or len(idents) != len(a["pair_rank"]):
        raise ValueError("pair arrays differ in length")
    names = _objects(files)
    pairs = RankedPairs(names[a["pair_file"]].tolist(), idents, a["pair_rank"].tolist())
    ranking = Ranking({f: stable(r) for f, r in prior.items()}, pairs)
    return GraphState(
        summaries,
        s.boosts,  # type: ignore[arg-type]
        RepoIndex(inputs.root, files),
        table,
        imports,
        blocks,
        definitions,
        graph,
        prior,
        ranking,
        ByFile(ranking),
        "stored",
        inputs.context,
    )


def _indices(array: Any) -> Any:
    """An index array as stored (32 bits: half the memory of a copy to 64; numpy indexes and
    counts with either, and a spliced layout joins them into 64 bits)."""
    if array.dtype.kind != "i" or array.ndim != 1:
        raise ValueError("an index array is not one-dimensional integers")
    return array


def _objects(values: Sequence[str]) -> Any:
    import numpy as np

    out = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _table(s: Stored, files: Mapping[str, FileSymbols]) -> SymbolTable:
    """The stored symbol table, each field answering from the arrays and kept in a layer an
    update copies in O(changes)."""
    rows = _NameRows(s)
    defines = _BaseDefines(rows)
    table = SymbolTable()
    table.defines = Layered(defines)  # type: ignore[assignment]
    table.references = Layered(_BaseReferences(rows))  # type: ignore[assignment]
    table.definitions = Layered(DefinitionsByName(files, defines))  # type: ignore[assignment]
    table.targets = Layered(_BaseTargets(rows))  # type: ignore[assignment]
    table.unreferenced = LayeredSet(rows.unreferenced)  # type: ignore[assignment]
    table.data_only = LayeredSet(rows.data_only)  # type: ignore[assignment]
    table.top_level = Layered(_BaseTopLevel(s))  # type: ignore[assignment]
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
            k = s.name_at.get(name)
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
            k = s.name_at.get(name)
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
            k = s.name_at.get(name)
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
        found = self.get(name)
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
        k = s.name_at.get(name) if isinstance(name, str) else None
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


class _BaseImports(Mapping[str, Counter[str]]):
    """importer -> {imported file: count}, each made when first read."""

    def __init__(self, files, importers, starts, targets, counts):
        self._files, self._starts = files, starts
        self._targets, self._counts = targets, counts
        self._at = {p: i for i, p in enumerate(importers)}
        self._made: dict[str, Counter[str]] = {}

    def __getitem__(self, importer: str) -> Counter[str]:
        found = self._made.get(importer)
        if found is None:
            j = self._at[importer]
            lo, hi = int(self._starts[j]), int(self._starts[j + 1])
            names = [self._files[t] for t in self._targets[lo:hi].tolist()]
            found = Counter(dict(zip(names, self._counts[lo:hi].tolist(), strict=True)))
            self._made[importer] = found
        return found

    def __contains__(self, importer: object) -> bool:
        return importer in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


class DefinitionsByName(Mapping[tuple[str, str], list[Tag]]):
    """(file, name) -> that file's definitions of the name, in file order, grouped per file on
    first use (a file's definitions are parsed when first read)."""

    def __init__(self, files: Mapping[str, FileSymbols], defines: Mapping[str, frozenset[str]]):
        self._files, self._defines = files, defines
        self._grouped: dict[str, dict[str, list[Tag]]] = {}

    def __getitem__(self, key: tuple[str, str]) -> list[Tag]:
        if key not in self:
            raise KeyError(key)
        path, name = key
        groups = self._grouped.get(path)
        if groups is None:
            groups = self._grouped[path] = defaultdict(list)
            for tag in self._files[path].definitions:
                groups[tag.name].append(tag)
        return groups[name]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        path, name = key
        return name in self._defines and path in self._defines[name]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(sorted((p, n) for n in self._defines for p in self._defines[n]))

    def __len__(self) -> int:
        return sum(len(self._defines[n]) for n in self._defines)


class _BaseFileRows(Mapping[str, FileRows]):
    """Per file, its row of the stored definition index, made on first read."""

    def __init__(self, files, offsets, top_offsets, idents, kind, unref, top_ids):
        self._at = {f: i for i, f in enumerate(files)}
        self._offsets, self._top_offsets = offsets, top_offsets
        self._idents, self._kind, self._unref, self._top_ids = idents, kind, unref, top_ids
        self._made: dict[str, FileRows] = {}

    def __getitem__(self, path: str) -> FileRows:
        found = self._made.get(path)
        if found is None:
            i = self._at[path]
            lo, hi = int(self._offsets[i]), int(self._offsets[i + 1])
            tlo, thi = int(self._top_offsets[i]), int(self._top_offsets[i + 1])
            names = tuple(self._idents[lo:hi].tolist())
            found = self._made[path] = FileRows(
                names,
                tuple(self._kind[lo:hi].tolist()),
                tuple(t - lo for t in self._top_ids[tlo:thi].tolist()),
                tuple(self._unref[lo:hi].tolist()),
                {name: j for j, name in enumerate(names)},
            )
        return found

    def __contains__(self, path: object) -> bool:
        return path in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


class _BaseBlocks(Mapping[str, IdentBlock]):
    """The stored layout's identifiers; a block is computed from the stored table when read
    (only an update that touched the identifier, or laying out a new file set, reads one)."""

    def __init__(self, table: SymbolTable, assembly: _Assembly, chat, mentioned):
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
