"""Stage timings of one run (discover, extract, graph, rank, render), for ``--timings``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

#: The stages in the order a map runs them (others are listed after, in order of first use).
STAGES = ("discover", "memo", "extract", "graph", "rank", "render")


class StageTimer:
    """Seconds spent per stage. Stages may nest: an inner stage's time is not counted again in
    the outer one, so the stages add up to the time measured."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        #: cache counts of the run (``RepoMap.last_stats``: cached, extracted, memoised, reused)
        self.counts: dict[str, int] = {}
        self._inner: list[float] = []

    def reset(self) -> None:
        self.seconds.clear()
        self.counts = {}
        self._inner.clear()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        self._inner.append(0.0)
        try:
            yield
        finally:
            elapsed = time.perf_counter() - start
            inner = self._inner.pop()
            self.seconds[name] = self.seconds.get(name, 0.0) + elapsed - inner
            if self._inner:
                self._inner[-1] += elapsed

    def ordered(self) -> list[tuple[str, float]]:
        known = [(s, self.seconds[s]) for s in STAGES if s in self.seconds]
        return known + [(s, t) for s, t in self.seconds.items() if s not in STAGES]

    def describe(self) -> str:
        """``discover 0.010s, extract 0.120s, ...`` (empty when nothing was timed)."""
        return ", ".join(f"{s} {t:.3f}s" for s, t in self.ordered())
