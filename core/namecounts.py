"""A file's referenced names and how often it references each, kept as two compact columns.

Every file's reference summary stays in memory while a repository's state is built: as a tuple
of ``(name, count)`` pairs, with each batch of files from a worker bringing its own copy of
every name, they cost a tuple and a string per pair. Here the names are interned (one string per
name across the repository) and the counts are a machine array; a pair is made when it is read.
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import overload

from .madeonread import MadeOnRead


class NameCounts(MadeOnRead[tuple[str, int]]):
    """``(name, count)`` pairs, in the order given (a summary's are sorted by name)."""

    __slots__ = ("names", "counts")

    def __init__(self, pairs: Iterable[tuple[str, int]]) -> None:
        intern = sys.intern
        names: list[str] = []
        values: list[int] = []
        for name, count in pairs:
            names.append(intern(name))
            values.append(count)
        self.names: tuple[str, ...] = tuple(names)
        try:  # 32 bits: a count is a file's references to one name
            self.counts = array("i", values)
        except OverflowError:
            self.counts = array("q", values)

    def _rows(self) -> tuple[tuple[str, ...], list[int]]:
        return self.names, self.counts.tolist()

    def __len__(self) -> int:
        return len(self.names)

    @overload
    def __getitem__(self, i: int) -> tuple[str, int]: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[tuple[str, int]]: ...
    def __getitem__(self, i: int | slice) -> tuple[str, int] | Sequence[tuple[str, int]]:
        if isinstance(i, slice):
            return tuple(zip(self.names[i], self.counts[i], strict=True))
        return self.names[i], self.counts[i]

    def __iter__(self) -> Iterator[tuple[str, int]]:
        return zip(self.names, self.counts, strict=True)

    def __reduce__(self) -> tuple[Callable[..., NameCounts], tuple[tuple[str, ...], array[int]]]:
        # as its two columns: a worker's every summary is pickled to the parent, and pairs
        # made to be taken apart again cost the parent more than the names' interning
        return _from_columns, (self.names, self.counts)


def _from_columns(names: tuple[str, ...], counts: array[int]) -> NameCounts:
    """The :class:`NameCounts` of these columns (the names interned, as ``__init__`` does)."""
    if len(names) != len(counts) or counts.typecode not in "iq":
        raise ValueError("name counts: the columns do not match")
    made = NameCounts.__new__(NameCounts)
    made.names = tuple(map(sys.intern, names))
    made.counts = counts
    return made
