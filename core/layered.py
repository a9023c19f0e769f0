"""Mappings and sets made of a read-only base and the changes made since, copied in O(changes).

A state loaded from the cache (see :mod:`repomapper.snapshot`) holds tens of thousands of rows
that an edit never reads; it keeps them as arrays and makes a row when it is first read. An
update copies the previous table and changes a few rows: copying a :class:`Layered` mapping
copies its changes only and shares the base, so the rows nobody read are never made.
"""

from __future__ import annotations

from collections.abc import (
    Callable,
    Hashable,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
    MutableSet,
)
from typing import Any, Protocol, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T_contra = TypeVar("T_contra", contravariant=True)
_MISSING = object()


class Members(Protocol[T_contra]):
    """What is asked of a set of facts: a plain set, or a :class:`LayeredSet` (which cannot be
    iterated)."""

    def __contains__(self, item: object, /) -> bool: ...
    def add(self, item: T_contra, /) -> None: ...
    def discard(self, item: T_contra, /) -> None: ...
    def update(self, items: Iterable[T_contra], /) -> None: ...


class Layered(MutableMapping[K, V]):
    """``base`` (never modified) with the keys set and removed on top of it."""

    __slots__ = ("_base", "_set", "_removed")

    def __init__(
        self,
        base: Mapping[K, V],
        changes: dict[K, V] | None = None,
        removed: set[K] | None = None,
    ):
        self._base = base
        self._set: dict[K, V] = changes if changes is not None else {}
        self._removed: set[K] = removed if removed is not None else set()

    def child(self) -> Layered[K, V]:
        """A copy to change: the same base, its own copy of the changes."""
        return Layered(self._base, dict(self._set), set(self._removed))

    @property
    def base(self) -> Mapping[K, V]:
        """The read-only mapping under the changes."""
        return self._base

    @property
    def changed(self) -> bool:
        """Whether any key was set or removed on top of the base."""
        return bool(self._set or self._removed)

    def changed_keys(self) -> set[K]:
        """The keys set or removed on top of the base."""
        return set(self._set) | self._removed

    def from_base(self, key: K) -> bool:
        """Whether ``key``'s value is the base's (neither set nor removed on top of it)."""
        return key not in self._set and key not in self._removed and key in self._base

    def __getitem__(self, key: K) -> V:
        if key in self._set:
            return self._set[key]
        if key in self._removed:
            raise KeyError(key)
        return self._base[key]

    def get(self, key: K, default: Any = None) -> Any:  # no exception for a missing key
        found = self._set.get(key, _MISSING)
        if found is not _MISSING:
            return found
        if key in self._removed:
            return default
        return self._base.get(key, default)

    def __contains__(self, key: object) -> bool:
        if key in self._set:
            return True
        return key not in self._removed and key in self._base

    def __setitem__(self, key: K, value: V) -> None:
        self._set[key] = value
        self._removed.discard(key)

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        self._set.pop(key, None)
        if key in self._base:
            self._removed.add(key)

    def __iter__(self) -> Iterator[K]:
        for key in self._base:
            if key not in self._set and key not in self._removed:
                yield key
        yield from self._set

    def __len__(self) -> int:
        hidden = sum(1 for k in self._set if k in self._base) + len(self._removed)
        return len(self._base) + len(self._set) - hidden


class LayeredSet(MutableSet[Any]):
    """A set whose base membership is a function (answered from arrays), with the members added
    and discarded on top of it. Iterating it (and its length) needs ``members``, the base's
    members: a reader that lists a whole set (tests, inspection); nothing a map reads does."""

    __slots__ = ("_contains", "_added", "_discarded", "_members")

    def __init__(
        self,
        contains: Callable[[Any], bool],
        added: set[Any] | None = None,
        discarded: set[Any] | None = None,
        members: Callable[[], Iterable[Any]] | None = None,
    ):
        self._contains = contains
        self._added: set[Any] = added if added is not None else set()
        self._discarded: set[Any] = discarded if discarded is not None else set()
        self._members = members

    def child(self) -> LayeredSet:
        return LayeredSet(self._contains, set(self._added), set(self._discarded), self._members)

    def __contains__(self, item: object) -> bool:
        if item in self._added:
            return True
        return item not in self._discarded and self._contains(item)

    def add(self, item: Any) -> None:
        self._added.add(item)
        self._discarded.discard(item)

    def discard(self, item: Any) -> None:
        self._added.discard(item)
        self._discarded.add(item)

    def update(self, items: Any) -> None:
        for item in items:
            self.add(item)

    def __iter__(self) -> Iterator[Any]:
        if self._members is None:
            raise TypeError("a layered set over arrays is not iterable")
        for item in self._members():
            if item not in self._discarded and item not in self._added:
                yield item
        yield from self._added

    def __len__(self) -> int:
        if self._members is None:
            raise TypeError("a layered set over arrays has no length")
        return sum(1 for _ in self)


def copied_mapping(
    m: Mapping[K, V], factory: Callable[[], V] | None = None
) -> MutableMapping[K, V]:
    """A copy of ``m`` to change (a :class:`Layered` one shares its base); with ``factory``, a
    plain mapping is copied into a ``defaultdict``."""
    if isinstance(m, Layered):
        return m.child()
    if factory is not None:
        from collections import defaultdict

        return defaultdict(factory, m)
    return dict(m)


def copied_set(s: Any) -> Any:
    """A copy of ``s`` to change (a :class:`LayeredSet` shares its base)."""
    return s.child() if isinstance(s, LayeredSet) else set(s)
