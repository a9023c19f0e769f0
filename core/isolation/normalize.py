"""What the core does to every sound tag a backend returns, in one place, so that every backend
gets the same treatment and none needs to do it itself.

- ``signature``: cut to :data:`MAX_SIGNATURE` characters (the last three become ``...``);
- ``docstring``: stripped, cut to its first paragraph (up to the first blank line), stripped
  again, cut to :data:`MAX_DOCSTRING` characters; empty becomes ``None``;
- ``end_line``: clamped to the file, between ``start_line`` and the file's last line.

A tag whose ``start_line`` is outside the file is not fixed here: the boundary validator drops it
(:mod:`repomapper.isolation.validate`), which calls :func:`normalize_tag` on each tag it keeps.
The conformance suite scores and checks what comes out of here, as a map would use it.
"""

from __future__ import annotations

import dataclasses
import re

from ..model import Tag

#: Characters of a signature kept at most.
MAX_SIGNATURE = 240
#: Characters of a docstring kept at most (after it is cut to its first paragraph).
MAX_DOCSTRING = 500
_BLANK_LINE = re.compile(r"\n\s*\n")


def normalize_signature(text: str | None) -> str | None:
    if text is None or len(text) <= MAX_SIGNATURE:
        return text
    return text[: MAX_SIGNATURE - 3] + "..."


def normalize_docstring(text: str | None) -> str | None:
    if text is None:
        return None
    first = _BLANK_LINE.split(text.strip(), maxsplit=1)[0].strip()
    return first[:MAX_DOCSTRING] or None


def normalize_tag(tag: Tag, last_line: int) -> Tag:
    """``tag`` with the treatment above (the same object when nothing changes). ``last_line`` is
    the number of the file's last line; fields of the wrong type are left alone (the validator
    reports them)."""
    start, end = tag.start_line, tag.end_line
    if type(start) is int and type(end) is int:
        end = max(start, min(end, last_line))
    signature, docstring = tag.signature, tag.docstring
    if isinstance(signature, str):
        signature = normalize_signature(signature)
    if isinstance(docstring, str):
        docstring = normalize_docstring(docstring)
    if end == tag.end_line and signature == tag.signature and docstring == tag.docstring:
        return tag
    return dataclasses.replace(tag, end_line=end, signature=signature, docstring=docstring)
