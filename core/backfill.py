"""Reference back-fill: when a backend gives definitions but no references, scan the file's
Name tokens with Pygments so the file still joins the graph (Aider does this for C and C++)."""

from __future__ import annotations

import bisect
import logging
from collections.abc import Sequence

from .model import DEF, REF, SymbolKind, Tag

log = logging.getLogger(__name__)


def needs_backfill(tags: Sequence[Tag]) -> bool:
    has_def = has_ref = False
    for t in tags:
        if t.kind == DEF:
            has_def = True
        else:
            has_ref = True
    return has_def and not has_ref


def backfill_references(path: str, text: str) -> list[Tag]:
    """One ``ref`` tag per (line, name) for every Name token Pygments finds; [] if no lexer."""
    try:
        from pygments.lexers import get_lexer_for_filename
        from pygments.token import Token
        from pygments.util import ClassNotFound
    except ImportError:
        return []
    try:
        lexer = get_lexer_for_filename(path, stripnl=False, stripall=False, ensurenl=False)
    except ClassNotFound:
        return []
    newlines = [i for i, c in enumerate(text) if c == "\n"]
    found: set[tuple[int, str]] = set()
    try:
        for index, token, value in lexer.get_tokens_unprocessed(text):
            # types-Pygments declares _TokenType a tuple[str, ...]; its __contains__ asks
            # whether a token type is a subtype, which strict equality cannot see
            if token in Token.Name and value.isidentifier():  # type: ignore[comparison-overlap]
                line = bisect.bisect_left(newlines, index) + 1
                found.add((line, value))
    except Exception as exc:  # a lexer bug must not cost us the definitions
        log.debug("%s: pygments failed: %s", path, exc)
    return [Tag(path, line, line, name, REF, SymbolKind.NAME) for line, name in sorted(found)]
