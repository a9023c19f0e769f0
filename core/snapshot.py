"""The task-free ranking state as arrays, kept in the cache so that a new process can rank a task
without building the state again.

A map without a task is replayed from the cache, but a task map needs the repository's graph (the
relevance model walks it from the task's files), the task-free PageRank and the definitions'
ranking; a new process built them from every file's summary (on django: decoding 0.23 s,
building 0.30 s). After a map builds or updates the state, these are stored as numpy arrays
(``allow_pickle=False``: nothing but numbers and strings is read back), keyed by the same digest
as the map without a task (the files' contents, the backends, the settings, chat files and
mentions). A later process with that digest and a task loads them and decodes only the files'
definitions, which the task's name matching and the map's text need; it builds no symbol table
beyond the definitions and no graph. Its map is byte-identical to one ranked from scratch (a
test compares them); anything missing or unreadable falls back to ranking from scratch.
"""

from __future__ import annotations

import base64
import io
import logging
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .graph import SymbolTable
from .graphstate import GraphState
from .model import FileSymbols
from .rank import Coo, FactoredGraph, RankedPairs, Ranking, stable

log = logging.getLogger(__name__)

#: the prefix of a snapshot's key among the cache's memoised maps; bump the version when the
#: arrays change meaning
KEY_PREFIX = "state/1:"
#: a snapshot larger than this (characters of its text) is not stored: the repository's own
#: cache keeps 16 memoised results, and a very large tree's state is better rebuilt than kept
MAX_CHARS = 64 << 20


@dataclass(frozen=True)
class Snapshot:
    """What a task map reads of the state: the graph to walk, the task-free PageRank and the
    definitions' ranking, over ``files`` (the mapped files, sorted)."""

    files: tuple[str, ...]
    graph: FactoredGraph
    prior: dict[str, float]
    ranking: Ranking


def encode(state: GraphState) -> str:
    """The state's arrays as text for the cache (an ``.npz`` archive, base64)."""
    import numpy as np

    g = state.graph
    files = list(g.files)
    index = {f: i for i, f in enumerate(files)}
    pairs = state.ranking.definitions
    arrays = {
        "files": _strings(files),
        "prior": np.array([state.prior.get(f, 0.0) for f in files], dtype=np.float64),
        "out_weight": np.asarray(g.out_weight, dtype=np.float64),
        "pair_file": np.array([index[f] for f, _, _ in pairs], dtype=np.int64),
        "pair_ident": _strings([i for _, i, _ in pairs]),
        "pair_rank": np.array([r for _, _, r in pairs], dtype=np.float64),
    }
    for name, m in (("R", g.R), ("D", g.D), ("I", g.I)):
        arrays[f"{name}_rows"] = np.asarray(m.rows, dtype=np.int64)
        arrays[f"{name}_cols"] = np.asarray(m.cols, dtype=np.int64)
        arrays[f"{name}_vals"] = np.asarray(m.vals, dtype=np.float64)
        arrays[f"{name}_shape"] = np.array(m.shape, dtype=np.int64)
    out = io.BytesIO()
    np.savez(out, **arrays)
    return base64.b64encode(out.getvalue()).decode("ascii")


def decode(text: str) -> Snapshot | None:
    """The snapshot stored as ``text``, or None when it cannot be read."""
    import numpy as np

    try:
        with np.load(io.BytesIO(base64.b64decode(text)), allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
        files = tuple(_unstrings(a["files"]))
        mats = {
            name: Coo(
                a[f"{name}_rows"],
                a[f"{name}_cols"],
                a[f"{name}_vals"],
                tuple(int(x) for x in a[f"{name}_shape"]),
            )
            for name in ("R", "D", "I")
        }
        n = len(files)
        if a["prior"].shape != (n,) or a["out_weight"].shape != (n,):
            raise ValueError("arrays do not match the file list")
        prior = dict(zip(files, a["prior"].tolist(), strict=True))
        names = np.empty(n, dtype=object)
        names[:] = files
        idents = _unstrings(a["pair_ident"])
        if len(idents) != len(a["pair_file"]) or len(idents) != len(a["pair_rank"]):
            raise ValueError("pair arrays differ in length")
        pairs = RankedPairs(names[a["pair_file"]].tolist(), idents, a["pair_rank"].tolist())
    except Exception as exc:  # a damaged or foreign row is a miss, never a failure
        log.debug("state snapshot unreadable: %s", exc)
        return None
    graph = FactoredGraph(
        list(files), [], mats["R"], mats["D"], mats["I"], a["out_weight"], None, None
    )
    ranking = Ranking({f: stable(r) for f, r in prior.items()}, pairs)
    return Snapshot(files, graph, prior, ranking)


def _strings(values: list[str]) -> Any:
    """Strings as one UTF-8 byte array, NUL-separated (a fixed-width string array would take
    four bytes per character of the longest name, for every name)."""
    import numpy as np

    if any("\0" in v for v in values):
        raise ValueError("a name holds a NUL character")
    data = "\0".join(values).encode("utf-8", "surrogateescape")
    return np.frombuffer(data, dtype=np.uint8) if values else np.zeros(0, dtype=np.uint8)


def _unstrings(array: Any) -> list[str]:
    if not len(array):
        return []
    return array.tobytes().decode("utf-8", "surrogateescape").split("\0")


def definitions_table(files: Mapping[str, FileSymbols]) -> SymbolTable:
    """The part of the symbol table a task map reads: who defines each name, and the
    definitions by (file, name)."""
    table = SymbolTable()
    defines: dict[str, set[str]] = defaultdict(set)
    definitions = table.definitions
    for path in sorted(files):
        for tag in files[path].definitions:
            defines[tag.name].add(path)
            definitions[(path, tag.name)].append(tag)
    table.defines = defines
    return table
