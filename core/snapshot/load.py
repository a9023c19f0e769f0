"""A stored state loaded as a :class:`~repomapper.graphstate.GraphState` whose rows are made
when read (see :mod:`repomapper.snapshot`)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from typing import Any

from ..cache import CacheKey
from ..definitions import DefinitionIndex, _names, _starts
from ..graphstate import GraphState, Rankings, StateInputs
from ..importrows import ImportRows
from ..index import RepoIndex
from ..joinedstrings import InternedNames
from ..layered import Layered
from ..model import FileSymbols
from ..rank import (
    STORED,
    Coo,
    FactorBlocks,
    FactoredGraph,
    PairScores,
    RankedPairs,
    Ranking,
    _Assembly,
)
from ..summaryview import with_summaries
from ..tablearrays import NamesAt, table_of
from .stored import Stored, _indices

log = logging.getLogger(__name__)


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
    a, files = s.a, s.files
    summaries = with_summaries(mapped, old, files)
    chat, _, mentioned_i = s.boosts
    table = table_of(s.table, summaries)
    # the names by id, as the layout and the definition index read them (and an update
    # splices them: see InternedNames)
    names = InternedNames(s.table.name_column)
    definitions, offsets = _definition_index(s, names)
    assembly, graph = _layout(s, names, definitions, offsets)
    blocks = FactorBlocks.over(table, assembly, chat, mentioned_i)
    imports = _imports(s, assembly, graph.I, chat)
    # the task-free ranking
    prior = dict(zip(files, a["prior"].tolist(), strict=True))
    ids, at = s.table.checked_ids(a["pair_ident"]), a["pair_file"]
    if len(ids) != len(at) or len(ids) != len(a["pair_rank"]):
        raise ValueError("pair arrays differ in length")
    if len(at) and (int(at.min()) < 0 or int(at.max()) >= len(files)):
        raise ValueError("a ranked pair names a file that is not mapped")
    pairs = RankedPairs(_names(files), at, names, ids, a["pair_rank"])
    file_scores = dict(zip(files, a["prior_stable"].tolist(), strict=True))
    ranking = Ranking(file_scores, pairs, _pair_scores(s, definitions, file_scores))
    rankings = Rankings(values=(graph, prior, ranking))
    roles = a.get("role_weights")
    if roles is not None:  # (a file of weight 1 is code: left out, as role_weights leaves it)
        rankings.weights = {f: w for f, w in zip(files, roles.tolist(), strict=True) if w != 1.0}
    s.give_back()  # (every array is checked: the state reads again only what it uses)
    return GraphState(
        files=summaries,
        boosts=s.boosts,
        index=RepoIndex(inputs.root, files),
        table=table,
        imports=imports,
        blocks=blocks,
        definitions=definitions,
        rankings=rankings,
        how="stored",
        context=inputs.context,
    )


def _pair_scores(
    s: Stored, definitions: DefinitionIndex, file_scores: dict[str, float]
) -> PairScores | None:
    """The stored pairs' ranks as :func:`~repomapper.rank.rank_definitions` left them (with
    the file ranks they came from), when the state holds them: checked by :class:`Stored`."""
    np, a = s.np, s.a
    raw, received = a.get("pair_raw"), a.get("pair_received")
    if raw is None or received is None:
        return None
    by_file = np.array([file_scores.get(f, 0.0) for f in s.files], dtype=np.float64)
    x = np.asarray(a["prior"], dtype=np.float64)
    return PairScores(definitions.arrays, raw, received, x, file_scores, by_file)


def _definition_index(s: Stored, names: InternedNames) -> tuple[DefinitionIndex, Any]:
    """The stored definition index, its arrays as stored and each file's row made when read;
    with the offsets of each file's pairs."""
    np, a = s.np, s.a
    counts = a["di_counts"].astype(np.int64)
    ids = a["di_idents"]
    definitions = DefinitionIndex.of_columns(
        s.files,
        counts,
        a["di_tops"],
        NamesAt(s.table.checked_ids(ids, int(counts.sum())), names),
        a["di_kind"],
        a["di_unref"],
        a["di_top_ids"].astype(np.int64),
        ids,
    )
    return definitions, definitions.arrays.offsets


def _layout(
    s: Stored, names: InternedNames, definitions: DefinitionIndex, offsets: Any
) -> tuple[_Assembly, FactoredGraph]:
    """The factored graph's stored layout (its blocks are made again only when read) and the
    graph over it, every index checked against the shapes it indexes."""
    np, a, files = s.np, s.a, s.files
    n = len(files)
    order_ids = s.table.checked_ids(a["order"])
    order = NamesAt(order_ids, names)  # (each name made when read: an update reads a few)
    if len(order) > 1 and bool((order_ids[1:] <= order_ids[:-1]).any()):
        raise ValueError("the layout's identifiers are not sorted")
    block_counts = a["counts"].astype(np.int64)
    if block_counts.shape != (len(order), 3):
        raise ValueError("block counts do not match the identifiers")
    columns = NamesAt(np.repeat(order_ids, block_counts[:, 1]), names)
    assembly = _Assembly(
        tuple(files),
        order,
        block_counts,
        _indices(a["r_rows"]),
        _indices(a["r_cols"]),
        a["r_vals"],
        _indices(a["d_rows"]),
        _indices(a["d_cols"]),
        a["d_vals"],
        _indices(a["d_local"]),
        columns,
        order_ids=a["order"],
    )
    totals = block_counts.sum(axis=0)
    if (assembly.r_rows.shape, assembly.d_rows.shape) != ((totals[0],), (totals[2],)):
        raise ValueError("the layout's arrays do not match its counts")
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
    return assembly, graph


def _imports(  # noqa: N803
    s: Stored,
    assembly: _Assembly,
    I: Coo,  # noqa: E741
    chat: frozenset[str],
) -> Layered[str, Counter[str]]:
    """The resolved imports, made into objects per importer when read; each importer's entries
    of ``I`` are kept in ``assembly`` for the next layout while no update replaces its imports."""
    np, a, files = s.np, s.a, s.files
    imp_file, imp_counts = a["imp_file"], a["imp_counts"].astype(np.int64)
    if imp_file.shape != imp_counts.shape:
        raise ValueError("import arrays differ in length")
    rows = ImportRows(files, imp_file, _starts(imp_counts), a["imp_target"], a["imp_n"])
    i_rows = I.rows
    if len(i_rows) > 1 and bool((i_rows[1:] < i_rows[:-1]).any()):
        raise ValueError("import entries are not in importer order")
    los = np.searchsorted(i_rows, imp_file, "left").tolist()
    his = np.searchsorted(i_rows, imp_file, "right").tolist()
    if sum(h - lo for lo, h in zip(los, his, strict=True)) != len(i_rows):
        raise ValueError("import entries of a file that imports nothing")
    for importer, lo, hi in zip(rows, los, his, strict=True):
        assembly.import_rows[importer] = (STORED, importer in chat, lo, hi)
    assembly.import_base = (I.rows, I.cols, I.vals)
    assembly.import_of, assembly.import_chat = rows, chat
    return Layered(rows)
