"""Ignore files read as git reads a ``.gitignore``: each governs the folder it sits in, a deeper
file overrides a shallower one, the last matching line of a file decides, ``!`` negates, and a file
inside an ignored folder cannot be brought back.

Two layers, each with its own precedence: git's (``.gitignore`` files and ``.git/info/exclude``)
and repomapper's (``.ignore`` then ``.repomapperignore``, the latter winning in the same folder).
A path is left out when either layer ignores it, so ``.ignore`` files can only leave more out, the
same inside a git work tree (where git applies its layer) as outside one.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

log = logging.getLogger(__name__)

GITIGNORE = ".gitignore"
#: honoured everywhere, inside a git work tree too; later names win in the same folder
IGNORE_FILES = (".ignore", ".repomapperignore")
#: git's per-repository exclude file, the weakest of git's layer
GIT_EXCLUDE = ".git/info/exclude"
#: an ignore file larger than this is not read (hostile input: matching cost grows with its lines)
MAX_IGNORE_FILE_BYTES = 1_000_000


@dataclass(frozen=True, slots=True)
class IgnoreFile:
    """One ignore file's rules."""

    source: str  # its path relative to the root, as shown ("pkg/.gitignore")
    prefix: str  # the folder whose paths it governs, relative to the root: "" or "pkg/"
    lines: tuple[str, ...]
    spec: pathspec.GitIgnoreSpec


@dataclass(frozen=True, slots=True)
class Rule:
    """The line of an ignore file that decided a path is left out."""

    file: IgnoreFile
    index: int  # 0-based line index

    @property
    def where(self) -> str:
        """``path:line``, as git check-ignore -v and compilers print it."""
        return f"{self.file.source}:{self.index + 1}"

    @property
    def pattern(self) -> str:
        return self.file.lines[self.index].strip()


def parse_ignore_file(source: str, prefix: str, text: str) -> IgnoreFile:
    """Compile an ignore file's text; pattern ``i`` is line ``i`` (blank lines kept as comments,
    which pathspec would drop and so shift every later index)."""
    import pathspec  # (not imported by a map of a git work tree without ignore files)

    # git splits on newlines only (a form feed is part of a pattern) and drops a CR before one
    lines = tuple(x.removesuffix("\r") for x in text.removeprefix("\ufeff").split("\n"))
    patterns = [line if line.strip() else "#" for line in lines]
    try:
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    except (ValueError, re.error):  # a line pathspec cannot compile costs that line only
        for i, line in enumerate(patterns):
            try:
                pathspec.GitIgnoreSpec.from_lines([line])
            except (ValueError, re.error):
                log.warning("%s:%d: not a valid ignore pattern: %r", source, i + 1, line)
                patterns[i] = "#"
        spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    return IgnoreFile(source, prefix, lines, spec)


def read_ignore_file(root: Path, rel: str, prefix: str) -> IgnoreFile | None:
    """The ignore file ``rel`` under ``root`` governing ``prefix``, or None when it is not a
    regular file (a symlink could lead out of the root), too large or unreadable."""
    full = os.path.join(str(root), rel)
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("%s: cannot use as an ignore file: %s", rel, exc)
        return None
    try:
        if not stat.S_ISREG(st.st_mode):
            return None
        if st.st_size > MAX_IGNORE_FILE_BYTES:
            log.warning("%s: %d bytes, not read as an ignore file", rel, st.st_size)
            return None
        with open(full, "rb") as fh:
            text = fh.read(MAX_IGNORE_FILE_BYTES + 1).decode("utf-8", "replace")
        return parse_ignore_file(rel, prefix, text)
    except OSError as exc:
        log.warning("%s: cannot use as an ignore file: %s", rel, exc)
        return None


def decide(files: Sequence[IgnoreFile], probe: str) -> Rule | None:
    """The rule that leaves ``probe`` out (a folder ends with ``/``), or None to keep it.

    ``files`` are in rising precedence (shallower before deeper); the first file, from the
    strongest, with a matching line decides: a plain line leaves out, a ``!`` line keeps.
    """
    for f in reversed(files):
        p = f.prefix
        if len(probe) <= len(p) or not probe.startswith(p):
            continue
        found = f.spec.check_file(probe[len(p) :])
        if found.include is not None:
            return Rule(f, found.index) if found.include and found.index is not None else None
    return None


def by_precedence(files: Iterable[IgnoreFile]) -> list[IgnoreFile]:
    """Shallower folders first; in one folder, in the order of ``IGNORE_FILES``."""
    order = {name: i for i, name in enumerate(IGNORE_FILES)}

    def key(f: IgnoreFile) -> tuple[int, int]:
        return f.prefix.count("/"), order.get(f.source.rsplit("/", 1)[-1], -1)

    return sorted(files, key=key)


class ListingFilter:
    """Applies ignore files to a finished listing (git's), with the walk's folder semantics:
    a path is left out when a folder above it is."""

    def __init__(self, files: Sequence[IgnoreFile]) -> None:
        self.files = by_precedence(files)
        self._folders: dict[str, Rule | None] = {"": None}

    def _folder(self, folder: str) -> Rule | None:
        """The rule leaving out ``folder`` (``a/b/``) or one above it."""
        if folder in self._folders:
            return self._folders[folder]
        parent = folder[: folder.rstrip("/").rfind("/") + 1]
        rule = self._folder(parent) or decide(self.files, folder)
        self._folders[folder] = rule
        return rule

    def rule_for(self, rel: str) -> Rule | None:
        return self._folder(rel[: rel.rfind("/") + 1]) or decide(self.files, rel)
