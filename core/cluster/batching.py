"""How the files to extract are cut into the batches a cluster worker runs.

A batch is one repository's files, in path order, bounded by a count and by their bytes (a
worker's memory and the time one lost batch costs). Each worker gets several batches, so that
one slow batch does not leave the others idle at the end; and a batch is never so small that
scheduling it costs more than extracting it (a round trip is about a millisecond locally, a
batch of 16 files tens of milliseconds).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..fileentry import FileEntry

#: files a batch holds at most (and at least, when there are that many to do)
MAX_FILES = 256
MIN_FILES = 16
#: bytes of source a batch holds at most (a larger file is a batch of its own)
MAX_BYTES = 8 << 20
#: batches per worker wanted, so the last ones finish close together
PER_WORKER = 4


@dataclass(frozen=True)
class Batch:
    """Files of one repository for one task (plain data: it is sent to a worker)."""

    root: Path
    paths: tuple[str, ...]
    size: int


def batch_files(total: int, workers: int, max_files: int = MAX_FILES) -> int:
    """How many files a batch holds for ``total`` files over ``workers`` (``max_files`` at
    most)."""
    wanted = -(-total // max(1, workers * PER_WORKER))
    return min(max_files, max(MIN_FILES, wanted))


def batches_of(
    root: Path, entries: Sequence[FileEntry], files: int, max_bytes: int = MAX_BYTES
) -> list[Batch]:
    """``entries`` (one repository's) cut in path order into batches of at most ``files`` files
    and ``max_bytes`` bytes."""
    out: list[Batch] = []
    paths: list[str] = []
    size = 0
    for entry in sorted(entries, key=lambda e: e.path):
        if paths and (len(paths) >= files or size + entry.size > max_bytes):
            out.append(Batch(root, tuple(paths), size))
            paths, size = [], 0
        paths.append(entry.path)
        size += entry.size
    if paths:
        out.append(Batch(root, tuple(paths), size))
    return out
