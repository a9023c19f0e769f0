"""Parsing a source file once per file.

The core calls ``extract_tags`` and then ``extract_imports`` with the same :class:`SourceFile`;
the parse (tree and what was extracted from it) is kept in the file's memo
(:meth:`SourceFile.memo`), so the second call neither parses nor queries again, and it goes when
the core is done with the file.
"""

from __future__ import annotations

import codecs
import logging
import threading
from dataclasses import dataclass, field
from typing import Any

from repomapper.model import SourceFile

from .lag import reparse
from .languages import Grammar, declines, load_grammar, spec_for_path

log = logging.getLogger(__name__)


@dataclass
class Parsed:
    """One parsed file."""

    path: str
    data: bytes
    grammar: Grammar
    tree: Any  # tree_sitter.Tree
    #: what is made once from the tree for both hooks (the query's matches, :mod:`.captures`)
    scratch: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


#: stands in for each byte of invalid UTF-8 (DEL: one byte, in no language's identifiers); names
#: holding it are dropped by the extractors, since they are not what the file says.
PLACEHOLDER = "\x7f"


def _one_byte_each(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    return PLACEHOLDER * (exc.end - exc.start), exc.end


codecs.register_error("repomapper-one-byte", _one_byte_each)


def valid_utf8(data: bytes) -> bytes:
    """``data`` with each byte of invalid UTF-8 replaced by :data:`PLACEHOLDER`: byte offsets stay the same, and
    query predicates (``#match?``), which decode node text, never meet undecodable bytes."""
    return data.decode("utf-8", "repomapper-one-byte").encode("utf-8")


_local = threading.local()


def _parser(grammar: Grammar) -> Any:
    parsers: dict[str, Any] | None = getattr(_local, "parsers", None)
    if parsers is None:
        parsers = _local.parsers = {}
    parser = parsers.get(grammar.spec.name)
    if parser is None:
        from tree_sitter import Parser

        parser = parsers[grammar.spec.name] = Parser(grammar.language)
    return parser


_ASCII_MASK = bytes(range(128)) + PLACEHOLDER.encode() * 128


def parse(source: SourceFile) -> Parsed | None:
    """The parse of ``source``; ``None`` if no usable grammar claims it (so the next backend is
    asked). Syntax errors are tolerated: the tree then holds error nodes (see
    :func:`syntax_errors`; ``extract_tags`` reports them). Parsed once per file: later calls with the same ``source`` return the same :class:`Parsed`."""
    return source.memo(("treesitter", "parse"), lambda: _parse(source))


def _parse(source: SourceFile) -> Parsed | None:
    spec = spec_for_path(source.path)
    if spec is None or declines(spec, source.data):
        return None
    grammar = load_grammar(spec)
    if grammar is None:
        return None
    data = source.data
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        log.warning(
            "%s: invalid UTF-8 at byte %d; decoded with replacement characters",
            source.path,
            exc.start,
            extra={"code": "decode_error", "path": source.path},
        )
        data = valid_utf8(data)
    if spec.ascii_only and not data.isascii():
        data = data.translate(_ASCII_MASK)
    parser = _parser(grammar)
    data, tree = reparse(grammar.spec.name, data, parser.parse(data), parser.parse)
    return Parsed(source.path, data, grammar, tree)


@dataclass(frozen=True, slots=True)
class SyntaxErrors:
    """Where a tree's parser gave up: error and missing nodes (the outermost of each nest)."""

    places: int
    error_bytes: int  # bytes inside error nodes
    first_line: int  # 1-based line of the first place

    def share(self, size: int) -> float:
        """The share of a file of ``size`` bytes that sits inside error nodes."""
        return self.error_bytes / size if size else 0.0


def syntax_errors(parsed: Parsed) -> SyntaxErrors | None:
    """The tree's syntax errors, or ``None`` when it parsed cleanly. Only subtrees that hold an
    error are walked (``has_error``), with a stack rather than recursion."""
    root = parsed.tree.root_node
    if not root.has_error:
        return None
    places = error_bytes = 0
    first: int | None = None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            places += 1
            error_bytes += node.end_byte - node.start_byte
            row = node.start_point[0] + 1
            first = row if first is None else min(first, row)
            continue
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return SyntaxErrors(places, error_bytes, first or 1)
