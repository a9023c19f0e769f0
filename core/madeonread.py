"""Sequences whose items are made when they are read.

A ranking holds tens of thousands of entries and an answer reads a few hundred of them; making
every entry an object (a tuple, a dataclass) cost several milliseconds of each call. Subclasses
keep their rows as they are cheapest to keep and make an item per read; they compare equal to
each other by those rows, and to a tuple, a list or another such sequence by their items.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class MadeOnRead(Sequence[T]):
    __slots__ = ()

    def _rows(self) -> object:
        """What two sequences of the same class are equal by."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MadeOnRead) and type(other) is type(self):
            return self._rows() == other._rows()
        if isinstance(other, (tuple, list, MadeOnRead)):
            return tuple(self) == tuple(other)
        return NotImplemented

    # unhashable, as lists are; mypy reports any assignment over object.__hash__ (mypy#4266)
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({len(self)} items)"
