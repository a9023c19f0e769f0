"""Progress on stderr for long scans: shown only on a terminal, and only after a moment."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.progress import Progress, TaskID

DELAY_SECONDS = 0.5


class StderrProgress:
    """A callback ``(done, total)`` that draws a rich progress bar once a scan is slow."""

    def __init__(
        self, label: str = "extracting", stream: TextIO | None = None, delay: float = DELAY_SECONDS
    ):
        self.stream = stream or sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.label = label
        self.delay = delay
        self.start = time.monotonic()
        self._progress: Progress | None = None
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total == 0:
            return
        progress, task = self._progress, self._task
        if progress is None or task is None:
            if done >= total or time.monotonic() - self.start < self.delay:
                return
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )

            progress = self._progress = Progress(
                TextColumn(f"[bold]{self.label}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=Console(file=self.stream),
                transient=True,
            )
            progress.start()
            task = self._task = progress.add_task(self.label, total=total)
        progress.update(task, completed=done, total=total)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None
