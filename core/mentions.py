"""Mentions in a task description: the files and identifiers it names.

An agent usually has a task in words ("TSQL - L031 incorrectly triggers ... in join condition").
Aider personalizes its map with the file names and identifiers the chat mentions; this module
finds both in free text so ``repomapper map --task`` can do the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PATHLIKE = re.compile(r"[\w./-]+\.\w+|[\w-]+(?:/[\w.-]+)+")
#: Identifiers shorter than this are too ambiguous to count as mentions.
MIN_IDENT_LENGTH = 3
#: A base name must be at least this long to match a mention on its own ("a.py" is not a mention).
MIN_BASENAME_LENGTH = 5


@dataclass(frozen=True, slots=True)
class Mentions:
    files: frozenset[str]
    idents: frozenset[str]


def words(text: str) -> set[str]:
    """Identifier-like words, and the parts of dotted names (``Model.save`` gives both)."""
    found = set(_WORD.findall(text))
    return {w for w in found if len(w) >= MIN_IDENT_LENGTH}


def mentions_in(text: str, files: Iterable[str], defined: Iterable[str]) -> Mentions:
    """The repository files and defined identifiers that ``text`` names.

    A file is mentioned by its path (or a path suffix such as ``rules/L031.py``), or by a base
    name that is distinctive (at least five characters, and not shared by several files, unless
    the mention is a longer suffix). An identifier is mentioned when a word of the text equals a
    name defined in the repository or a file's stem (``L031`` names ``rules/L031.py``, which
    personalizes the ranking toward that file as Aider does for path parts).
    """
    files = sorted(set(files))
    tokens = {t.strip("./") for t in _PATHLIKE.findall(text)}
    tokens |= set(text.split())
    by_base: dict[str, list[str]] = {}
    for f in files:
        by_base.setdefault(PurePosixPath(f).name, []).append(f)
    mentioned_files: set[str] = set()
    for token in tokens:
        token = token.strip("`'\"()[]{}<>,;:")
        if not token:
            continue
        if "/" in token:
            # a path written relative to somewhere in the repository ("rules/L031.py"), or one
            # that leads into it from outside (a traceback's "/usr/lib/.../pkg/mod.py")
            mentioned_files.update(
                f for f in files if f == token or f.endswith("/" + token) or token.endswith("/" + f)
            )
        else:
            candidates = by_base.get(token, [])
            if len(candidates) == 1 and len(token) >= MIN_BASENAME_LENGTH:
                mentioned_files.update(candidates)
    known = set(defined) | {PurePosixPath(f).stem for f in files}
    return Mentions(frozenset(mentioned_files), frozenset(words(text) & known))
