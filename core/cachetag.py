"""The Cache Directory Tagging convention (https://bford.info/cachedir/): a ``CACHEDIR.TAG``
file whose first bytes are a fixed signature marks a folder as a cache. repomapper tags its own
cache folder, and discovery lists no folder so tagged: a cache kept inside a mapped tree (or
cargo's ``target/``, pytest's ``.pytest_cache``) is not source, and its files change on every
run."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

TAG_NAME = "CACHEDIR.TAG"
SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
_TEXT = (
    SIGNATURE + b"\n# This file is a cache directory tag created by repomapper.\n"
    b"# For information about cache directory tags, see https://bford.info/cachedir/\n"
)


def is_tag(path: str | os.PathLike[str]) -> bool:
    """``path`` is a regular file (not a link, a FIFO or a device) that starts with the tag's
    signature."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return False
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return False
        return os.read(fd, len(SIGNATURE)) == SIGNATURE
    except OSError:
        return False
    finally:
        os.close(fd)


def tag_folder(folder: Path) -> None:
    """Write the tag into ``folder`` unless one is there; a folder that cannot be written keeps
    working untagged."""
    tag = folder / TAG_NAME
    if tag.exists():
        return
    try:
        tmp = folder / f".{TAG_NAME}.{os.getpid()}.tmp"
        tmp.write_bytes(_TEXT)
        os.replace(tmp, tag)
    except OSError as exc:
        log.debug("cache folder %s not tagged: %s", folder, exc)
