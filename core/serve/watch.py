"""Watch a repository for changes with ``watchfiles`` (optional): a background thread tells the
live index that the tree changed. Without watchfiles the index re-lists the tree on every call."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)


class Watcher:
    def __init__(self, root: Path, on_change: Callable[[], None]):
        self.root = root
        self.on_change = on_change
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"repomapper-watch:{root.name}", daemon=True
        )
        self.failed: str | None = None

    @classmethod
    def start(cls, root: Path, on_change: Callable[[], None]) -> Watcher | None:
        """A running watcher, or None when watchfiles is not installed."""
        try:
            import watchfiles  # noqa: F401
        except ImportError:
            log.info("watchfiles not installed: the index re-lists %s on every call", root)
            return None
        w = cls(root, on_change)
        w._thread.start()
        return w

    def _run(self) -> None:
        import watchfiles

        try:
            for _ in watchfiles.watch(
                self.root,
                stop_event=self._stop,
                debounce=50,
                step=20,
                yield_on_timeout=False,
                raise_interrupt=False,
            ):
                self.on_change()
        except Exception as exc:  # a dead watcher must not leave a stale index: fall back
            self.failed = f"{type(exc).__name__}: {exc}"
            log.warning(
                "watching %s stopped (%s); re-listing on every call", self.root, self.failed
            )
        finally:
            self.on_change()  # whatever happened since the last event is picked up

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
