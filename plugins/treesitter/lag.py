"""Syntax newer than the grammar we ship: rewritten to what the grammar reads, byte for byte.

The newest ``tree-sitter-typescript`` wheel predates TypeScript 4.7's variance annotations
(``interface Box<in out T>``), so every file that uses them (zod's types, for one) holds an error
node, and the declaration around it loses its name. A variance modifier says nothing a map shows,
so where the first parse failed, the modifiers are blanked with spaces (the same length: every
byte offset, line and column stays) and the file parsed again; the second tree is kept only when
it has fewer errors than the first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

#: ``in``, ``out`` or ``const`` modifiers before a type parameter's name, right after the ``<`` or
#: ``,`` that opens the parameter (``<in out T``, ``, out U extends X``, ``<const T>``)
_VARIANCE = re.compile(
    rb"(?<=[<,])(\s*)((?:(?:in|out|const)\s+)+)(?=[A-Za-z_$][\w$]*\s*(?:extends\b|=|,|>))"
)

#: grammars whose language has variance annotations the grammar may not read
LAGGING = frozenset({"typescript", "tsx"})


def _blanked(data: bytes) -> bytes:
    return _VARIANCE.sub(lambda m: m.group(1) + b" " * len(m.group(2)), data)


def _errors(tree: Any) -> int:
    """How many error or missing nodes ``tree`` holds (only subtrees with an error walked)."""
    count = 0
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            count += 1
            continue
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return count


def reparse(
    grammar_name: str, data: bytes, tree: Any, parse: Callable[[bytes], Any]
) -> tuple[bytes, Any]:
    """``(data, tree)``, or the rewritten source and its tree when that parses with fewer errors."""
    if grammar_name not in LAGGING or not tree.root_node.has_error:
        return data, tree
    rewritten = _blanked(data)
    if rewritten == data:
        return data, tree
    again = parse(rewritten)
    if _errors(again) < _errors(tree):
        return rewritten, again
    return data, tree
