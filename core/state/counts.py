"""Token counts of rendered texts, remembered by the texts' digests in the process and in the
cache, so a map whose sections were counted before never loads the tokenizer."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..tokens import MapCounter, _Cl100kCounter

if TYPE_CHECKING:
    from ..cache import TagCache

#: token counts kept in memory between calls
MAX_KNOWN_COUNTS = 50_000


def text_key(text: str) -> bytes:
    """The digest a count is remembered under."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


class CountMemo:
    """Counts of one counter for one repository: in memory, backed by the cache's table.

    Only the built-in exact counter is remembered (a caller's counter is always asked: it may
    count differently from run to run)."""

    def __init__(self, counter: MapCounter, cache: Callable[[], TagCache], use_cache: bool):
        self.counter = counter
        self._cache = cache
        self._use_cache = use_cache
        self._known: dict[bytes, int] = {}
        #: counts not yet stored (an owner that stores later, see RepositoryState.memo_later)
        self.unsaved: dict[bytes, int] = {}

    @property
    def remembers(self) -> bool:
        """Whether counts are remembered: the built-in exact counter, with the cache."""
        counter = self.counter
        return self._use_cache and isinstance(counter, _Cl100kCounter) and counter.exact

    def remembered(self, key: bytes) -> int | None:
        """A count remembered under ``key`` (in this process, else in the cache)."""
        n = self._known.get(key)
        if n is None:
            n = self._cache().count_of(self.counter.name, key)
            if n is not None:
                self._known[key] = n
        return n

    def learn(self, key: bytes, n: int, fresh: dict[bytes, int]) -> None:
        """Keep a count just made (exact counts only), and note it in ``fresh`` for storing."""
        if self.counter.exact:
            fresh[key] = self._known[key] = n

    def counting(self) -> tuple[Callable[[str], int], dict[bytes, int]]:
        """The count function a render uses, and the dict of the counts it makes."""
        counter = self.counter
        fresh: dict[bytes, int] = {}
        if not self.remembers:
            return counter.count, fresh
        if len(self._known) > MAX_KNOWN_COUNTS:
            self._known.clear()

        def count(text: str) -> int:
            key = text_key(text)
            n = self.remembered(key)
            if n is None:
                n = fresh[key] = counter.count(text)
                if counter.exact:  # (the encoding may have failed to load: an estimate)
                    self._known[key] = n
            return n

        return count, fresh

    def store(self, fresh: dict[bytes, int], later: bool) -> None:
        """Store counts made by a render now, or keep them for :meth:`save` (``later``)."""
        if not fresh or not self.counter.exact:
            return
        if later:
            self.unsaved.update(fresh)
        else:
            self._cache().remember_counts(self.counter.name, fresh)

    def save(self) -> None:
        if self.unsaved:
            counts, self.unsaved = self.unsaved, {}
            self._cache().remember_counts(self.counter.name, counts)
