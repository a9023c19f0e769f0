"""Personalized PageRank over the file graph, and the rank of each (file, identifier) pair.

The graph of :func:`repomapper.graph.build_graph` has an edge for every pair (referencing file,
defining file) of every shared identifier: on a large repository that is hundreds of thousands of
edges. Its weight matrix factors through identifiers, though: ``M = R @ D + I`` where ``R[file,
ident]`` is the weight of a file's references to an identifier (Aider's multipliers, the chat
boost, the square root of the count), ``D[ident, file]`` says which files define it (x0.1 for
data), and ``I`` holds import edges. Power iteration then costs two sparse products per step,
linear in the number of tags, and gives exactly what ``networkx.pagerank`` gives on the explicit
graph (a test holds the two together).
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .graph import DATA_KINDS, SymbolTable, import_weights, reference_weights

log = logging.getLogger(__name__)

ALPHA = 0.85
PAGERANK_TOL = 1e-8
PAGERANK_MAX_ITER = 200
#: How much of a file's rank its unreferenced definitions share (so they still show, in file order).
SELF_SHARE = 0.1
#: Definitions of an identifier the user mentioned rank this many times higher (on top of
#: Aider's x10 on the edges that reach them), so a mention reliably brings the symbol into view.
MENTIONED_BOOST = 10.0


@dataclass(frozen=True, slots=True)
class Ranking:
    file_ranks: dict[str, float]
    #: (file, identifier) pairs, best first, with their rank
    definitions: tuple[tuple[str, str, float], ...]


def path_parts(path: str) -> set[str]:
    """The parts of a path a mentioned identifier can name: the file's name and stem.

    Aider also matches directory names; we do not, because a package's name appears in nearly
    every task about it and would personalize every file of the package alike, drowning the file
    the task actually names (measured in docs/localization.md).
    """
    p = PurePosixPath(path)
    return {p.name, p.stem}


def personalization(
    files: Iterable[str],
    chat_files: frozenset[str],
    mentioned_fnames: frozenset[str],
    mentioned_idents: frozenset[str],
) -> dict[str, float]:
    """Aider's scheme: 100/N for a chat file, a mentioned file, a path part matching an ident."""
    files = sorted(set(files))
    if not files:
        return {}
    base = 100.0 / len(files)
    scores: dict[str, float] = {}
    for f in files:
        score = 0.0
        if f in chat_files:
            score += base
        if f in mentioned_fnames:
            score = max(score, base)
        if mentioned_idents and path_parts(f) & mentioned_idents:
            score += base
        if score > 0:
            scores[f] = score
    return scores


def stable(x: float) -> float:
    """Round away the last bits of floating-point noise so ties sort the same everywhere."""
    return float(f"{x:.12g}")


@dataclass
class FactoredGraph:  # numpy and scipy are imported lazily: a replayed map needs neither
    """The weight matrix ``R @ D + I`` and what is needed to read ranks back per identifier."""

    files: list[str]
    columns: list[str]  # the identifier of each column of R / row of D
    R: Any  # scipy.sparse.csr_array, files x columns
    D: Any  # columns x files
    I: Any  # noqa: E741 - files x files: import edges
    out_weight: Any  # numpy array: total out-weight per file


def factor_graph(
    files: Iterable[str],
    table: SymbolTable,
    import_edges: Mapping[str, Mapping[str, int]],
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> FactoredGraph:
    import numpy as np
    from scipy import sparse

    names = sorted(set(files))
    idx = {f: i for i, f in enumerate(names)}
    columns: list[str] = []
    col_of: dict[tuple[str, tuple[str, ...]], int] = {}
    r_rows: list[int] = []
    r_cols: list[int] = []
    r_vals: list[float] = []
    d_rows: list[int] = []
    d_cols: list[int] = []
    d_vals: list[float] = []
    for ident, referencer, chosen, weight in reference_weights(table, chat_files, mentioned_idents):
        row = idx.get(referencer)
        if row is None:
            continue
        definers = tuple(d for d in chosen if d in idx)
        if not definers:
            continue
        key = (ident, definers)
        col = col_of.get(key)
        if col is None:
            col = col_of[key] = len(columns)
            columns.append(ident)
            for d in definers:
                d_rows.append(col)
                d_cols.append(idx[d])
                d_vals.append(table.kind_factor(d, ident))
        r_rows.append(row)
        r_cols.append(col)
        r_vals.append(weight)
    n, k = len(names), len(columns)
    R = sparse.csr_array((r_vals, (r_rows, r_cols)), shape=(n, k), dtype=np.float64)
    D = sparse.csr_array((d_vals, (d_rows, d_cols)), shape=(k, n), dtype=np.float64)
    i_rows, i_cols, i_vals = [], [], []
    for importer, target, weight in import_weights(import_edges, chat_files):
        if importer in idx and target in idx:
            i_rows.append(idx[importer])
            i_cols.append(idx[target])
            i_vals.append(weight)
    I = sparse.csr_array((i_vals, (i_rows, i_cols)), shape=(n, n), dtype=np.float64)  # noqa: E741
    out_weight = R @ D.sum(axis=1) + I.sum(axis=1) if n else np.zeros(0)
    return FactoredGraph(names, columns, R, D, I, np.asarray(out_weight, dtype=np.float64))


def pagerank(g: FactoredGraph, pers: Mapping[str, float]) -> dict[str, float]:
    """networkx's power iteration (same personalization, dangling and stopping rules) on the
    factored matrix."""
    import numpy as np

    n = len(g.files)
    if n == 0:
        return {}
    if pers:
        p = np.array([float(pers.get(f, 0.0)) for f in g.files])
        p /= p.sum()
    else:
        p = np.full(n, 1.0 / n)
    dangling = g.out_weight <= 0
    inv = np.divide(1.0, g.out_weight, out=np.zeros(n), where=~dangling)
    Rt, Dt, It = g.R.T.tocsr(), g.D.T.tocsr(), g.I.T.tocsr()
    x = np.full(n, 1.0 / n)
    for _ in range(PAGERANK_MAX_ITER):
        last = x
        w = x * inv
        flow = Dt @ (Rt @ w) + It @ w
        x = ALPHA * (flow + x[dangling].sum() * p) + (1 - ALPHA) * p
        if np.abs(x - last).sum() < n * PAGERANK_TOL:
            break
    else:
        log.debug(
            "PageRank did not converge in %d iterations; using the last iterate", PAGERANK_MAX_ITER
        )
    return {f: float(v) for f, v in zip(g.files, x, strict=True)}


def rank_definitions(
    g: FactoredGraph,
    table: SymbolTable,
    file_ranks: Mapping[str, float],
    mentioned_idents: frozenset[str] = frozenset(),
) -> Ranking:
    """Distribute each file's rank over its out-edges to (definer, identifier) pairs.

    Rank that arrives over an import edge is shared equally by the target's top-level classes and
    functions, so an imported module's API is ranked even when no name matched. Unreferenced
    definitions share a tenth of their file's rank.
    """
    import numpy as np

    n = len(g.files)
    ranked: dict[tuple[str, str], float] = defaultdict(float)
    if n:
        x = np.array([file_ranks.get(f, 0.0) for f in g.files])
        w = np.divide(x, g.out_weight, out=np.zeros(n), where=g.out_weight > 0)
        per_column = g.R.T @ w
        D = g.D.tocoo()
        for col, dst, factor in zip(D.row.tolist(), D.col.tolist(), D.data.tolist(), strict=True):
            ranked[(g.files[dst], g.columns[col])] += per_column[col] * factor
        top_level: dict[str, list[str]] = defaultdict(list)
        for (path, ident), tags in table.definitions.items():
            if any(not t.scope and str(t.symbol_kind) not in DATA_KINDS for t in tags):
                top_level[path].append(ident)
        imported = g.I.T @ w
        for i in np.flatnonzero(imported).tolist():
            idents = sorted(top_level.get(g.files[i], ()))
            for ident in idents:
                ranked[(g.files[i], ident)] += imported[i] / len(idents)
    unreferenced: dict[str, list[str]] = defaultdict(list)
    for path, ident in sorted(table.unreferenced):
        unreferenced[path].append(ident)
    for path, idents in unreferenced.items():
        weights = {i: table.kind_factor(path, i) for i in idents}
        total = sum(weights.values())
        for ident, wt in weights.items():
            ranked[(path, ident)] += file_ranks.get(path, 0.0) * SELF_SHARE * wt / total
    for key in ranked:
        if key[1] in mentioned_idents:
            ranked[key] *= MENTIONED_BOOST
    items = [(f, i, stable(r)) for (f, i), r in ranked.items() if (f, i) in table.definitions]
    items.sort(key=lambda x: (-x[2], -stable(file_ranks.get(x[0], 0.0)), x[0], x[1]))
    return Ranking({f: stable(r) for f, r in file_ranks.items()}, tuple(items))
