"""Watch a repository for changes with ``watchfiles`` (optional): a background thread tells its
subscribers (the live index, the map's file listing) what changed. Without watchfiles, or once
the watcher stops, they re-list the tree on every call."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

log = logging.getLogger(__name__)

#: receives the changes of one batch as (kind, absolute path), kind "added", "modified" or
#: "deleted"; None when the watcher cannot say (it stopped): everything may have changed
Subscriber = Callable[[Iterable[tuple[str, str]] | None], None]
#: milliseconds without events after which watchfiles hands back an empty batch: the first one
#: (or the first event) says the watch is in place, so that changes from then on are reported
READY_PROBE_MS = 200


class Watcher:
    def __init__(self, root: Path):
        self.root = root
        self._subscribers: list[Subscriber] = []
        self._on_ready: list[Callable[[], None]] = []
        #: set once the watch is in place: every change after it is reported
        self.ready = threading.Event()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"repomapper-watch:{root.name}", daemon=True
        )
        self.failed: str | None = None

    @classmethod
    def start(cls, root: Path) -> Watcher | None:
        """A running watcher, or None when watchfiles is not installed."""
        try:
            import watchfiles  # noqa: F401
        except ImportError:
            log.info("watchfiles not installed: %s is listed again on every call", root)
            return None
        w = cls(root)
        w._thread.start()
        return w

    def subscribe(self, fn: Subscriber, on_ready: Callable[[], None] | None = None) -> None:
        """Tell ``fn`` every batch of changes, and call ``on_ready`` once the watch is in place
        (at once when it already is)."""
        with self._lock:
            self._subscribers.append(fn)
            if on_ready is not None and not self.ready.is_set():
                self._on_ready.append(on_ready)
                on_ready = None
        if on_ready is not None:
            on_ready()

    def unsubscribe(self, fn: Subscriber) -> int:
        """Stop telling ``fn``; returns how many subscribers are left."""
        with self._lock:
            self._subscribers = [s for s in self._subscribers if s != fn]
            return len(self._subscribers)

    def _tell(self, changes: Iterable[tuple[str, str]] | None) -> None:
        with self._lock:
            subscribers = list(self._subscribers)
        for fn in subscribers:
            try:
                fn(changes)
            except Exception:  # one subscriber's bug must not stop the others being told
                log.exception("a watch subscriber failed")

    def _run(self) -> None:
        import watchfiles

        try:
            for batch in watchfiles.watch(
                self.root,
                # every folder but git's own: a repository may track files in folders the
                # default filter leaves out (node_modules, .venv); git's index is stat'ed instead
                watch_filter=watchfiles.DefaultFilter(ignore_dirs=(".git",)),
                stop_event=self._stop,
                debounce=50,
                step=20,
                rust_timeout=READY_PROBE_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                if not self.ready.is_set():
                    self._set_ready()
                if batch:
                    self._tell([(change.name, path) for change, path in batch])
        except Exception as exc:  # a dead watcher must not leave a stale index: fall back
            self.failed = f"{type(exc).__name__}: {exc}"
            log.warning(
                "watching %s stopped (%s); re-listing on every call", self.root, self.failed
            )
        finally:
            self._tell(None)  # whatever happened since the last event is picked up

    def _set_ready(self) -> None:
        with self._lock:
            self.ready.set()
            waiting, self._on_ready = self._on_ready, []
        for fn in waiting:
            try:
                fn()
            except Exception:
                log.exception("a watch subscriber failed")

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
