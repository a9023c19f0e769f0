"""Writing the ranking state as an ``.npz`` archive (see :mod:`repomapper.snapshot`)."""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any, BinaryIO

from ..cache import CacheKey
from ..graph import SymbolTable
from ..graphstate import GraphState
from ..rank import RankedPairs
from .stored import VERSION


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
