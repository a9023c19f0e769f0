"""The ranked repository: what :meth:`RepoMap.rank` returns and every output renders from.

It holds the ranking (files with scores and reasons, (file, identifier) pairs best first) and the
extracted repository it was computed on, so the map, the context packs and the MCP tools read one
ranking instead of each ranking again.
"""

from __future__ import annotations

import collections
import functools
import heapq
import itertools
import math
import operator
from collections.abc import Callable, Container, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar, overload

from .fileentry import FileEntry
from .graph import SymbolTable
from .madeonread import MadeOnRead
from .model import Diagnostic, FileSymbols, RankedFile, Reason, Tag, made_ranked_file, made_reason
from .relevance.symbol_weights import SymbolWeights, shipped_symbol_weights
from .relevance.symbols import SymbolKey, definition_key, task_evidence
from .render import Item

T = TypeVar("T")


def _made_in_columns(cls: type[T], names: Sequence[str]) -> Callable[..., list[T]]:
    """A constructor of ``n`` objects of the frozen, slotted dataclass ``cls`` at once from one
    column of values per slot in ``names``: the slots are set directly and the loops run in
    ``map`` rather than in Python frames (see :func:`~repomapper.model.made_reason`)."""
    setters = tuple(getattr(cls, name).__set__ for name in names)
    new = object.__new__

    def make(n: int, *columns: Iterable[object]) -> list[T]:
        objs = list(map(new, itertools.repeat(cls, n)))
        for setter, column in zip(setters, columns, strict=True):
            collections.deque(map(setter, objs, column), maxlen=0)
        return objs

    return make


#: the one reason of each file of a ranking without a task: (signal, detail)
PAGERANK, GRAPH = "pagerank", "reference graph"
_reasons_made = _made_in_columns(Reason, ("signal", "detail", "weight"))
_files_made = _made_in_columns(RankedFile, ("path", "score", "why"))


class PageRankedFiles(MadeOnRead[RankedFile]):
    """Files ranked by the reference graph alone (no task), best first, each with its one
    reason; the :class:`RankedFile` objects are made as they are read (an answer lists a few
    dozen of thousands: making them all cost several milliseconds of each call). What
    :meth:`made` and :meth:`positions` make is kept: a state whose ranking an edit left as it
    was hands every later call the same instance (see
    :func:`~repomapper.stages.ranking.ranked_files`)."""

    __slots__ = ("ranks", "_ranks", "_made", "_positions")

    def __init__(self, file_ranks: Mapping[str, float]):
        #: the ranks these files were made from
        self.ranks = file_ranks
        # best first, ties by path: by path, then stably by rank (no key function per file)
        self._ranks = sorted(sorted(file_ranks.items()), key=operator.itemgetter(1), reverse=True)
        self._made: tuple[RankedFile, ...] | None = None
        self._positions: dict[str, int] | None = None

    @staticmethod
    def _file(path: str, rank: float) -> RankedFile:
        return made_ranked_file(path, rank, (made_reason(PAGERANK, GRAPH, rank),))

    def __len__(self) -> int:
        return len(self._ranks)

    @overload
    def __getitem__(self, i: int) -> RankedFile: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[RankedFile]: ...
    def __getitem__(self, i: int | slice) -> RankedFile | Sequence[RankedFile]:
        if isinstance(i, slice):
            return tuple(self._file(p, r) for p, r in self._ranks[i])
        return self._file(*self._ranks[i])

    def __iter__(self) -> Iterator[RankedFile]:
        return (self._file(p, r) for p, r in self._ranks)

    def _rows(self) -> list[tuple[str, float]]:
        return self._ranks

    def made(self) -> tuple[RankedFile, ...]:
        """Every file, made at once: what iterating gives, at a fraction of the cost (made
        once: on a large tree, a hundred thousand objects each call, and the collections of
        the long-lived objects they set off)."""
        if self._made is None:
            paths = [p for p, _ in self._ranks]
            ranks = [r for _, r in self._ranks]
            self._made = ranked_files_made(paths, ranks, [None] * len(ranks))
        return self._made

    def positions(self) -> dict[str, int]:
        """Each file's position (kept; callers must not change it)."""
        if self._positions is None:
            self._positions = {p: i for i, (p, _) in enumerate(self._ranks)}
        return self._positions


def ranked_files_made(
    paths: Sequence[str], scores: Sequence[float], whys: Sequence[tuple[Reason, ...] | None]
) -> tuple[RankedFile, ...]:
    """``RankedFile(path, score, why)`` for each path, score and why, all made at once; a why
    of None stands for the one reason of a ranking without a task, ``Reason("pagerank",
    "reference graph", score)``."""
    n = len(paths)
    plain = [i for i, why in enumerate(whys) if why is None]
    if len(plain) == n:  # (a ranking without a task: every file has its one reason)
        made_whys: Iterable[tuple[Reason, ...] | None] = zip(
            _reasons_made(n, itertools.repeat(PAGERANK), itertools.repeat(GRAPH), scores)
        )
    else:
        filled = list(whys)
        for i in plain:
            filled[i] = (made_reason(PAGERANK, GRAPH, scores[i]),)
        made_whys = filled
    return tuple(_files_made(n, paths, scores, made_whys))


def files_made(files: Sequence[RankedFile]) -> tuple[RankedFile, ...]:
    """``files`` as a tuple (made at once when they are a ranking without a task)."""
    return files.made() if isinstance(files, PageRankedFiles) else tuple(files)


@dataclass(frozen=True)
class RankedRepository:
    #: every mapped file, best first, with its score and the reasons for it
    files: Sequence[RankedFile]
    #: (file, identifier, score) by their rank in the reference graph, best first
    definitions: Sequence[tuple[str, str, float]]
    #: per file, its identifiers in the order of ``definitions``
    by_file: Mapping[str, list[tuple[str, float]]]
    #: task evidence per definition (file, qualified name, first line: see
    #: :func:`~repomapper.relevance.symbols.definition_key`); negative for an incidental
    #: definition (a variable, a helper nested in a function) the task does not name: it sorts
    #: last in its file
    symbol_scores: Mapping[SymbolKey, float]
    symbol_reasons: Mapping[SymbolKey, tuple[Reason, ...]]
    #: files the task names by path, module or traceback frame
    named: frozenset[str]
    chat: frozenset[str]
    mapped: Mapping[str, FileSymbols]
    table: SymbolTable
    entries: list[FileEntry]
    all_entries: list[FileEntry]
    seen: int
    diagnostics: tuple[Diagnostic, ...]
    #: ranked for a task (the relevance model) rather than by Aider's PageRank alone
    task: bool = False
    #: importer -> {imported file: count}, as each importer's backend resolved them
    imports: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def symbols_of(self, path: str) -> list[tuple[str, float]]:
        """A file's identifiers, best first: by the task evidence of their best definition
        (strongest first), then by their rank in the reference graph; incidental ones the task
        does not name last."""
        ranked = self.by_file.get(path, [])
        if not self.task or path not in self._scored_names:
            return ranked
        rank = dict(ranked)
        return [
            (ident, rank[ident])
            for ident in dict.fromkeys(i for i, _, _ in self.definitions_in(path))
        ]

    def definitions_in(self, path: str) -> list[tuple[str, int | None, float]]:
        """With a task, a file's definitions best first by their own task evidence (ties by the
        identifier's rank in the reference graph, then by line): (identifier, which of its
        definitions in the file, or None for all of them, evidence). An identifier's definitions
        are apart only when their evidence differs (``__init__`` of two classes, ``parens``
        nested in each method); otherwise they are one entry, as without a task."""
        ranked = self.by_file.get(path, [])
        names = self._scored_names.get(path) if self.task else None
        if not names:
            return [(ident, None, 0.0) for ident, _ in ranked]
        return ordered_definitions(
            [ident for ident, _ in ranked],
            names,
            lambda ident: [_definition_evidence(self, path, t) for t in self._tags(path, ident)],
        )

    def _tags(self, path: str, ident: str) -> Sequence[Tag]:
        """``ident``'s definitions in ``path``, in the order a map entry's ``skip`` counts."""
        return self.table.definitions.get((path, ident), ()) if self.table is not None else ()

    @functools.cached_property
    def _scored_names(self) -> dict[str, frozenset[str]]:
        """Per file, the names of its definitions the task gave evidence for (or an incidental
        score): only their definitions are read (a stored table makes each row when read)."""
        names: dict[str, set[str]] = {}
        for path, qualified, _ in itertools.chain(self.symbol_scores, self.symbol_reasons):
            names.setdefault(path, set()).update(name_suffixes(qualified))
        return {p: frozenset(n) for p, n in names.items()}


def name_suffixes(qualified: str) -> list[str]:
    """The identifiers a definition with this qualified name may be listed under: its last
    part, or more when a name holds a dot (``a.b.c``: ``c``, ``b.c``, ``a.b.c``)."""
    parts = qualified.split(".")
    return [".".join(parts[i:]) for i in range(len(parts))]


def ordered_definitions(
    idents: Sequence[str],
    scored: Container[str],
    evidence_of: Callable[[str], list[float]],
) -> list[tuple[str, int | None, float]]:
    """A file's identifiers (``idents``, in the reference graph's order) as
    :meth:`RankedRepository.definitions_in` orders them: best first by the task evidence of
    their definitions (``evidence_of``, read only for the ``scored`` ones), ties by the graph's
    order, then by line; an identifier's definitions apart when their evidence differs."""
    rows: list[tuple[float, int, int, str, int | None]] = []
    for i, ident in enumerate(idents):
        if ident not in scored:  # no evidence: its definitions are not read
            rows.append((0.0, i, 0, ident, None))
            continue
        evidence = evidence_of(ident)
        if len(set(evidence)) > 1:
            rows.extend((-e, i, j, ident, j) for j, e in enumerate(evidence))
        else:
            rows.append((-evidence[0] if evidence else 0.0, i, 0, ident, None))
    rows.sort(key=lambda r: r[:3])
    return [(ident, which, -neg) for neg, _, _, ident, which in rows]


def _definition_evidence(ranked: RankedRepository, path: str, tag: Tag) -> float:
    """A definition's task evidence: its score and the evidence among its reasons."""
    key = definition_key(path, tag)
    return task_evidence(ranked.symbol_scores.get(key, 0.0), ranked.symbol_reasons.get(key, ()))


def map_items(ranked: RankedRepository) -> Iterator[Item]:
    """The entries of the map, most wanted first (lazily: the fill stops long before the end).

    Without a task: Aider's order, (file, identifier) pairs by rank, then files without
    definitions. With a task the map follows the file ranking: the k-th symbol of a file with
    score ``s`` is wanted as much as ``s * place_share / k ** place_power``, or as ``s`` times
    its task evidence over the best definition's of the whole task raised to
    ``evidence_power`` (fitted constants, :mod:`.relevance.symbol_weights`) when that is more
    (never more than the symbol before it), so each well-ranked file shows its first symbols before the best file shows its tenth
    unremarkable one, the functions the task is about come together, and the files the task
    names come first of all. A power below 1, and the task's best rather than the file's:
    evidence spans orders of magnitude (a name the task writes against a few of its
    words in a body), and a definition with a tenth of the best evidence is still likelier what
    the task is about than a lower file's first symbol; against its own file's best, the second
    function of a file whose first the text names came after every other file's first.
    """
    chat = ranked.chat
    if not ranked.task:
        with_defs = set()
        for f, i, r in ranked.definitions:
            if f not in chat:
                with_defs.add(f)
                yield Item(f, i, r)
        for rf in ranked.files:
            if rf.path not in chat and rf.path not in with_defs:
                yield Item(rf.path, None, rf.score)
        return
    files = [(pos, rf) for pos, rf in enumerate(ranked.files) if rf.path not in chat]
    best = _best_evidence(ranked)
    sw = shipped_symbol_weights()
    named = [(pos, rf) for pos, rf in files if rf.path in ranked.named]
    firsts: set[str] = set()
    for _, rf in named:
        symbols = ranked.definitions_in(rf.path)
        if symbols and symbols[0][2] <= 0:
            continue  # named, but none of its definitions is: ranked by its score alone
        firsts.add(rf.path)
        yield _item(rf.path, symbols[0][:2], rf.score) if symbols else Item(rf.path, None, rf.score)

    def of_file(pos: int, rf: RankedFile) -> Iterator[tuple[tuple[float, int, int], Item]]:
        symbols = ranked.definitions_in(rf.path)
        if not symbols:
            if rf.path not in firsts:
                yield (-rf.score, pos, 0), Item(rf.path, None, rf.score)
            return
        last = rf.score
        for k, (ident, which, evidence) in enumerate(symbols):
            # as wanted as its own evidence says, never more than the symbol before it
            want = min(last, symbol_want(rf.score, k, evidence, best, sw))
            last = want
            if k == 0 and rf.path in firsts:
                continue
            yield (-want, pos, k), _item(rf.path, (ident, which), want)

    yield from _merged(files, of_file)


def symbol_want(
    file_score: float, k: int, evidence: float, best: float, sw: SymbolWeights
) -> float:
    """How much the map wants the ``k``-th (from 0) definition of a file scored
    ``file_score`` whose task evidence is ``evidence`` (``best``: the task's best), before
    the cap by the definition before it (:func:`map_items`)."""
    share = math.pow(max(evidence, 0.0) / best, sw.evidence_power) if best > 0 else 0.0
    place = sw.place_share / math.pow(k + 1, sw.place_power)
    return file_score * max(place, share)


def _best_evidence(ranked: RankedRepository) -> float:
    """The strongest task evidence of any definition (0 when none has any)."""
    keys = itertools.chain(ranked.symbol_scores, ranked.symbol_reasons)
    return max(
        (
            task_evidence(ranked.symbol_scores.get(k, 0.0), ranked.symbol_reasons.get(k, ()))
            for k in keys
        ),
        default=0.0,
    )


def _item(path: str, definition: tuple[str, int | None], want: float) -> Item:
    """The map entry of one identifier's definitions in ``path``, or of the one of them."""
    ident, which = definition
    if which is None:
        return Item(path, ident, want)
    return Item(path, ident, want, limit=which + 1, skip=which)


def _merged(
    files: list[tuple[int, RankedFile]],
    of_file: Callable[[int, RankedFile], Iterator[tuple[tuple[float, int, int], Item]]],
) -> Iterator[Item]:
    """The items of every file's stream in key order, as ``heapq.merge`` gives them, but a file's
    stream is started only when it can hold the next item: no key of a file with score ``s`` at
    position ``pos`` comes before ``(-s, pos, 0)``. A map takes a few hundred items, so the
    symbols of the thousands of files far down the ranking are never sorted."""
    if any(rf.score < 0 for _, rf in files):  # the bound needs scores of 0 or more
        for _, item in heapq.merge(*(of_file(p, rf) for p, rf in files), key=lambda x: x[0]):
            yield item
        return
    waiting = sorted(files, key=lambda x: (-x[1].score, x[0]))
    heap: list[
        tuple[tuple[float, int, int], Item, Iterator[tuple[tuple[float, int, int], Item]]]
    ] = []
    nxt = 0
    while True:
        while nxt < len(waiting) and (
            not heap or (-waiting[nxt][1].score, waiting[nxt][0], 0) <= heap[0][0]
        ):
            pos, rf = waiting[nxt]
            nxt += 1
            stream = of_file(pos, rf)
            first = next(stream, None)
            if first is not None:
                heapq.heappush(heap, (first[0], first[1], stream))
        if not heap:
            return
        _, item, stream = heapq.heappop(heap)
        yield item
        following = next(stream, None)
        if following is not None:
            heapq.heappush(heap, (following[0], following[1], stream))
