"""What a git work tree's index says of its tracked files: each file's blob id, trusted only
where the file still has the stat git recorded when it last found the file equal to that blob.

A fresh clone, a new worktree or a CI checkout holds files this machine has seen under other
paths: their content digests are known, but which file holds which content is not, and reading
and hashing a large tree's every file costs seconds. git's index already says it, for files
whose stat is the one it recorded (git's own test of a clean file); the cache remembers which
digest each blob id has, from files it read and hashed itself (see
:meth:`repomapper.cache.TagCache.digests_of_blobs`), so an index can point a file at content
this machine has read, never vouch for content it has not.

Only the index is read (``git ls-files``: no filter, hook or fsmonitor runs), and a file is
trusted only when its mtime and ctime (to the nanosecond) and size are the recorded ones, and
its mtime is before the index was written. A file changed in the same tick as the index was
written could hold other content under the same stat (git's "racy" entries): git records such
an entry with size 0 when it writes the index, so its size no longer matches (an empty file's
content is the empty blob either way).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Sequence
from pathlib import Path

from .fileentry import FileEntry
from .gitcmd import run_git

log = logging.getLogger(__name__)

#: one entry of ``git ls-files -s --debug -z``: mode, blob id, stage, path, then the stat the
#: index recorded
_ENTRY = re.compile(
    rb"(\d{6}) ([0-9a-f]{40}|[0-9a-f]{64}) (\d)\t([^\0]*)\0"
    rb"  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: \d+\tino: \d+\n"
    rb"  uid: \d+\tgid: \d+\n  size: (\d+)\tflags: [0-9a-f]+\n"
)
_REGULAR = frozenset({b"100644", b"100755"})
_NS = 1_000_000_000
#: the index records a size modulo 2**32
_SIZE_BITS = 0xFFFFFFFF


def clean_blobs(root: Path, entries: Sequence[FileEntry]) -> dict[FileEntry, str]:
    """The blob id of each of ``entries`` (paths relative to ``root``) that the index of the
    work tree holding ``root`` records with the stat the entry has: a regular file, merged,
    its mtime and ctime and size the index's, its mtime before the index was written.
    Empty outside a work tree, or when git cannot say."""
    written = _index_written(root)
    if written is None:
        return {}
    proc = run_git(root, ["ls-files", "-s", "--debug", "-z"])
    if proc is None or proc.returncode != 0:
        return {}
    recorded: dict[bytes, tuple[bytes, ...]] = {}
    for mode, blob, stage, path, cs, cn, ms, mn, size in _ENTRY.findall(proc.stdout):
        if stage == b"0" and mode in _REGULAR:
            recorded[path] = (blob, cs, cn, ms, mn, size)
    out: dict[FileEntry, str] = {}
    for entry in entries:
        if entry.mtime_ns >= written:
            continue
        found = recorded.get(os.fsencode(entry.path))
        if found is None:
            continue
        blob, cs, cn, ms, mn, size = found
        if (
            int(ms) * _NS + int(mn) == entry.mtime_ns
            and int(cs) * _NS + int(cn) == entry.ctime_ns
            and int(size) == entry.size & _SIZE_BITS
        ):
            out[entry] = blob.decode("ascii")
    return out


def _index_written(root: Path) -> int | None:
    """When the index of the work tree holding ``root`` was last written (ns); None outside
    a work tree or without an index."""
    proc = run_git(root, ["rev-parse", "--git-path", "index"])
    if proc is None or proc.returncode != 0:
        return None
    name = os.fsdecode(proc.stdout.rstrip(b"\n"))
    if not name:
        return None
    try:
        return os.stat(os.path.join(root, name)).st_mtime_ns
    except OSError as exc:
        log.debug("git index of %s unreadable: %s", root, exc)
        return None


def blob_id(data: bytes, like: str) -> str:
    """git's id of a blob holding ``data``, in the object format of ``like`` (an id of the
    repository: SHA-256 when it has 64 digits, else SHA-1)."""
    h = hashlib.sha256() if len(like) == 64 else hashlib.sha1()
    h.update(b"blob %d\0" % len(data))
    h.update(data)
    return h.hexdigest()
