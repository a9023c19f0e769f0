"""Files of the pack generator: task ids that are safe file names, atomic writes, and the state
of a repository (git sha, or a content digest without git; the digest of its file set)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..fileentry import FileEntry
from .settings import PackError

log = logging.getLogger(__name__)

MAX_TASK_ID = 128
_TASK_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def check_task_id(task_id: str) -> str:
    """A task id is a plain file name: letters, digits, ``.``, ``_``, ``-``; not starting with
    a dot or dash, no ``..``, at most 128 characters. Anything else is refused (before anything
    is written), never cleaned up into some other name."""
    if not isinstance(task_id, str) or not task_id:
        raise PackError("the task id is empty")
    if len(task_id) > MAX_TASK_ID:
        raise PackError(f"the task id is longer than {MAX_TASK_ID} characters")
    if ".." in task_id or not _TASK_ID.fullmatch(task_id):
        raise PackError(
            f"the task id {task_id!r} is not a plain name (letters, digits, '.', '_', '-'; "
            "no separators, '..' or control characters)"
        )
    return task_id


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same directory and a rename,
    so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with_suppress_unlink(tmp)
        raise


def with_suppress_unlink(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)


def dumps(data: Any) -> str:
    """The canonical JSON of packs: sorted keys, two-space indent, UTF-8, trailing newline."""
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def git_state(root: Path) -> tuple[str | None, str | None]:
    """(HEAD sha, its commit date in ISO 8601) or (None, None) when ``root`` is not a git work
    tree or git is missing."""
    try:
        out = subprocess.run(
            ["git", "-C", str(root), "log", "-1", "--format=%H %cI"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug("git unavailable: %s", exc)
        return None, None
    parts = out.stdout.strip().split()
    if out.returncode != 0 or len(parts) != 2 or not re.fullmatch(r"[0-9a-f]{40,64}", parts[0]):
        return None, None
    return parts[0], parts[1]


def file_set_digest(entries: Sequence[FileEntry], extra: str = "") -> str:
    """A digest of the file set: every path with its size and modification time."""
    h = hashlib.sha256(extra.encode())
    for e in sorted(entries, key=lambda e: e.path):
        h.update(f"\0{e.path}\0{e.size}\0{e.mtime_ns}".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def content_digest(root: Path, entries: Sequence[FileEntry]) -> str:
    """Without git: a sha256 over every file's path and bytes (``digest:<hex>``)."""
    h = hashlib.sha256()
    for e in sorted(entries, key=lambda e: e.path):
        h.update(e.path.encode("utf-8", "surrogateescape") + b"\0")
        try:
            h.update(hashlib.sha256((root / e.path).read_bytes()).digest())
        except OSError:
            h.update(b"unreadable")
    return "digest:" + h.hexdigest()
