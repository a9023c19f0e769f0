"""Personalized PageRank over the file graph, and the rank of each (file, identifier) pair."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

import networkx as nx

from .graph import DATA_KINDS, IMPORT_IDENT, SymbolTable

PAGERANK_TOL = 1e-8
#: How much of a file's rank its unreferenced definitions share (so they still show, in file order).
SELF_SHARE = 0.1
#: Definitions of an identifier the user mentioned rank this many times higher (on top of
#: Aider's x10 on the edges that reach them), so a mention reliably brings the symbol into view.
MENTIONED_BOOST = 10.0
PAGERANK_MAX_ITER = 200


@dataclass(frozen=True, slots=True)
class Ranking:
    file_ranks: dict[str, float]
    #: (file, identifier) pairs, best first, with their rank
    definitions: tuple[tuple[str, str, float], ...]


def path_parts(path: str) -> set[str]:
    p = PurePosixPath(path)
    parts = set(p.parts)
    parts.add(p.name)
    parts.add(p.stem)
    return parts


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


def pagerank(graph: nx.MultiDiGraph, pers: Mapping[str, float]) -> dict[str, float]:
    if graph.number_of_nodes() == 0:
        return {}
    kwargs = {}
    if pers:
        kwargs = {"personalization": dict(pers), "dangling": dict(pers)}
    try:
        ranks = nx.pagerank(graph, weight="weight", tol=PAGERANK_TOL, max_iter=PAGERANK_MAX_ITER, **kwargs)
    except nx.PowerIterationFailedConvergence:
        ranks = nx.pagerank(graph, weight="weight", tol=1e-5, max_iter=1000, **kwargs)
    return {n: float(ranks[n]) for n in sorted(ranks)}


def _stable(x: float) -> float:
    """Round away the last bits of floating-point noise so ties sort the same everywhere."""
    return float(f"{x:.12g}")


def rank_definitions(
    graph: nx.MultiDiGraph,
    table: SymbolTable,
    file_ranks: Mapping[str, float],
    mentioned_idents: frozenset[str] = frozenset(),
) -> Ranking:
    """Distribute each file's rank over its out-edges to (definer, identifier) pairs.

    Rank that arrives over an import edge is shared equally by the target's top-level
    definitions, so an imported module's API is ranked even when no name matched.
    """
    ranked: dict[tuple[str, str], float] = defaultdict(float)
    top_level: dict[str, list[str]] = defaultdict(list)
    for (path, ident), tags in table.definitions.items():
        if any(not t.scope and str(t.symbol_kind) not in DATA_KINDS for t in tags):
            top_level[path].append(ident)
    for src in sorted(graph.nodes):
        out = list(graph.out_edges(src, data=True))
        total = sum(d["weight"] for _, _, d in out)
        if total <= 0:
            continue
        src_rank = file_ranks.get(src, 0.0)
        for _, dst, data in out:
            share = src_rank * data["weight"] / total
            ident = data["ident"]
            if ident == IMPORT_IDENT:
                idents = sorted(top_level.get(dst, ()))
                for i in idents:
                    ranked[(dst, i)] += share / len(idents)
            else:
                ranked[(dst, ident)] += share
    unreferenced: dict[str, list[str]] = defaultdict(list)
    for path, ident in sorted(table.unreferenced):
        unreferenced[path].append(ident)
    for path, idents in unreferenced.items():
        weights = {i: table.kind_factor(path, i) for i in idents}
        total = sum(weights.values())
        for ident, w in weights.items():
            ranked[(path, ident)] += file_ranks.get(path, 0.0) * SELF_SHARE * w / total
    for key in ranked:
        if key[1] in mentioned_idents:
            ranked[key] *= MENTIONED_BOOST
    items = [(f, i, _stable(r)) for (f, i), r in ranked.items() if (f, i) in table.definitions]
    items.sort(key=lambda x: (-x[2], -_stable(file_ranks.get(x[0], 0.0)), x[0], x[1]))
    return Ranking({f: _stable(r) for f, r in file_ranks.items()}, tuple(items))
