"""A listed file as the rest of the pipeline carries it: its path and the stat that stands for
its content until it is read.

Its own module so that what makes a cache row (extraction) does not import how files are
listed: a change to discovery keeps every row's code key.
"""

from __future__ import annotations

from typing import NamedTuple


class FileEntry(NamedTuple):
    """A file to map: its path and the stat that stands for its content until it is read. A
    named tuple: every entry is a dict key several times over per map (a tuple's hash is made
    in C; a dataclass's is made in Python on every lookup)."""

    path: str  # relative, forward slashes
    size: int
    mtime_ns: int
    #: when the file's inode last changed: its content, and who may read it (a ``chmod``,
    #: ``chown`` or ACL change keeps the mtime and size and changes this); 0 when not known
    ctime_ns: int = 0
