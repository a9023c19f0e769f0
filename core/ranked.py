"""The ranked repository: what :meth:`RepoMap.rank` returns and every output renders from.

It holds the ranking (files with scores and reasons, (file, identifier) pairs best first) and the
extracted repository it was computed on, so the map, the context packs and the MCP tools read one
ranking instead of each ranking again.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import overload

from .discover import FileEntry
from .graph import SymbolTable
from .madeonread import MadeOnRead
from .model import Diagnostic, FileSymbols, RankedFile, Reason
from .relevance.symbols import task_evidence
from .render import Item


class PageRankedFiles(MadeOnRead[RankedFile]):
    """Files ranked by the reference graph alone (no task), best first, each with its one
    reason; the :class:`RankedFile` objects are made as they are read (an answer lists a few
    dozen of thousands: making them all cost several milliseconds of each call)."""

    __slots__ = ("_ranks",)

    def __init__(self, file_ranks: Mapping[str, float]):
        self._ranks = sorted(file_ranks.items(), key=lambda x: (-x[1], x[0]))

    @staticmethod
    def _file(path: str, rank: float) -> RankedFile:
        return RankedFile(path, rank, (Reason("pagerank", "reference graph", rank),))

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


@dataclass(frozen=True)
class RankedRepository:
    #: every mapped file, best first, with its score and the reasons for it
    files: Sequence[RankedFile]
    #: (file, identifier, score) by their rank in the reference graph, best first
    definitions: Sequence[tuple[str, str, float]]
    #: per file, its identifiers in the order of ``definitions``
    by_file: Mapping[str, list[tuple[str, float]]]
    #: task evidence per (file, identifier); negative for an incidental definition (a variable,
    #: a helper nested in a function) the task does not name: it sorts last in its file
    symbol_scores: Mapping[tuple[str, str], float]
    symbol_reasons: Mapping[tuple[str, str], tuple[Reason, ...]]
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
        """A file's identifiers, best first: by their task evidence (strongest first), then by
        their rank in the reference graph; incidental ones the task does not name last."""
        ranked = self.by_file.get(path, [])
        if not self.task:
            return ranked
        order = sorted(range(len(ranked)), key=lambda i: (-_evidence(self, path, ranked[i][0]), i))
        return [ranked[i] for i in order]


def _evidence(ranked: RankedRepository, path: str, ident: str) -> float:
    """A symbol's task evidence: its score and the words evidence among its reasons."""
    return task_evidence(
        ranked.symbol_scores.get((path, ident), 0.0), ranked.symbol_reasons.get((path, ident), ())
    )


def map_items(ranked: RankedRepository) -> Iterator[Item]:
    """The entries of the map, most wanted first (lazily: the fill stops long before the end).

    Without a task: Aider's order, (file, identifier) pairs by rank, then files without
    definitions. With a task the map follows the file ranking: the k-th symbol of a file with score
    ``s`` is wanted as much as ``s / k``, or as ``s`` times its task evidence over the file's
    best symbol's when that is more (never more than the symbol before it), so each well-ranked
    file shows its first symbols before the best file shows its tenth unremarkable one, the
    functions the task is about come together, and the files the task names come first of all.
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
    named = [(pos, rf) for pos, rf in files if rf.path in ranked.named]
    firsts: set[str] = set()
    for _, rf in named:
        symbols = ranked.symbols_of(rf.path)
        firsts.add(rf.path)
        yield Item(rf.path, symbols[0][0] if symbols else None, rf.score)

    def of_file(pos: int, rf: RankedFile) -> Iterator[tuple[tuple[float, int, int], Item]]:
        symbols = ranked.symbols_of(rf.path)
        if not symbols:
            if rf.path not in firsts:
                yield (-rf.score, pos, 0), Item(rf.path, None, rf.score)
            return
        best = max(_evidence(ranked, rf.path, symbols[0][0]), 0.0)
        last = rf.score
        for k, (ident, _) in enumerate(symbols):
            share = _evidence(ranked, rf.path, ident) / best if best > 0 else 0.0
            # as wanted as its own evidence says, never more than the symbol before it
            want = min(last, rf.score * max(1.0 / (k + 1), share))
            last = want
            if k == 0 and rf.path in firsts:
                continue
            yield (-want, pos, k), Item(rf.path, ident, want)

    yield from _merged(files, of_file)


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
