"""The task-free ranking state as arrays, kept in the cache so that a new process can rank a task
without building the state again.

A map without a task is replayed from the cache, but a task map needs the repository's graph (the
relevance model walks it from the task's files), the task-free PageRank, the definitions' ranking
and who defines each name; a new process built them from every file's summary (on django:
decoding 0.23 s, building 0.30 s). When a task map builds the state, these are stored as numpy
arrays (``allow_pickle=False``: nothing but numbers and strings is read back), keyed by the
files' contents and backends, the settings, chat files and mentions (not the task or the
budget); a repository keeps its newest snapshot. A later process with that key and a task loads
them, decodes no references and parses a file's definitions only when the map shows it. Its map
is byte-identical to one ranked from scratch (tests compare them); anything missing or
unreadable falls back to ranking from scratch.
"""

from __future__ import annotations

import io
import json
import logging
from collections import defaultdict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from .graph import SymbolTable
from .graphstate import GraphState
from .madeonread import MadeOnRead
from .model import FileSymbols, Tag
from .rank import Coo, FactoredGraph, RankedPairs, Ranking, stable

log = logging.getLogger(__name__)

#: the prefix of a snapshot's key among the cache's memoised maps; bump the version when the
#: arrays change meaning
KEY_PREFIX = "state/1:"
#: a snapshot larger than this (bytes) is not stored: a very large tree's state is better
#: rebuilt than kept next to its memoised maps
MAX_BYTES = 64 << 20


@dataclass(frozen=True)
class Snapshot:
    """What a task map reads of the state: the graph to walk, the task-free PageRank, the
    definitions' ranking and who defines each name, over ``files`` (the mapped files, sorted)."""

    files: tuple[str, ...]
    graph: FactoredGraph
    prior: dict[str, float]
    ranking: Ranking
    #: name -> the files defining it (the symbol table's ``defines``)
    defines: Mapping[str, frozenset[str]]


def encode(state: GraphState) -> memoryview:
    """The state's arrays for the cache (an ``.npz`` archive; indices as int32)."""
    import numpy as np

    g = state.graph
    files = list(g.files)
    index = {f: i for i, f in enumerate(files)}
    pair_files, pair_idents, pair_ranks = _columns(state.ranking.definitions)
    defines = state.table.defines
    names = sorted(defines)
    arrays = {
        "files": _strings(files),
        "prior": np.array([state.prior.get(f, 0.0) for f in files], dtype=np.float64),
        "out_weight": np.asarray(g.out_weight, dtype=np.float64),
        "pair_file": np.fromiter((index[f] for f in pair_files), np.int32, len(pair_files)),
        "pair_ident": _strings(pair_idents),
        "pair_rank": np.array(pair_ranks, dtype=np.float64),
        "def_names": _strings(names),
        "def_counts": np.fromiter((len(defines[n]) for n in names), np.int32, len(names)),
        # a name's definers in any order: they are read back as a set
        "def_files": np.fromiter((index[f] for n in names for f in defines[n]), np.int32),
    }
    for name, m in (("R", g.R), ("D", g.D), ("I", g.I)):
        arrays[f"{name}_rows"] = np.asarray(m.rows, dtype=np.int32)
        arrays[f"{name}_cols"] = np.asarray(m.cols, dtype=np.int32)
        arrays[f"{name}_vals"] = np.asarray(m.vals, dtype=np.float64)
        arrays[f"{name}_shape"] = np.array(m.shape, dtype=np.int64)
    out = io.BytesIO()
    np.savez(out, **arrays)
    return out.getbuffer()


def _columns(pairs) -> tuple[list[str], list[str], list[float]]:
    if isinstance(pairs, RankedPairs):
        return pairs.columns()
    return [f for f, _, _ in pairs], [i for _, i, _ in pairs], [r for _, _, r in pairs]


def decode(data: bytes) -> Snapshot | None:
    """The snapshot stored as ``data``, or None when it cannot be read."""
    import numpy as np

    try:
        if not isinstance(data, bytes | memoryview):
            raise TypeError("a snapshot is bytes")
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            a = {k: z[k] for k in z.files}
        files = tuple(_unstrings(a["files"]))
        mats = {
            name: Coo(
                a[f"{name}_rows"].astype(np.int64),
                a[f"{name}_cols"].astype(np.int64),
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
        defines = Defines(files, _unstrings(a["def_names"]), a["def_counts"], a["def_files"])
    except Exception as exc:  # a damaged or foreign row is a miss, never a failure
        log.debug("state snapshot unreadable: %s", exc)
        return None
    graph = FactoredGraph(
        list(files), [], mats["R"], mats["D"], mats["I"], a["out_weight"], None, None
    )
    ranking = Ranking({f: stable(r) for f, r in prior.items()}, pairs)
    return Snapshot(files, graph, prior, ranking, defines)


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


class RowTags(MadeOnRead[Tag]):
    """A file's definitions kept as the cache's text, parsed and made into :class:`Tag` objects
    when first read: a task map reads the tags of the few files it shows (on django, parsing and
    making all 56,000 cost 0.1 s)."""

    __slots__ = ("_path", "_text", "_made")

    def __init__(self, path: str, text: str):
        self._path, self._text = path, text
        self._made: tuple[Tag, ...] | None = None

    def _all(self) -> tuple[Tag, ...]:
        if self._made is None:
            rows = json.loads(self._text)
            self._made = tuple(Tag.from_row(self._path, row) for row in rows)
        return self._made

    def _rows(self) -> tuple[str, tuple[Tag, ...]]:
        return self._path, self._all()

    def __len__(self) -> int:
        return len(self._all())

    def __getitem__(self, i):  # type: ignore[override]
        return self._all()[i]

    def __iter__(self) -> Iterator[Tag]:
        return iter(self._all())


class Defines(Mapping[str, frozenset[str]]):
    """name -> the files defining it, from the snapshot's arrays; each set made on first read."""

    def __init__(self, files: tuple[str, ...], names: list[str], counts: Any, definers: Any):
        import numpy as np

        if len(names) != len(counts) or int(counts.sum()) != len(definers):
            raise ValueError("definer arrays do not match the names")
        if len(definers) and (int(definers.min()) < 0 or int(definers.max()) >= len(files)):
            raise ValueError("a definer is not a mapped file")
        ends = np.cumsum(counts).tolist()
        starts = [0, *ends[:-1]]
        self._files = files
        self._definers = definers.tolist()
        self._at = {n: (a, b) for n, a, b in zip(names, starts, ends, strict=True)}
        self._made: dict[str, frozenset[str]] = {}

    def __getitem__(self, name: str) -> frozenset[str]:
        found = self._made.get(name)
        if found is None:
            a, b = self._at[name]
            found = self._made[name] = frozenset(self._files[i] for i in self._definers[a:b])
        return found

    def __contains__(self, name: object) -> bool:
        return name in self._at

    def __iter__(self) -> Iterator[str]:
        return iter(self._at)

    def __len__(self) -> int:
        return len(self._at)


class DefinitionsByName(Mapping[tuple[str, str], list[Tag]]):
    """(file, name) -> that file's definitions of the name, in file order, grouped per file on
    first use (the part of :attr:`SymbolTable.definitions` a task map reads)."""

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


def definitions_table(files: Mapping[str, FileSymbols], snap: Snapshot) -> SymbolTable:
    """The part of the symbol table a task map reads: who defines each name (from the
    snapshot) and the definitions by (file, name), parsed per file when first read."""
    table = SymbolTable()
    table.defines = snap.defines  # type: ignore[assignment]
    table.definitions = DefinitionsByName(files, snap.defines)  # type: ignore[assignment]
    return table
