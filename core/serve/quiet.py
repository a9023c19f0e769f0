"""Background work that waits for a pause between calls (storing answered maps).

Work done right after a call ends takes turns for the interpreter with the server's writing of
that call's answer, and work done while a call runs delays it. Agents pause between calls (they
read the answer), so :class:`WhenQuiet` runs its work once no call has ended for a while, and
no later than a bound after it was asked, so that a client that never pauses still has the work
done. The owner does what is left on close.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)


class WhenQuiet:
    """Runs ``work`` in a background thread, holding ``lock`` (the lock calls hold), once
    ``delay`` seconds have passed since the end of the last call (:meth:`call_ended`), or
    ``most`` seconds after it was asked (:meth:`ask`) when calls keep coming.

    :meth:`ask` and :meth:`call_ended` are called holding ``lock``."""

    def __init__(self, lock: threading.Lock, work: Callable[[], None], most: float = 30.0):
        self._lock = lock
        self._work = work
        self._most = most
        self._delay = 0.0
        self._last_end = time.monotonic()
        self._waiting = False  # a run is asked and not started
        self._thread: threading.Thread | None = None  # the last run's
        self._closed = threading.Event()

    def call_ended(self) -> None:
        self._last_end = time.monotonic()

    def ask(self, delay: float) -> None:
        """Run the work once calls have paused for ``delay`` seconds (one run for every ask
        made before it starts)."""
        self._delay = delay
        if self._waiting or self._closed.is_set():
            return
        self._waiting = True
        self._thread = threading.Thread(
            target=self._run, args=(time.monotonic(),), name="repomapper-when-quiet", daemon=True
        )
        self._thread.start()

    def close(self) -> None:
        """Stop waiting (the work is not run: the owner does what is left as it closes) and
        join the thread. Called without holding the lock."""
        self._closed.set()
        thread = self._thread
        if thread is not None:
            thread.join()

    def _run(self, asked_at: float) -> None:
        while not self._closed.is_set():
            now = time.monotonic()
            late = now - asked_at >= self._most
            quiet_at = self._last_end + self._delay
            if now < quiet_at and not late:
                self._closed.wait(min(quiet_at, asked_at + self._most) - now)
                continue
            # a call holding the lock moves the quiet time when it ends: wait for it briefly
            if not self._lock.acquire(timeout=min(max(self._delay, 0.01), 1.0)):
                continue
            try:
                if self._closed.is_set():
                    return
                if not late and time.monotonic() < self._last_end + self._delay:
                    continue  # a call ended while this thread waited for the lock
                self._waiting = False  # an ask from here on starts another run
                try:
                    self._work()
                except Exception as exc:  # the work reports its own problems
                    log.debug("background work failed: %s", exc)
                return
            finally:
                self._lock.release()
