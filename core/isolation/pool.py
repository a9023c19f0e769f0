"""Idle extraction workers kept between runs by a long-lived owner.

A :class:`~repomapper.RepoMap` reused for many maps (an embedding application, the MCP server)
extracts one or two files after each edit. Forking a worker for them costs more than extracting them
once the parent holds the repository's state (the fork, start-up and exit of a process that large
outweigh parsing a file or two), so the owner keeps the workers a run leaves idle and the next run
starts with them. A worker runs the code it was forked with: workers are kept for one runner key
(the root, the plugin set, what the run asks for, the limits, the environment) and stopped when a
run asks for another. Only a worker that answered its last task is kept; one that crashed, hung or
was interrupted is killed by the supervisor as before.

A worker is tied to its parent by the kernel (``PR_SET_PDEATHSIG``, see :mod:`.lifeline`), and
the tie is to the thread that forked it: a worker forked on a short-lived thread (a server's
request thread, a warm-up thread) would be killed when that thread ends. The pool's workers are
therefore forked on one thread of the pool's own, which lives as long as the pool.
"""

from __future__ import annotations

import contextlib
import weakref
from collections.abc import Callable, Hashable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .supervisor import _Worker

W = TypeVar("W")
#: seconds an idle worker is given to exit when told to, before it is killed
EXIT_SECONDS = 0.5


def stop_workers(workers: list[_Worker]) -> None:
    """Tell idle workers to exit, then kill whichever has not; empties ``workers``."""
    for worker in workers:
        with contextlib.suppress(OSError):
            worker.conn.send(None)
    for worker in workers:
        worker.proc.join(EXIT_SECONDS)
        worker.kill()
    workers.clear()


class WorkerPool:
    """At most ``size`` idle workers for one runner key at a time (see the module's text)."""

    def __init__(self, size: int):
        self.size = max(0, size)
        self._key: Hashable | None = None
        self._owner: Any = None  # the plugin set the workers were forked with (by identity)
        self._idle: list[_Worker] = []
        self._closed = False
        self._forker: ThreadPoolExecutor | None = None
        # a pool dropped without close() still stops its workers
        self._finalizer = weakref.finalize(self, stop_workers, self._idle)

    def fork(self, make: Callable[[], W]) -> W:
        """``make()`` (which forks a worker) run on the pool's own thread; on the caller's once
        the pool is closed (its workers are not kept then)."""
        if self._closed:
            return make()
        if self._forker is None:
            self._forker = ThreadPoolExecutor(1, thread_name_prefix="repomapper-fork")
        return self._forker.submit(make).result()

    def take(self, key: Hashable, owner: Any) -> list[_Worker]:
        """The idle workers forked for ``key`` and ``owner`` that are still alive (the pool no
        longer holds them); workers kept for anything else are stopped."""
        if key != self._key or owner is not self._owner:
            stop_workers(self._idle)
            self._key, self._owner = key, owner
        alive = [w for w in self._idle if w.proc.is_alive()]
        stop_workers([w for w in self._idle if w not in alive])
        self._idle.clear()
        return alive

    def give(self, key: Hashable, owner: Any, workers: list[_Worker]) -> list[_Worker]:
        """Keep up to ``size`` of these idle workers for ``key``; returns the ones not kept."""
        if self._closed or key != self._key or owner is not self._owner:
            return list(workers)
        room = max(0, self.size - len(self._idle))
        self._idle.extend(workers[:room])
        return list(workers[room:])

    def __len__(self) -> int:
        return len(self._idle)

    def close(self) -> None:
        """Stop every kept worker; later runs fork their own and keep none."""
        self._closed = True
        stop_workers(self._idle)
        self._owner = None
        if self._forker is not None:
            self._forker.shutdown(wait=False)
            self._forker = None
