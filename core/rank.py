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

import itertools
import logging
import operator
from bisect import bisect_left
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING, Any, overload

from .definitions import DefinitionIndex, RowsAt
from .graph import (
    CHAT_MULTIPLIER,
    DATA_DEFINITION_FACTOR,
    SymbolTable,
    ident_weights,
    identifier_multiplier,
    import_weights,
)
from .layered import Layered, copied_mapping
from .madeonread import MadeOnRead
from .mappedpages import give_back
from .tablearrays import NameRuns, element_chunks

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import ArrayLike, DTypeLike, NDArray

    from .tablearrays import TableArrays

log = logging.getLogger(__name__)

ALPHA = 0.85
PAGERANK_TOL = 1e-8
PAGERANK_MAX_ITER = 200
#: How much of a file's rank its unreferenced definitions share (so they still show, in file order).
SELF_SHARE = 0.1
#: Definitions of an identifier the user mentioned rank this many times higher (on top of
#: Aider's x10 on the edges that reach them), so a mention reliably brings the symbol into view.
MENTIONED_BOOST = 10.0
#: What a file's role is worth in the task-free ranking, against code's 1: the random walk
#: restarts at it this much less, and its rank and its definitions' are multiplied by it (so a
#: test's references vote less, and a test helper that tests reference stays below code).
#: Tests, examples and documentation show how code is used; generated and vendored copies
#: repeat code that is shown better elsewhere, or not the project's own.
#: (The roles of :mod:`repomapper.relevance.roles`, spelled out: that package imports this
#: module, so this one reads it only when called.)
ROLE_WEIGHTS: dict[str, float] = {
    "test": 0.1,
    "example": 0.1,
    "docs": 0.1,
    "template": 0.1,
    "generated": 0.05,
    "vendored": 0.05,
}


class PairOrder:
    """The ranked pairs' scores (each rounded by :func:`stable_array`) and their order: by
    score, best first, ties by the score of the pair's file (``file_scores``: per file
    position; ``pair_file``: each pair's), then by position. The first ``head`` pairs are
    rounded and sorted when first asked for, the rest only when read: a map reads a few hundred
    of a large tree's millions of pairs, and rounding and sorting all of them was most of what
    an edit that changes the ranking cost a long-lived process."""

    #: how many of the first pairs are sorted at once (at least), by default
    HEAD = 1 << 14
    #: a score rounded to 12 significant digits moves by less than this share of itself
    ROUNDING = 1e-11

    __slots__ = ("_raw", "_file_scores", "_pair_file", "_size", "_scores", "_head", "_all")

    def __init__(self, raw: Any, file_scores: Any, pair_file: Any, head: int = HEAD):
        """``raw``: each pair's score before rounding (non-negative)."""
        self._raw, self._file_scores, self._pair_file = raw, file_scores, pair_file
        self._size = head
        self._scores: Any = None  # every pair's rounded score, once made
        self._head: Any = None
        self._all: Any = None

    def __len__(self) -> int:
        return len(self._raw)

    def scores(self, positions: Any = None) -> Any:
        """The rounded scores of the pairs at ``positions`` (all when None)."""
        if positions is None:
            if self._scores is None:
                self._scores = stable_array(self._raw)
            return self._scores
        if self._scores is not None:
            return self._scores[positions]
        return stable_array(self._raw[positions])

    def _sorted(self, positions: Any = None, scores: Any = None) -> Any:
        """``positions`` (all when None; increasing) in order; ``scores``: theirs, rounded."""
        import numpy as np

        if scores is None:
            scores = self.scores(positions)
        files = self._pair_file if positions is None else self._pair_file[positions]
        # stable: ties keep pair order
        order = np.lexsort((np.negative(self._file_scores[files]), np.negative(scores)))
        return order if positions is None else positions[order]

    def head(self) -> Any:
        """The positions of the first pairs in order: at least ``head`` of them (all when
        fewer), exactly the start of :meth:`all`."""
        import numpy as np

        if self._all is not None:
            return self._all
        if self._head is None:
            raw, n, k = self._raw, len(self._raw), self._size
            if n <= 4 * k:
                return self.all()
            # the k-th best score before rounding; a pair that rounds to at least its rounded
            # score is within the rounding of it (rounding keeps the order, and moves a score
            # by less than ROUNDING of itself)
            bound = float(np.partition(raw, n - k)[n - k])
            if not bound > 0:
                return self.all()
            near = np.flatnonzero(raw >= bound * (1 - self.ROUNDING))
            rounded = stable_array(raw[near])
            # every pair rounded to at least the k-th best rounded score (ties included) comes
            # before every other, so sorting those alone gives the start of the whole order
            cut = np.partition(rounded, len(near) - k)[len(near) - k]
            chosen = rounded >= cut
            if int(chosen.sum()) > n // 4:  # a score most pairs share: nothing to save
                return self.all()
            self._head = self._sorted(near[chosen], rounded[chosen])
        return self._head

    def all(self) -> Any:
        """The positions of every pair in order."""
        if self._all is None:
            self._all = self._sorted()
            self._head = None
        return self._all


class RankedPairs(MadeOnRead[tuple[str, str, float]]):
    """(file, identifier, rank) for every ranked definition pair, best first. Kept as arrays
    (the files' and identifiers' positions in tables of them, and the ranks) and made into
    tuples as they are read: a map reads a few hundred of hundreds of thousands (a list of
    every pair's strings and floats cost a large tree hundreds of megabytes). Pairs ranked
    afresh (:meth:`ordered`) are put in order as far as they are read (see :class:`PairOrder`)."""

    __slots__ = (
        "_file_names",
        "_idents",
        "_name_ids",
        "_columns_at",
        "_lazy",
    )

    def __init__(
        self,
        file_names: Any,
        file_at: Any,
        idents: Any,
        ident_at: Any,
        ranks: Any,
        name_ids: Any = None,
    ):
        """Pair ``i`` is ``(file_names[file_at[i]], idents[ident_at[i]], ranks[i])`` (numpy
        arrays; the tables object arrays of strings); ``name_ids``: each pair's identifier as
        a name id of :class:`~repomapper.tablearrays.TableArrays`, when known."""
        if not len(file_at) == len(ident_at) == len(ranks):
            raise ValueError("files, identifiers and ranks differ in length")
        self._file_names, self._idents, self._name_ids = file_names, idents, name_ids
        #: (file_at, ident_at, ranks) of every pair in order, once known
        self._columns_at: tuple[Any, Any, Any] | None = (file_at, ident_at, ranks)
        #: (pair_file, pairs, order) while the order is not wholly known
        self._lazy: tuple[Any, Any, PairOrder] | None = None

    @classmethod
    def ordered(
        cls,
        file_names: Any,
        pair_file: Any,
        idents: Any,
        pairs: Any,
        order: PairOrder,
        name_ids: Any = None,
    ) -> RankedPairs:
        """The pairs at positions ``pairs`` of the definition index (``pair_file``: each
        index pair's file) with their scores, in ``order``."""
        if len(pairs) != len(order):
            raise ValueError("pairs and their order differ in length")
        out = cls.__new__(cls)
        out._file_names, out._idents, out._name_ids = file_names, idents, name_ids
        out._columns_at = None
        out._lazy = (pair_file, pairs, order)
        return out

    def _in_order(self, positions: Any) -> tuple[Any, Any, Any]:
        """(file_at, ident_at, ranks) of the pairs at ``positions`` of the unordered arrays."""
        assert self._lazy is not None
        pair_file, pairs, order = self._lazy
        chosen = pairs[positions]
        return pair_file[chosen], chosen, order.scores(positions)

    def _all(self) -> tuple[Any, Any, Any]:
        if self._columns_at is None:
            assert self._lazy is not None
            self._columns_at = self._in_order(self._lazy[2].all())
            self._lazy = None
        return self._columns_at

    def _part(self, part: slice) -> tuple[Any, Any, Any]:
        """The columns of ``part`` (a slice of this sequence): from the sorted head when it
        lies there."""
        if self._lazy is not None:
            order = self._lazy[2]
            head = order.head()
            start, stop, step = part.indices(len(order))
            if step == 1 and stop <= len(head):
                return self._in_order(head[start:stop])
        file_at, ident_at, ranks = self._all()
        return file_at[part], ident_at[part], ranks[part]

    def __len__(self) -> int:
        if self._lazy is not None:
            return len(self._lazy[2])
        assert self._columns_at is not None
        return len(self._columns_at[2])

    @overload
    def __getitem__(self, i: int) -> tuple[str, str, float]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[str, str, float]]: ...
    def __getitem__(
        self, i: int | slice
    ) -> tuple[str, str, float] | Sequence[tuple[str, str, float]]:
        if isinstance(i, slice):
            files, idents, ranks = self._columns(i)
            return tuple(zip(files, idents, ranks, strict=True))
        n = len(self)
        if not -n <= i < n:
            raise IndexError("pair index out of range")
        at = i % n
        file_at, ident_at, ranks = self._part(slice(at, at + 1))
        return (
            self._file_names[file_at[0]],
            self._idents[ident_at[0]],
            float(ranks[0]),
        )

    def _columns(self, part: slice = slice(None)) -> tuple[list[str], list[str], list[float]]:
        import numpy as np

        file_at, ident_at, ranks = self._part(part)
        return (
            self._file_names[file_at].tolist(),
            self._idents[ident_at].tolist(),
            np.asarray(ranks, dtype=np.float64).tolist(),
        )

    def __iter__(self) -> Iterator[tuple[str, str, float]]:
        step = 1 << 14  # a chunk's tuples at a time, not every pair's strings in lists
        for lo in range(0, len(self), step):
            yield from zip(*self._columns(slice(lo, lo + step)), strict=True)

    def _rows(self) -> tuple[list[str], list[str], list[float]]:
        return self._columns()

    def columns(self) -> tuple[list[str], list[str], list[float]]:
        """The files, identifiers and ranks as three lists."""
        return self._columns()

    def file_positions(self, files: Sequence[str]) -> Any:
        """Each pair's file as its position in ``files``, or None when the pairs' table of
        files is another."""
        same = len(self._file_names) == len(files) and self._file_names.tolist() == list(files)
        return self._all()[0] if same else None

    def ranks(self) -> Any:
        return self._all()[2]

    def name_ids(self) -> Any:
        """Each pair's identifier as a name id, or None when they are not known."""
        if self._name_ids is None:
            return None
        return self._name_ids[self._all()[1]]


@dataclass(frozen=True, slots=True)
class PairScores:
    """What :func:`rank_definitions` computed per definition pair over the definition arrays
    it ranked (``arrays``): each pair's rank, whether any rank reached it, and the per-file
    inputs (the file ranks as an array, the files' scores). An update whose walk, role weights
    and boosts are the ones before ranks again only the pairs of the files it laid out again."""

    arrays: Any
    ranked: Any
    received: Any
    file_rank: Any  # per file index, its rank
    file_scores: dict[str, float]
    by_file: Any  # per file index, its score


@dataclass(frozen=True, slots=True)
class Ranking:
    file_ranks: dict[str, float]
    #: (file, identifier, rank) pairs, best first
    definitions: Sequence[tuple[str, str, float]]
    #: the per-pair values the ranking was made from (kept for the next update)
    pairs: PairScores | None = field(default=None, compare=False, repr=False)


@lru_cache(maxsize=1 << 16)
def path_parts(path: str) -> frozenset[str]:
    """The parts of a path a mentioned identifier can name: the file's name and stem (as
    ``PurePosixPath`` has them; string operations, since every file is asked on each ranking).

    Aider also matches directory names; we do not, because a package's name appears in nearly
    every task about it and would personalize every file of the package alike, drowning the file
    the task actually names (measured in docs/localization.md).
    """
    name = path.rstrip("/").rsplit("/", 1)[-1]
    dot = name.rfind(".")
    stem = name[:dot] if 0 < dot < len(name) - 1 else name
    return frozenset((name, stem))


def role_weights(
    files: Iterable[str],
    chat_files: frozenset[str] = frozenset(),
    mentioned_fnames: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
    asked: frozenset[str] = frozenset(),
    marked: Iterable[str] = (),
) -> dict[str, float]:
    """The files below code by their role (:data:`ROLE_WEIGHTS`; ``marked``: files whose text
    says a tool generated them, generated whatever their path), each with its weight: not
    those the user asked for (chat files, mentioned files, files named by a mentioned
    identifier, ``asked``: selected by an include glob that selects no code), and none at all
    when no file is code (a map of the tests alone ranks them as Aider would)."""
    from .relevance.roles import CODE, GENERATED, file_roles

    roles = file_roles(files)
    for f in marked:
        if roles.get(f) == CODE:
            roles[f] = GENERATED
    if not any(role == CODE for role in roles.values()):
        return {}
    out = {}
    for f, role in roles.items():
        weight = ROLE_WEIGHTS.get(role)
        if weight is None or f in chat_files or f in mentioned_fnames or f in asked:
            continue
        if mentioned_idents and path_parts(f) & mentioned_idents:
            continue
        out[f] = weight
    return out


def asked_by_include(include: Sequence[str], files: Iterable[str]) -> frozenset[str]:
    """The files an include glob asks for by their role: each glob that selects files but no
    code file (``tests/**``, ``**/test_*.py``, ``examples/**``) asks for the files it selects;
    ``**/*.py``, which selects code too, asks for nothing in particular."""
    if not include:
        return frozenset()
    from .discover import compile_globs
    from .relevance.roles import CODE, file_roles

    roles = file_roles(files)
    asked: set[str] = set()
    for pattern in include:
        spec = compile_globs([pattern], "--include")
        if spec is None:
            continue
        chosen = [f for f in roles if spec.match_file(f)]
        if chosen and all(roles[f] != CODE for f in chosen):
            asked.update(chosen)
    return frozenset(asked)


def personalization(
    files: Iterable[str],
    chat_files: frozenset[str],
    mentioned_fnames: frozenset[str],
    mentioned_idents: frozenset[str],
    weights: Mapping[str, float] | None = None,
) -> dict[str, float]:
    """Aider's scheme: 100/N for a chat file, a mentioned file, a path part matching an ident.
    With none of those, the walk restarts at every file (Aider's uniform restart), each as
    much as its role's weight (``weights``, 1 for a file not in it)."""
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
    if not scores and weights:
        return {f: weights.get(f, 1.0) for f in files}
    return scores


def demoted(file_ranks: Mapping[str, float], weights: Mapping[str, float]) -> dict[str, float]:
    """Each file's rank times its role's weight (1 for a file not in ``weights``)."""
    if not weights:
        return dict(file_ranks)
    return {f: r * weights.get(f, 1.0) for f, r in file_ranks.items()}


def stable(x: float) -> float:
    """Round away the last bits of floating-point noise so ties sort the same everywhere."""
    return float(f"{x:.12g}")


#: a transposed product over at least this many entries goes through scipy's CSR kernel
CSR_ENTRIES = 1 << 20


@dataclass(frozen=True)
class Coo:
    """A sparse matrix as coordinate arrays (duplicates add up), with the products ranking needs
    in numpy alone: importing scipy's sparse package is a visible part of every fresh
    process, and a product over these arrays is as fast as its CSR one up to a mid-size tree's
    (docs/benchmarks.md). Past :data:`CSR_ENTRIES` entries sorted by column or by row (the
    reference and definition matrices of a large tree: millions), ``M.T @ w`` goes through
    scipy's compressed kernels from the second product on (PageRank's iterations), a few times
    faster: one pass in the entries' order, so the same sums to the last bit."""

    rows: Any  # numpy int64 arrays, and float64 values
    cols: Any
    vals: Any
    shape: tuple[int, int]

    @cached_property
    def _products(self) -> list[int]:
        """How many transposed products were asked for (one: not worth a CSR matrix and
        scipy's import, in a process that ranks once)."""
        return [0]

    @cached_property
    def _transposed(self) -> Any:
        """``M.T`` as a scipy sparse matrix over these very arrays, or None when the entries
        are few or sorted neither by column nor by row. Sorted by column, it is a CSR matrix
        whose rows are the entries' columns (a row's sum adds its entries in their order
        here); sorted by row, the transpose of ``M``'s CSR matrix, whose product adds each
        entry into its column in their order here. Either way the sums of ``np.bincount``."""
        import numpy as np

        rows, cols = self.rows, self.cols
        if len(cols) < CSR_ENTRIES:
            return None
        if bool((cols[1:] >= cols[:-1]).all()):
            major, minor, shape = cols, rows, (self.shape[1], self.shape[0])
        elif bool((rows[1:] >= rows[:-1]).all()):
            major, minor, shape = rows, cols, self.shape
        else:
            return None
        from scipy.sparse import csr_matrix  # type: ignore[import-untyped]  # (no stubs)

        index = np.int32 if len(cols) < 1 << 31 and max(self.shape) < 1 << 31 else np.int64
        indptr = np.zeros(shape[0] + 1, dtype=index)
        np.cumsum(np.bincount(major, minlength=shape[0]), out=indptr[1:])
        matrix = csr_matrix((self.vals, minor.astype(index, copy=False), indptr), shape=shape)
        return matrix if major is cols else matrix.T

    def dot(self, w: Any) -> Any:
        """``M @ w``"""
        import numpy as np

        return np.bincount(self.rows, self.vals * w[self.cols], minlength=self.shape[0])

    def tdot(self, w: Any) -> Any:
        """``M.T @ w``"""
        import numpy as np

        asked = self._products
        asked[0] += 1
        transposed = self._transposed if asked[0] > 1 else None
        if transposed is not None:
            return transposed @ np.asarray(w, dtype=np.float64)
        return np.bincount(self.cols, self.vals * w[self.rows], minlength=self.shape[1])

    def tdot_at(self, w: Any, columns: Any) -> Any:
        """``(M.T @ w)[columns]``. When the entries are sorted by column, only the entries of
        those columns are read (an update ranks again the pairs of a few files: a few
        columns of a large tree's millions), each column's added in their order, as the whole
        product adds them: the same sums to the last bit."""
        import numpy as np

        if not self._by_column:
            return self.tdot(w)[columns]
        wanted, back = np.unique(columns, return_inverse=True)
        cols = self.cols
        lo = np.searchsorted(cols, wanted, "left")
        n = np.searchsorted(cols, wanted, "right") - lo
        # each wanted column's entries, in order: lo, lo + 1, ... for each column in turn
        at = np.arange(int(n.sum()), dtype=np.int64) + np.repeat(lo - (np.cumsum(n) - n), n)
        into = np.repeat(np.arange(len(wanted)), n)
        sums = np.bincount(into, self.vals[at] * w[self.rows[at]], minlength=len(wanted))
        return sums[back]

    @cached_property
    def _by_column(self) -> bool:
        cols = self.cols
        return bool((cols[1:] >= cols[:-1]).all())

    def row_sums(self) -> Any:
        import numpy as np

        return np.bincount(self.rows, self.vals, minlength=self.shape[0])

    def toarray(self) -> Any:
        """The dense matrix (for inspection and tests)."""
        import numpy as np

        out = np.zeros(self.shape)
        np.add.at(out, (self.rows, self.cols), self.vals)
        return out


#: marks an importer's kept I rows as the stored state's (see FactorBlocks._import_entries)
STORED = object()


@dataclass
class FactoredGraph:  # numpy is imported lazily: a replayed map does not need it
    """The weight matrix ``R @ D + I`` and what is needed to read ranks back per identifier."""

    files: list[str]
    #: the identifier of each column of R / row of D (a list, a numpy object array, or a
    #: stored state's :class:`~repomapper.tablearrays.NamesAt`, read as an object array)
    columns: Any
    R: Coo  # files x columns
    D: Coo  # columns x files
    I: Coo  # noqa: E741 - files x files: import edges
    out_weight: Any  # numpy array: total out-weight per file
    #: the definition index the graph was laid out against (over ``files``); None for a graph
    #: loaded from a snapshot (see repomapper.snapshot), which is only walked
    definitions: DefinitionIndex | None
    #: D's entries in row order (column, definer file, factor) with, for each, the position of
    #: the column's identifier among its definer's definitions: the entry's definition pair is
    #: ``definitions.arrays.offsets[definer] + local``, found without a lookup per entry
    d_entries: tuple[Any, Any, Any, Any] | None


@dataclass(frozen=True, slots=True)
class IdentBlock:
    """One identifier's share of ``R`` and ``D``: the files that reference it, each with its
    local column and weight, and each local column's definers with their kind factors."""

    rows: tuple[str, ...]
    cols: tuple[int, ...]
    weights: tuple[float, ...]
    definers: tuple[tuple[str, ...], ...]
    factors: tuple[tuple[float, ...], ...]


def ident_block(
    table: SymbolTable,
    ident: str,
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> IdentBlock | None:
    """The block of ``ident``: one column per distinct set of files its references link to."""
    rows: list[str] = []
    cols: list[int] = []
    weights: list[float] = []
    local: dict[tuple[str, ...], int] = {}
    everyone, everyone_col = None, -1  # the tuple of every definer, without hashing it each time
    for referencer, chosen, weight in ident_weights(table, ident, chat_files, mentioned_idents):
        if chosen is everyone:
            col = everyone_col
        else:
            known = local.get(chosen)
            if known is None:
                known = local[chosen] = len(local)
            col = known
            if everyone is None and len(chosen) == len(table.defines[ident]):
                everyone, everyone_col = chosen, col
        rows.append(referencer)
        cols.append(col)
        weights.append(weight)
    if not rows:
        return None
    definers = tuple(local)
    factors = tuple(tuple(table.kind_factor(d, ident) for d in ds) for ds in definers)
    return IdentBlock(tuple(rows), tuple(cols), tuple(weights), definers, factors)


@dataclass
class _Assembly:
    """The blocks laid out as COO arrays over one file list, identifiers in sorted order, with
    each identifier's share counted, so that an update can splice in the blocks it touched."""

    files: tuple[str, ...]
    #: the identifiers with a block, sorted (a list of strings, or a numpy object array)
    order: Any
    counts: Any  # numpy int64 array, one row per identifier: (R entries, columns, D entries)
    r_rows: Any
    r_cols: Any
    r_vals: Any
    d_rows: Any
    d_cols: Any
    d_vals: Any
    d_local: Any  # per D entry: the identifier's position among its definer's definitions
    columns: Any  # the identifier of each column (a list of strings, or a numpy object array)
    #: importer -> (its resolved imports, whether it is a chat file, its I entries over
    #: ``files``): an importer whose imports are the same object keeps its entries (shared by
    #: the assemblies spliced from this one, which lay out the same files); or (STORED, chat,
    #: lo, hi), below
    import_rows: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    #: a stored state's I entries (rows, columns, values), which its importers' kept rows
    #: point into as (STORED, chat, lo, hi)
    import_base: tuple[Any, Any, Any] | None = None
    #: ``order`` as name ids of :class:`~repomapper.tablearrays.TableArrays`, when the layout
    #: was made from them (a splice does not keep them)
    order_ids: Any = None
    #: the imports held as arrays that ``import_base`` was computed from, and the chat files
    #: it was computed with
    import_of: Any = None
    import_chat: frozenset[str] = frozenset()

    @cached_property
    def starts(self) -> Any:
        import numpy as np

        out = np.zeros((len(self.order) + 1, 3), dtype=np.int64)
        np.cumsum(self.counts, axis=0, out=out[1:])
        return out

    def position(self, ident: object) -> int | None:
        """The identifier's place in ``order`` (by bisection: a dict of every identifier
        cost a large tree's every process more than the few lookups an update makes)."""
        if not isinstance(ident, str):
            return None
        i = bisect_left(self.order, ident)
        return i if i < len(self.order) and self.order[i] == ident else None


#: one block's entries: R's rows, columns and weights, D's rows, columns, factors and positions,
#: and the block's column count
_BlockRows = tuple[
    list[int], list[int], list[float], list[int], list[int], list[float], list[int], int
]


def _block_rows(ident: str, block: IdentBlock, idx: Mapping[str, int], rows: RowsAt) -> _BlockRows:
    """One block's entries over a file list: R (row, local column, weight), D (local column,
    file, factor, the identifier's position in the file's definition rows ``rows``) and its
    column count; definers and referencers outside the list are left out, and a column left
    without definers with them."""
    col_of: list[int | None] = []
    d_rows: list[int] = []
    d_cols: list[int] = []
    d_vals: list[float] = []
    d_local: list[int] = []
    ncols = 0
    for ds, fs in zip(block.definers, block.factors, strict=True):
        kept = [(idx[d], f) for d, f in zip(ds, fs, strict=True) if d in idx]
        if not kept:
            col_of.append(None)
            continue
        col_of.append(ncols)
        for i, f in kept:
            d_rows.append(ncols)
            d_cols.append(i)
            d_vals.append(f)
            d_local.append(rows.position(i, ident))
        ncols += 1
    r_rows: list[int] = []
    r_cols: list[int] = []
    r_vals: list[float] = []
    for referencer, local, weight in zip(block.rows, block.cols, block.weights, strict=True):
        row = idx.get(referencer)
        col = col_of[local]
        if row is None or col is None:
            continue
        r_rows.append(row)
        r_cols.append(col)
        r_vals.append(weight)
    return r_rows, r_cols, r_vals, d_rows, d_cols, d_vals, d_local, ncols


@dataclass(frozen=True)
class FactorBlocks:
    """The reference part of the factored graph, kept per identifier so that an edit recomputes
    only the identifiers it touched (see :meth:`repomapper.graph.SymbolTable.updated`), and its
    matrices are assembled by splicing those identifiers into the previous layout."""

    chat_files: frozenset[str]
    mentioned_idents: frozenset[str]
    blocks: Mapping[str, IdentBlock]
    #: the assembly once made, and (until then) the blocks this was updated from
    #: "assembly": the last layout; "parent": the layout this one was updated from, and how
    _memo: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def build(
        cls,
        table: SymbolTable,
        chat_files: frozenset[str] = frozenset(),
        mentioned_idents: frozenset[str] = frozenset(),
    ) -> FactorBlocks:
        blocks = {}
        for ident in table.defines:
            block = ident_block(table, ident, chat_files, mentioned_idents)
            if block is not None:
                blocks[ident] = block
        return cls(chat_files, mentioned_idents, blocks)

    @classmethod
    def of_table(
        cls,
        table: SymbolTable,
        t: TableArrays,
        definitions: DefinitionIndex,
        local: Any,
        chat_files: frozenset[str] = frozenset(),
        mentioned_idents: frozenset[str] = frozenset(),
    ) -> FactorBlocks:
        """The blocks of a table held as arrays (``t``; ``table`` answers from them), laid out
        at once (see :func:`_laid_out`) against ``definitions`` (its index, with ``local``:
        each definer entry's position among its file's pairs); a block is made as an object
        only when an update reads it."""
        assembly = _laid_out(table, t, definitions, local, chat_files, mentioned_idents)
        return cls.over(table, assembly, chat_files, mentioned_idents)

    @classmethod
    def over(
        cls,
        table: SymbolTable,
        assembly: _Assembly,
        chat_files: frozenset[str],
        mentioned_idents: frozenset[str],
    ) -> FactorBlocks:
        """The blocks a layout holds, each computed from ``table`` when read."""
        base = LaidOutBlocks(table, assembly, chat_files, mentioned_idents)
        blocks = cls(chat_files, mentioned_idents, Layered(base))
        blocks._memo["assembly"] = assembly
        return blocks

    def updated(
        self,
        table: SymbolTable,
        touched: Iterable[str],
        chat_files: frozenset[str] | None = None,
        mentioned_idents: frozenset[str] | None = None,
    ) -> FactorBlocks:
        """The blocks of ``table`` (with these chat files and mentions, by default the same),
        given that only the ``touched`` identifiers' blocks can differ: those whose rows changed,
        those mentioned before or now, and those referenced by a file that entered or left the
        chat (see :func:`repomapper.graphstate.update_state`)."""
        chat = self.chat_files if chat_files is None else chat_files
        mentioned = self.mentioned_idents if mentioned_idents is None else mentioned_idents
        blocks = copied_mapping(self.blocks)
        touched = frozenset(touched)
        for ident in touched:
            block = None
            if ident in table.defines:
                block = ident_block(table, ident, chat, mentioned)
            if block is not None:
                blocks[ident] = block
            elif ident in blocks:
                del blocks[ident]  # (pop would make a layout's block to return it)
        new = FactorBlocks(chat, mentioned, blocks)
        if "assembly" in self._memo:
            new._memo["parent"] = (self._memo["assembly"], touched)
        elif "parent" in self._memo:  # updated again before it was laid out
            layout, before = self._memo["parent"]
            new._memo["parent"] = (layout, before | touched)
        return new

    def _assembly(self, names: tuple[str, ...], definitions: DefinitionIndex) -> _Assembly:
        """The blocks laid out over ``names`` against ``definitions`` (an index over the same
        files; identifiers' positions in a file's rows only change when the file changed, and
        then every identifier it defines is touched, so a splice keeps the others' positions)."""
        found: _Assembly | None = self._memo.get("assembly")
        if found is not None and found.files == names:
            return found
        rows = RowsAt(names, definitions.rows)
        parent = self._memo.pop("parent", None)
        if parent is not None and parent[0].files == names:
            found = self._splice(parent[0], parent[1], names, rows)
        else:
            found = self._assemble(names, rows)
        self._memo["assembly"] = found
        return found

    def _assemble(self, names: tuple[str, ...], rows: RowsAt) -> _Assembly:
        import numpy as np

        idx = {f: i for i, f in enumerate(names)}
        order = sorted(self.blocks)
        lists: tuple[list[Any], ...] = ([], [], [], [], [], [], [])
        counts: list[tuple[int, int, int]] = []
        columns: list[str] = []
        base = 0
        for ident in order:
            r_rows, r_cols, r_vals, d_rows, d_cols, d_vals, d_local, ncols = _block_rows(
                ident, self.blocks[ident], idx, rows
            )
            lists[0].extend(r_rows)
            lists[1].extend(c + base for c in r_cols)
            lists[2].extend(r_vals)
            lists[3].extend(c + base for c in d_rows)
            lists[4].extend(d_cols)
            lists[5].extend(d_vals)
            lists[6].extend(d_local)
            columns.extend([ident] * ncols)
            counts.append((len(r_rows), ncols, len(d_rows)))
            base += ncols
        ints, floats = np.int64, np.float64
        return _Assembly(
            names,
            order,
            np.array(counts, dtype=ints).reshape(len(order), 3),
            np.array(lists[0], dtype=ints),
            np.array(lists[1], dtype=ints),
            np.array(lists[2], dtype=floats),
            np.array(lists[3], dtype=ints),
            np.array(lists[4], dtype=ints),
            np.array(lists[5], dtype=floats),
            np.array(lists[6], dtype=ints),
            columns,
        )

    def _splice(
        self,
        old: _Assembly,
        touched: frozenset[str],
        names: tuple[str, ...],
        rows: RowsAt,
    ) -> _Assembly:
        """The assembly of these blocks from ``old``: the runs of identifiers between touched
        ones are copied (their columns shifted), the touched ones laid out again or left out.
        The blocks are ``old``'s with only the touched ones changed, so the new order is
        found by walking the touched identifiers through the old one (sorting every
        identifier again cost a large tree's update more than the rest of it)."""
        import numpy as np

        idx = _FileIds(names)
        starts = old.starts
        # each piece of the seven arrays is (values, shift): the old runs are read where they
        # are and shifted while copied into the result (a shifted copy per run, then their
        # concatenation, held a large tree's columns three times)
        pieces: list[list[tuple[Any, int]]] = [[], [], [], [], [], [], []]
        counts: list[Any] = []
        columns, order = NameRuns(old.columns), NameRuns(old.order)
        base = 0

        def keep(p0: int, p: int) -> None:  # old identifiers p0:p, as they were, shifted
            nonlocal base
            if p <= p0:
                return
            (ra, ca, da), (rb, cb, db) = starts[p0], starts[p]
            shift = base - int(ca)
            for k, (values, moved) in enumerate(_spliced_runs(old)):
                lo, hi = (ra, rb) if k < 3 else (da, db)
                pieces[k].append((values[lo:hi], shift if moved else 0))
            counts.append(old.counts[p0:p])
            columns.keep(old.columns, int(ca), int(cb))
            order.keep(old.order, p0, p)
            base += int(cb - ca)

        done = 0  # old identifiers before this are in the pieces
        for ident in sorted(touched):
            at = bisect_left(old.order, ident, done)
            keep(done, at)
            done = at + 1 if at < len(old.order) and old.order[at] == ident else at
            block = self.blocks.get(ident)
            if block is None:
                continue
            laid = _block_rows(ident, block, idx, rows)
            ncols = laid[7]
            for k in range(7):
                moved = k in (1, 3)  # R's columns and D's rows are columns: after ``base``
                pieces[k].append((laid[k], base if moved else 0))
            counts.append(np.array([[len(laid[0]), ncols, len(laid[3])]], dtype=np.int64))
            columns.add([ident] * ncols)
            order.add([ident])
            base += ncols
        keep(done, len(old.order))

        def joined(parts: list[Any], dtype: DTypeLike) -> Any:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        # indices in 32 bits when every one fits (a stored layout's are; half the memory)
        local = max((int(np.max(values)) for values, _ in pieces[6] if len(values)), default=0)
        index = np.int32 if max(base, len(names), local) < 1 << 31 else np.int64
        r_rows, r_cols, r_vals, d_rows, d_cols, d_vals, d_local = (
            _filled(parts, np.float64 if k in (2, 5) else index) for k, parts in enumerate(pieces)
        )
        spliced = _Assembly(
            names,
            order.joined(),
            joined(counts, np.int64).reshape(-1, 3),
            r_rows,
            r_cols,
            r_vals,
            d_rows,
            d_cols,
            d_vals,
            d_local,
            columns.joined(),
            old.import_rows,
            old.import_base,
            import_of=old.import_of,
            import_chat=old.import_chat,
        )
        # the old runs are copied: pages a stored layout read them from are not needed
        give_back(*(values for values, _ in _spliced_runs(old)))
        return spliced

    def _import_entries(
        self, a: _Assembly, import_edges: Mapping[str, Mapping[str, int]], idx: Mapping[str, int]
    ) -> tuple[Any, Any, Any]:
        """I's entries, importers in sorted order (as :func:`repomapper.graph.import_weights`
        gives them); an importer whose imports and chat status are unchanged reuses its rows,
        and the importers of a base held as arrays (a built or stored state's, see
        :class:`~repomapper.importrows.ImportRows`) that no update replaced reuse its entries
        without making their imports into objects."""
        import numpy as np

        kept = a.import_rows
        if len(kept) > 2 * len(import_edges) + 64:  # importers that left
            for gone in [p for p in kept if p not in import_edges]:
                del kept[gone]
        from_base = import_edges.from_base if isinstance(import_edges, Layered) else None
        if a.import_base is None and isinstance(import_edges, Layered):
            _register_import_base(a, import_edges.base, self.chat_files, idx)
        if (
            isinstance(import_edges, Layered)
            and a.import_base is not None
            and a.import_of is import_edges.base
        ):
            return self._entries_over_base(a, import_edges, idx)
        base = a.import_base
        pieces: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        rows: list[int] = []
        cols: list[int] = []
        vals: list[float] = []
        run: list[int] = []  # [lo, hi) of stored rows not copied yet

        def flush_lists() -> None:
            if rows:
                pieces[0].append(np.array(rows, dtype=np.int64))
                pieces[1].append(np.array(cols, dtype=np.int64))
                pieces[2].append(np.array(vals, dtype=np.float64))
                rows.clear()
                cols.clear()
                vals.clear()

        def flush_run() -> None:
            if run and base is not None:
                lo, hi = run
                pieces[0].append(base[0][lo:hi])
                pieces[1].append(base[1][lo:hi])
                pieces[2].append(base[2][lo:hi])
            run.clear()

        for importer in sorted(import_edges):
            chat = importer in self.chat_files
            hit = kept.get(importer)
            if (
                hit is not None
                and hit[0] is STORED
                and hit[1] == chat
                and from_base is not None
                and from_base(importer)
            ):
                flush_lists()
                if run and run[1] == hit[2]:
                    run[1] = hit[3]
                else:
                    flush_run()
                    run.extend((hit[2], hit[3]))
                continue
            edges = import_edges[importer]
            if hit is None or hit[0] is not edges or hit[1] != chat:
                row = idx.get(importer)
                r, c, v = (
                    _import_entries(importer, edges, row, idx, self.chat_files)
                    if row is not None
                    else ([], [], [])
                )
                hit = kept[importer] = (edges, chat, r, c, v)
            flush_run()
            rows.extend(hit[2])
            cols.extend(hit[3])
            vals.extend(hit[4])
        flush_run()
        flush_lists()
        if not pieces[0]:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64)
        if len(pieces[0]) == 1:  # one run of the base's entries: its views, not a copy
            return pieces[0][0], pieces[1][0], pieces[2][0]
        i_rows, i_cols, i_vals = (np.concatenate(p) for p in pieces)
        return i_rows, i_cols, i_vals

    def _entries_over_base(
        self, a: _Assembly, import_edges: Layered[str, Any], idx: Mapping[str, int]
    ) -> tuple[Any, Any, Any]:
        """I's entries from the base's (computed at once, see :func:`_register_import_base`)
        with the importers an update replaced or whose chat status changed laid out again
        between them: a walk over the few changed importers, not over every importer (on a
        large tree a Python step per importer was a visible part of an edit)."""
        import numpy as np

        rows, cols, vals = a.import_base  # type: ignore[misc]
        base = import_edges.base
        flipped = {p for p in a.import_chat ^ self.chat_files if p in base}
        dirty = sorted(set(import_edges.changed_keys()) | flipped)
        if not dirty:
            return rows, cols, vals
        pieces: tuple[list[Any], list[Any], list[Any]] = ([], [], [])
        done = 0  # the base's entries before this are in the pieces

        def add(r: Any, c: Any, v: Any) -> None:
            pieces[0].append(r)
            pieces[1].append(c)
            pieces[2].append(v)

        for importer in dirty:
            row = idx.get(importer)
            if row is None:
                continue
            lo = int(np.searchsorted(rows, row, "left"))
            hi = int(np.searchsorted(rows, row, "right"))
            if lo > done:
                add(rows[done:lo], cols[done:lo], vals[done:lo])
            done = max(done, hi)
            if importer not in import_edges:
                continue
            edges, chat = import_edges[importer], importer in self.chat_files
            hit = a.import_rows.get(importer)
            if hit is None or hit[0] is not edges or hit[1] != chat:
                r, c, v = _import_entries(importer, edges, row, idx, self.chat_files)
                hit = a.import_rows[importer] = (edges, chat, r, c, v)
            add(
                np.array(hit[2], dtype=np.int64),
                np.array(hit[3], dtype=np.int64),
                np.array(hit[4], dtype=np.float64),
            )
        add(rows[done:], cols[done:], vals[done:])
        i_rows, i_cols, i_vals = (np.concatenate(p) for p in pieces)
        return i_rows, i_cols, i_vals

    def factored(
        self,
        files: Iterable[str],
        import_edges: Mapping[str, Mapping[str, int]],
        definitions: DefinitionIndex,
    ) -> FactoredGraph:
        """The factored graph over ``files`` (identifiers in sorted order, so the matrices are
        the same however the blocks were arrived at), laid out against ``definitions``, the
        definition index of the same symbol table over the same files."""
        import numpy as np

        listed = definitions.files
        # the index's files in strictly increasing order, as many as the graph's and each of
        # them: the graph's files sorted (checked at C speed rather than sorted again)
        files = files if isinstance(files, Collection) else list(files)
        if not (
            len(listed) == len(files)
            and all(map(operator.lt, listed, itertools.islice(listed, 1, None)))
            and all(map(files.__contains__, listed))
        ):
            raise ValueError("the definition index is not over the graph's files")
        names = tuple(listed)
        a = self._assembly(names, definitions)
        idx = _FileIds(names)
        n, k = len(names), len(a.columns)
        R = Coo(a.r_rows, a.r_cols, a.r_vals, (n, k))
        D = Coo(a.d_rows, a.d_cols, a.d_vals, (k, n))
        i_rows, i_cols, i_vals = self._import_entries(a, import_edges, idx)
        I = Coo(i_rows, i_cols, i_vals, (n, n))  # noqa: E741
        out_weight = R.dot(D.row_sums()) + I.row_sums() if n else np.zeros(0)
        return FactoredGraph(
            list(names),
            a.columns,
            R,
            D,
            I,
            np.asarray(out_weight, dtype=np.float64),
            definitions,
            (a.d_rows, a.d_cols, a.d_vals, a.d_local),
        )


class LaidOutBlocks(Mapping[str, IdentBlock]):
    """The identifiers of a layout (a built or stored state's); a block is computed from the
    table when read (only an update that touched the identifier, or laying out a new file
    set, reads one)."""

    def __init__(
        self,
        table: SymbolTable,
        assembly: _Assembly,
        chat: frozenset[str],
        mentioned: frozenset[str],
    ) -> None:
        self._table, self._assembly = table, assembly
        self._chat, self._mentioned = chat, mentioned

    def __getitem__(self, ident: str) -> IdentBlock:
        if self._assembly.position(ident) is None:
            raise KeyError(ident)
        block = ident_block(self._table, ident, self._chat, self._mentioned)
        if block is None:
            raise KeyError(ident)
        return block

    def __contains__(self, ident: object) -> bool:
        return self._assembly.position(ident) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._assembly.order)

    def __len__(self) -> int:
        return len(self._assembly.order)


class _FileIds(Mapping[str, int]):
    """A sorted file list's positions, found by bisection (no dict of every file)."""

    __slots__ = ("_files",)

    def __init__(self, files: Sequence[str]):
        self._files = files

    def get(self, path: object, default: Any = None) -> Any:
        if not isinstance(path, str):
            return default
        i = bisect_left(self._files, path)
        return i if i < len(self._files) and self._files[i] == path else default

    def __getitem__(self, path: str) -> int:
        found: int | None = self.get(path)
        if found is None:
            raise KeyError(path)
        return found

    def __contains__(self, path: object) -> bool:
        return self.get(path) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._files)

    def __len__(self) -> int:
        return len(self._files)


def _spliced_runs(a: _Assembly) -> tuple[tuple[Any, bool], ...]:
    """The layout's seven entry arrays, in :class:`_Assembly`'s order, each with whether its
    values are columns (shifted when a splice moves the identifier's columns)."""
    return (
        (a.r_rows, False),
        (a.r_cols, True),
        (a.r_vals, False),
        (a.d_rows, True),
        (a.d_cols, False),
        (a.d_vals, False),
        (a.d_local, False),
    )


def _filled(parts: Sequence[tuple[Any, int]], dtype: DTypeLike) -> Any:
    """One array of ``dtype`` holding each part's values plus its shift, in order."""
    import numpy as np

    out = np.empty(sum(len(values) for values, _ in parts), dtype=dtype)
    at = 0
    for values, shift in parts:
        end = at + len(values)
        if shift:
            np.add(values, shift, out=out[at:end], casting="unsafe")
        else:
            out[at:end] = values
        at = end
    return out


def _import_entries(
    importer: str,
    edges: Mapping[str, int],
    row: int,
    idx: Mapping[str, int],
    chat_files: frozenset[str],
) -> tuple[list[int], list[int], list[float]]:
    """One importer's entries of the import matrix (row, column, weight): its edges to files
    that have a column, weighed as :func:`import_weights` does."""
    r: list[int] = []
    c: list[int] = []
    v: list[float] = []
    for _, target, weight in import_weights({importer: edges}, chat_files):
        col = idx.get(target)
        if col is not None:
            r.append(row)
            c.append(col)
            v.append(weight)
    return r, c, v


def _register_import_base(
    a: _Assembly, base: Mapping[str, Any], chat: frozenset[str], idx: Mapping[str, int]
) -> None:
    """Compute the import matrix's entries of a base held as arrays at once and let each of
    its importers point into them (see :meth:`FactorBlocks._import_entries`)."""
    from .importrows import ImportRows

    if not isinstance(base, ImportRows) or tuple(base.files) != a.files:
        return
    (rows, cols, vals), ranges = base.entries(chat)
    a.import_base = (rows, cols, vals)
    a.import_of, a.import_chat = base, chat
    for importer, lo, hi in ranges:
        a.import_rows[importer] = (STORED, importer in chat, lo, hi)


def _laid_out(
    table: SymbolTable,
    t: TableArrays,
    definitions: DefinitionIndex,
    local: Any,
    chat: frozenset[str],
    mentioned: frozenset[str],
) -> _Assembly:
    """The layout :meth:`FactorBlocks._assemble` gives, computed over the table's arrays: an
    identifier no reference of which the backend resolved has one column, its external
    referencers (R, in file order, weighed by :func:`repomapper.graph.ident_weights`'s rule)
    and its definers (D, in file order); the few whose references were resolved to files are
    laid out block by block as an update lays them out."""
    import numpy as np

    n, m = len(t.files), len(t.names)
    ref_names, def_names = t.ref_names(), t.def_names()
    external = ~t.internal_refs()
    outside = np.bincount(ref_names[external], minlength=m)
    def_n = t.def_n
    has_block = (def_n > 0) & (outside > 0)
    resolved = has_block & (np.diff(t.tg_at) > 0)
    plain = has_block & ~resolved
    block_ids = np.flatnonzero(has_block)
    at_block = np.full(m, -1, dtype=np.int64)
    at_block[block_ids] = np.arange(len(block_ids))
    names = t.names
    mul = np.zeros(m, dtype=np.float64)
    mul[block_ids] = [
        identifier_multiplier(names[k], d, mentioned)
        for k, d in zip(block_ids.tolist(), def_n[block_ids].tolist(), strict=True)
    ]
    boost = np.ones(n, dtype=np.float64)
    for f in chat:
        i = bisect_left(t.files, f)
        if i < n and t.files[i] == f:
            boost[i] = CHAT_MULTIPLIER
    counts = np.zeros((len(block_ids), 3), dtype=np.int64)
    counts[at_block[plain], 0] = outside[plain]
    counts[at_block[plain], 1] = 1
    counts[at_block[plain], 2] = def_n[plain]
    by_blocks: dict[int, _BlockRows] = {}
    if resolved.any():
        idx, rows = _FileIds(t.files), RowsAt(t.files, definitions.rows)
        for k in np.flatnonzero(resolved).tolist():
            ident = names[k]
            block = ident_block(table, ident, chat, mentioned)
            if block is None:  # (a name with a reference from outside has a block)
                raise ValueError(f"no block for {ident!r}")
            got = by_blocks[k] = _block_rows(ident, block, idx, rows)
            counts[at_block[k]] = (len(got[0]), got[7], len(got[3]))
    starts = np.zeros((len(block_ids) + 1, 3), dtype=np.int64)
    np.cumsum(counts, axis=0, out=starts[1:])
    total = starts[-1]
    r_rows, r_cols = np.empty(total[0], np.int32), np.empty(total[0], np.int32)
    r_vals = np.empty(total[0], np.float64)
    d_rows, d_cols = np.empty(total[2], np.int32), np.empty(total[2], np.int32)
    d_vals, d_local = np.empty(total[2], np.float64), np.empty(total[2], np.int32)
    # the plain blocks: each name's entries are a run of the table's (grouped by name, then
    # file), placed at its block's start
    pick = external & plain[ref_names]
    del external
    rn, rf, rc = ref_names[pick], t.ref_file[pick], t.ref_count[pick]
    del ref_names, pick
    for part, at, names_at in _run_positions(rn, starts[:, 0], at_block):
        r_rows[at] = rf[part]
        r_cols[at] = starts[names_at, 1]
        r_vals[at] = mul[rn[part]] * boost[rf[part]] * np.sqrt(rc[part].astype(np.float64))
    del rn, rf, rc
    pick = plain[def_names]
    dn, df, dd, dl = def_names[pick], t.def_file[pick], t.def_data[pick], local[pick]
    del def_names, pick
    for part, at, names_at in _run_positions(dn, starts[:, 2], at_block):
        d_rows[at] = starts[names_at, 1]
        d_cols[at] = df[part]
        d_vals[at] = np.where(dd[part], DATA_DEFINITION_FACTOR, 1.0)
        d_local[at] = dl[part]
    del dn, df, dd, dl
    for k, (rr, rc_, rv, dr, dc, dv, dl, _) in by_blocks.items():
        (r0, c0, d0) = starts[at_block[k]].tolist()
        r_rows[r0 : r0 + len(rr)], r_cols[r0 : r0 + len(rr)] = rr, np.array(rc_, np.int64) + c0
        r_vals[r0 : r0 + len(rr)] = rv
        d_rows[d0 : d0 + len(dr)], d_cols[d0 : d0 + len(dr)] = np.array(dr, np.int64) + c0, dc
        d_vals[d0 : d0 + len(dr)], d_local[d0 : d0 + len(dr)] = dv, dl
    order = t.name_objects[block_ids]
    return _Assembly(
        tuple(t.files),
        order,
        counts,
        r_rows,
        r_cols,
        r_vals,
        d_rows,
        d_cols,
        d_vals,
        d_local,
        np.repeat(order, counts[:, 1]),
        order_ids=block_ids,
    )


def _run_positions(
    names: Any, block_starts: Any, at_block: Any
) -> Iterator[tuple[slice, Any, Any]]:
    """Where each entry of ``names`` (name ids, sorted: one run per name) goes in a block's
    rows: its block's start plus its place in its name's run. A chunk at a time, as (the
    chunk, its entries' positions, their block numbers): on a large tree the index arrays of
    every entry at once were the peak of the build."""
    import numpy as np

    for part in element_chunks(len(names)):
        ids = names[part]
        names_at = at_block[ids]
        at = np.arange(part.start, part.stop, dtype=np.int64)
        at -= np.searchsorted(names, ids)
        at += block_starts[names_at]
        yield part, at, names_at


def factor_graph(
    files: Iterable[str],
    table: SymbolTable,
    import_edges: Mapping[str, Mapping[str, int]],
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> FactoredGraph:
    definitions = DefinitionIndex.build(table, files)
    blocks = FactorBlocks.build(table, chat_files, mentioned_idents)
    return blocks.factored(definitions.files, import_edges, definitions)


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
    R, D, I = g.R, g.D, g.I  # noqa: E741
    x = np.full(n, 1.0 / n)
    for _ in range(PAGERANK_MAX_ITER):
        last = x
        w = x * inv
        flow = D.tdot(R.tdot(w)) + I.tdot(w)
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
    weights: Mapping[str, float] | None = None,
    before: PairScores | None = None,
) -> Ranking:
    """Distribute each file's rank over its out-edges to (definer, identifier) pairs.

    Rank that arrives over an import edge is shared equally by the target's top-level classes and
    functions, so an imported module's API is ranked even when no name matched. Unreferenced
    definitions share a tenth of their file's rank. A definition's rank is multiplied by its
    file's role weight (``weights``, see :func:`role_weights`). The pairs are those of the
    definition index the graph was laid out against.

    ``before``: the pair scores of the ranking this one replaces, when the caller knows that
    the file ranks, role weights and mentions are the ones they were computed with and that no
    reference moved rank between files (see :func:`repomapper.graphstate.update_state`). When
    the definition arrays were spliced from ``before``'s, only the pairs of the files laid out
    again are computed; every other pair keeps its rank, to the bit.
    """
    import numpy as np

    if g.definitions is None or g.d_entries is None:
        raise ValueError("a graph loaded from a snapshot has no definition index to rank")
    a = g.definitions.arrays
    spliced = g.definitions.spliced_from()
    if (
        before is not None
        and spliced is not None
        and spliced[0] is before.arrays
        and len(before.file_rank) == len(g.files)
    ):
        scores = _pair_ranks_again(g, a, before, spliced[1], mentioned_idents, weights, table)
    else:
        x = np.array([file_ranks.get(f, 0.0) for f in g.files], dtype=np.float64)
        ranked, received = np.zeros(len(a.idents)), np.zeros(len(a.idents), dtype=bool)
        _pair_ranks(g, a, x, mentioned_idents, weights, table, ranked, received)
        file_scores = {f: stable(r) for f, r in file_ranks.items()}
        by_file = np.array([file_scores.get(f, 0.0) for f in g.files], dtype=np.float64)
        scores = PairScores(a, ranked, received, x, file_scores, by_file)
    kept = np.flatnonzero(scores.received)
    order = PairOrder(scores.ranked[kept], scores.by_file, a.pair_file[kept])
    items = RankedPairs.ordered(
        a.file_names,
        a.pair_file,
        a.idents,
        kept.astype(np.int32 if len(a.idents) < 1 << 31 else np.int64),
        order,
        a.ident_ids,
    )
    return Ranking(scores.file_scores, items, scores)


def _pair_ranks(
    g: FactoredGraph,
    a: Any,
    x: Any,
    mentioned_idents: frozenset[str],
    weights: Mapping[str, float] | None,
    table: SymbolTable,
    ranked: Any,
    received: Any,
    only: Sequence[int] | None = None,
) -> None:
    """Add each pair's rank from the file ranks ``x`` to ``ranked`` (zero there) and mark in
    ``received`` the pairs any rank reached: every pair's, or those of the files ``only``
    (every other pair is left as it is: a pair of file f receives only from D entries of
    column f, from f's top-level share and from f's own unreferenced share, and the others
    gain exactly nothing here)."""
    import numpy as np

    n, pairs = len(g.files), len(a.idents)
    mine = None  # the files whose pairs are ranked, when not all
    if only is not None:
        mine = np.zeros(n, dtype=bool)
        mine[list(only)] = True
    if n and pairs:
        w = np.divide(x, g.out_weight, out=np.zeros(n), where=g.out_weight > 0)
        d_rows, d_cols, d_vals, d_local = g.d_entries  # type: ignore[misc]
        if mine is not None:
            sel = np.flatnonzero(mine[d_cols])
            d_rows, d_cols, d_vals, d_local = d_rows[sel], d_cols[sel], d_vals[sel], d_local[sel]
            per_entry = g.R.tdot_at(w, d_rows)  # (the columns of these files' D entries only)
        else:
            per_entry = g.R.tdot(w)[d_rows]
        ids = a.offsets[d_cols] + d_local
        ranked += np.bincount(ids, per_entry * d_vals, minlength=pairs)
        received[ids] = True
        imported = g.I.tdot(w)[a.top_file]
        hit = imported != 0
        if mine is not None:
            hit &= mine[a.top_file]
        ranked += np.bincount(a.top_ids[hit], imported[hit] / a.top_count[hit], minlength=pairs)
        received[a.top_ids[hit]] = True
        unref = a.unreferenced if mine is None else a.unreferenced & mine[a.pair_file]
        owner = a.pair_file[unref]
        totals = np.bincount(owner, a.kind[unref], minlength=n)
        ranked[unref] += x[owner] * SELF_SHARE * a.kind[unref] / totals[owner]
        received |= unref
        if weights:
            if only is None:
                factor = np.array([weights.get(f, 1.0) for f in g.files], dtype=np.float64)
                ranked *= factor[a.pair_file]
            else:  # (the other files' pairs would be multiplied by 1: left as they are)
                for i in only:
                    lo, hi = int(a.offsets[i]), int(a.offsets[i + 1])
                    ranked[lo:hi] *= weights.get(g.files[i], 1.0)
    _boost_mentioned(g, a, ranked, received, mentioned_idents, table, only)


def _boost_mentioned(
    g: FactoredGraph,
    a: Any,
    ranked: Any,
    received: Any,
    mentioned_idents: frozenset[str],
    table: SymbolTable,
    only: Sequence[int] | None,
) -> None:
    """Multiply the rank of each pair a mentioned name names (of the files ``only``, or all)."""
    position = _FileIds(g.files)
    wanted = None if only is None else frozenset(only)
    for ident in mentioned_idents:
        for definer in table.defines.get(ident, ()):
            at = position.get(definer, -1)
            if wanted is not None and at not in wanted:
                continue
            pid = a.pair(at, ident)
            if pid is not None and received[pid]:
                ranked[pid] *= MENTIONED_BOOST


def _pair_ranks_again(
    g: FactoredGraph,
    a: Any,
    before: PairScores,
    redo: Sequence[int],
    mentioned_idents: frozenset[str],
    weights: Mapping[str, float] | None,
    table: SymbolTable,
) -> PairScores:
    """The pair scores for arrays spliced from ``before.arrays`` with the files ``redo`` laid
    out again: the other files' pairs keep their values (moved to where their files' pairs
    are now), and the pairs of ``redo`` are ranked by :func:`_pair_ranks`, by the same
    operations in the same order as when every pair is."""
    import numpy as np

    old, x = before.arrays, before.file_rank
    n, pairs = len(g.files), len(a.idents)
    ranked = np.empty(pairs)
    received = np.empty(pairs, dtype=bool)
    done = 0  # files before this are placed
    for i in [*redo, n]:
        if i > done:
            lo, hi, at = int(old.offsets[done]), int(old.offsets[i]), int(a.offsets[done])
            ranked[at : at + hi - lo] = before.ranked[lo:hi]
            received[at : at + hi - lo] = before.received[lo:hi]
        if i < n:
            lo, hi = int(a.offsets[i]), int(a.offsets[i + 1])
            ranked[lo:hi] = 0.0
            received[lo:hi] = False
        done = i + 1
    _pair_ranks(g, a, x, mentioned_idents, weights, table, ranked, received, redo)
    return PairScores(a, ranked, received, x, before.file_scores, before.by_file)


def stable_array(x: ArrayLike) -> NDArray[np.float64]:
    """:func:`stable` for a numpy array: each value rounded to 12 significant digits."""
    import numpy as np

    out = np.array(x, dtype=np.float64)
    for chunk in element_chunks(len(out)):
        part = out[chunk]  # a view: rounded in place
        nz = np.flatnonzero(np.isfinite(part) & (np.abs(part) > 1e-280))
        if len(nz):
            digits = 11 - np.floor(np.log10(np.abs(part[nz])))
            scale = 10.0**digits
            part[nz] = np.round(part[nz] * scale) / scale
    return out
