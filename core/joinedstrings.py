"""The strings of a :func:`~repomapper.stringarrays.joined` array read one at a time: a stored
state's names, of which a new process reads a few thousand out of millions."""

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from typing import Any

from .stringarrays import split


def separators(data: bytes | Any) -> Any:
    """Where each string of a :func:`joined` array ends (an int64 array, one per string; the
    last is the array's length), found in the bytes of one chunk of it."""
    import numpy as np

    found = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 0)
    return np.append(found, len(data)).astype(np.int64)


class JoinedStrings(Sequence[str]):
    """The strings of a :func:`joined` array with where each ends, each decoded when read:
    a large tree's three million names split into strings cost every new process a third of a
    second and a few hundred megabytes, while an edit reads a few thousand of them. Once the
    strings decoded one at a time (read, or compared by a lookup) pass :data:`DECODE_SHARE`
    of them, or a read asks for more than that at once, they are split once and kept, and
    every later read is of those (the same string objects each time: strings decoded one at a
    time are new objects per read, and a large update held millions of such copies).

    ``ends``: per string, where it ends in ``data`` (exclusive; the next starts one byte
    after, past its separator); checked to increase and end where the data does, so that
    every read lies inside it. What the bytes between say is not checked: any bytes decode
    (``surrogateescape``), and whether the strings are sorted is the reader's to check."""

    __slots__ = ("_data", "_ends", "_all", "_objects", "_decoded")

    #: the share of the strings decoded one at a time past which all are split (decoding one
    #: costs about four times its share of splitting them all: at most a quarter more than
    #: splitting at once, for a run that reads many)
    DECODE_SHARE = 1 / 16

    def __init__(self, data: Any, ends: Any):
        import numpy as np

        if data.dtype != "uint8" or data.ndim != 1:
            raise ValueError("strings are a byte array")
        if ends.dtype.kind != "i" or ends.ndim != 1:
            raise ValueError("string ends are not one-dimensional integers")
        if len(data) and not len(ends):
            raise ValueError("string ends do not match the strings")
        if len(ends):
            if int(ends[-1]) != len(data) or int(ends[0]) < 0:
                raise ValueError("string ends do not match the strings")
            if len(ends) > 1 and not bool((np.diff(ends) > 0).all()):
                raise ValueError("string ends do not increase")
        self._data, self._ends = data, ends
        self._all: list[str] | None = None
        self._objects: Any = None
        self._decoded = 0

    def __len__(self) -> int:
        return len(self._ends)

    def _split_for(self, count: int) -> list[str] | None:
        """Every string when they are split or ``count`` more decoded one at a time would pass
        the share (then they are split now), else None (and ``count`` more are counted)."""
        found = self._all
        if found is None:
            self._decoded += count
            if self._decoded > len(self._ends) * self.DECODE_SHARE:
                found = self.strings()
        return found

    def _one(self, i: int) -> str:
        ends = self._ends
        lo = int(ends[i - 1]) + 1 if i else 0
        return bytes(self._data[lo : int(ends[i])]).decode("utf-8", "surrogateescape")

    def __getitem__(self, at: Any) -> Any:
        if isinstance(at, slice):
            positions = range(*at.indices(len(self._ends)))
            found = self._split_for(len(positions))
            return found[at] if found is not None else [self._one(i) for i in positions]
        if isinstance(at, int) or getattr(at, "ndim", None) == 0:
            i, n = operator.index(at), len(self._ends)
            if not -n <= i < n:
                raise IndexError("string index out of range")
            found = self._split_for(1)
            return found[i] if found is not None else self._one(i % n)
        return self.take(at)

    def index_of(self, value: object) -> int | None:
        """The position of ``value`` among the strings, which must be sorted (by bisection,
        each probe decoding one until they are split: then searched as a list)."""
        if not isinstance(value, str):
            return None
        found = self._all
        seq: Sequence[str] = self if found is None else found
        i = bisect_left(seq, value)
        return i if i < len(seq) and seq[i] == value else None

    def take(self, ids: Any) -> Any:
        """The strings at ``ids`` (an index or boolean array) as a numpy object array."""
        import numpy as np

        ids = np.asarray(ids)
        if ids.dtype == bool:
            ids = np.flatnonzero(ids)
        if self._split_for(len(ids)) is not None:
            return self.objects()[ids]
        out = np.empty(len(ids), dtype=object)
        out[:] = [self._one(i) for i in ids.tolist()]
        return out

    def strings(self) -> list[str]:
        """Every string (split on the first call, then kept)."""
        found = self._all
        if found is None:
            found = self._all = split(self._data, len(self._ends))
        return found

    def objects(self) -> Any:
        """Every string as a numpy object array (made on the first call, then kept)."""
        if self._objects is None:
            import numpy as np

            out = np.empty(len(self._ends), dtype=object)
            out[:] = self.strings()
            self._objects = out
        return self._objects

    def __iter__(self) -> Iterator[str]:
        return iter(self.strings())

    @property
    def data(self) -> Any:
        """The joined bytes (as :func:`joined` made them)."""
        return self._data

    @property
    def ends(self) -> Any:
        return self._ends


def position_of(names: Sequence[str], name: object) -> int | None:
    """The position of ``name`` among sorted ``names`` (a list, an object array or
    :class:`JoinedStrings`), found by bisection; None when it is not there."""
    if isinstance(names, JoinedStrings):
        return names.index_of(name)
    if not isinstance(name, str):
        return None
    i = bisect_left(names, name)
    return i if i < len(names) and names[i] == name else None


class InternedNames:
    """Names by id: a sorted column's (ids ``0`` to ``m - 1``: a stored state's
    :class:`JoinedStrings`, or an object array) and after them the names an update met that
    the column lacks, in the order met. An update of a stored state splices its layout and
    its definition index as runs of these ids (:class:`~repomapper.tablearrays.NamesAt` over
    them), so the runs it keeps make no name: the splice of a large tree's millions of
    identifiers made every one of them into a string for the few a changed file added."""

    __slots__ = ("column", "_extra", "_extra_ids")

    def __init__(self, column: Any):
        self.column = column
        self._extra: list[str] = []
        self._extra_ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.column) + len(self._extra)

    def id_of(self, name: str) -> int:
        """The id of ``name``, given it now when it has none."""
        found = position_of(self.column, name)
        if found is not None:
            return found
        found = self._extra_ids.get(name)
        if found is None:
            found = self._extra_ids[name] = len(self.column) + len(self._extra)
            self._extra.append(name)
        return found

    def known_id(self, name: str) -> int | None:
        """The id of ``name``, None when it has none (none is given)."""
        found = position_of(self.column, name)
        return found if found is not None else self._extra_ids.get(name)

    def __getitem__(self, at: Any) -> Any:
        """The name of one id, or those of an index array as an object array."""
        import numpy as np

        m = len(self.column)
        if isinstance(at, int) or getattr(at, "ndim", None) == 0:
            i = operator.index(at)
            if i < 0:
                raise IndexError("a name id is not negative")
            return self.column[i] if i < m else self._extra[i - m]
        ids = np.asarray(at)
        if not len(self._extra) or not len(ids) or int(ids.max()) < m:
            return self.column[ids]
        out = np.empty(len(ids), dtype=object)
        base = ids < m
        out[base] = self.column[ids[base]]
        extra = np.empty(len(self._extra), dtype=object)
        extra[:] = self._extra
        out[~base] = extra[ids[~base] - m]
        return out
