"""Text taken from syntax nodes: names, one-line signatures and doc comments.

Everything decodes with ``errors="replace"`` (invalid UTF-8 never raises) and walks siblings or a
bounded breadth-first frontier, never recursing.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tree_sitter import Node

#: Bytes of declaration text looked at for a signature; the rest cannot fit in one anyway.
_MAX_HEADER_BYTES = 4096

#: Nodes that hold a declaration's body: a signature is the text before them.
BODY_TYPES = frozenset(
    {
        "statement_block",
        "class_body",
        "interface_body",
        "enum_body",
        "block",
        "field_declaration_list",
        "declaration_list",
        "enum_variant_list",
        "compound_statement",
        "body_statement",
        "constructor_body",
        "enumerator_list",
        "enum_member_declaration_list",
        "enum_declaration_list",
        "annotation_type_body",
        "accessor_list",
        "literal_value",
    }
)
#: Kinds whose signature is the first line of the declaration rather than its header.
FIRST_LINE_KINDS = frozenset({"constant", "variable", "field", "type"})
#: Parents that a declaration sits in when it stands alone (``export const x``): the signature
#: and the doc comment belong to the wrapper.
WRAPPERS = frozenset(
    {
        "export_statement",
        "lexical_declaration",
        "variable_declaration",
        "ambient_declaration",
        "expression_statement",
        "type_declaration",
        "const_declaration",
        "var_declaration",
        "template_declaration",
        "field_declaration",
        "declaration",
        "type_definition",
        "property_declaration",
        "local_variable_declaration",
    }
)
#: Nodes that may stand between a doc comment and its declaration, or open a declaration.
_PREFIX_TYPES = frozenset(
    {
        "decorator",
        "attribute_item",
        "attribute_list",
        "marker_annotation",
        "annotation",
        "attribute",
    }
)
_WS = re.compile(r"\s+")
_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_DIRECTIVE = re.compile(
    r"^(go:|\+build|nolint|eslint|@ts-|prettier-ignore|istanbul |#region|"
    r"#endregion|region\b|endregion\b|TODO\b|FIXME\b|pylint)"
)


def node_text(node: Node, data: bytes, limit: int | None = None) -> str:
    end = node.end_byte if limit is None else min(node.end_byte, node.start_byte + limit)
    return data[node.start_byte : end].decode("utf-8", errors="replace")


def string_value(node: Node | None, data: bytes) -> str | None:
    """The content of a string literal node without its quotes (``None`` if interpolated)."""
    if node is None:
        return None
    if any(c.type in ("template_substitution", "interpolation") for c in node.named_children):
        return None
    text = node_text(node, data).strip()
    if text[:1] == "@":  # C# verbatim string
        text = text[1:]
    if len(text) >= 2 and text[0] in "\"'`<" and text[-1] in "\"'`>":
        return text[1:-1]
    return text


def effective_end_row(node: Node) -> int:
    """The last row holding text of ``node`` (a node ending at column 0 ends on the row before)."""
    row, col = node.end_point
    start_row = node.start_point[0]
    if col == 0 and row > start_row:
        return row - 1
    return row


def declaration_wrapper(node: Node) -> Any:
    """The outermost node that stands for ``node`` alone: ``export const x = 1`` for the
    declarator ``x = 1``, but not a grouped ``const ( ... )`` holding several specs."""
    current = node
    parent = current.parent
    while parent is not None and parent.type in WRAPPERS:
        same = sum(1 for c in parent.named_children if c.type == current.type)
        if same != 1:
            break
        current = parent
        parent = current.parent
    return current


def _header_start(node: Node) -> int:
    """Start byte of a declaration, skipping leading decorators, attributes and comments."""
    start = node.start_byte
    for child in node.children:
        if child.type in _PREFIX_TYPES or "comment" in child.type:
            start = child.end_byte
            continue
        if child.type == "modifiers":  # Java: annotations live inside the modifiers
            inner = [c for c in child.children if c.type not in _PREFIX_TYPES]
            return inner[0].start_byte if inner else child.end_byte
        return child.start_byte
    return start


def _body_start(node: Node) -> int | None:
    """Start byte of the body of ``node``: its ``body`` field, else the earliest body-like node
    or ``{`` token within three levels (bounded breadth-first)."""
    # a comment between the header and the body (Ruby) ends the header too
    comment = next(
        (
            c.start_byte
            for c in node.named_children
            if "comment" in c.type and c.start_byte > node.start_byte
        ),
        None,
    )
    body = node.child_by_field_name("body")
    if (
        body is not None
        and body.start_byte > node.start_byte
        and (
            body.type in BODY_TYPES
            or body.type.endswith(("block", "body"))
            or body.type == "object_type"  # an interface body in older TypeScript grammars
        )
    ):
        return body.start_byte if comment is None else min(comment, body.start_byte)
    best = comment
    frontier = [node]
    for depth in range(3):
        next_frontier = []
        for n in frontier:
            for child in n.children:
                if (
                    child.is_named
                    and child.type in BODY_TYPES
                    or (not child.is_named and child.type == "{" and depth < 2)
                ):
                    if best is None or child.start_byte < best:
                        best = child.start_byte
                elif child.is_named and child.type not in (
                    "formal_parameters",
                    "parameter_list",
                    "parameters",
                    "arguments",
                ):
                    next_frontier.append(child)
        if best is not None:
            return best
        frontier = next_frontier
    return best


def signature(def_node: Any, kind: str, data: bytes, wrapper: Any = None) -> str | None:
    """A one-line header: the declaration text up to its body, whitespace collapsed.
    ``wrapper`` is :func:`declaration_wrapper` of ``def_node`` where the caller has it."""
    if wrapper is None:
        wrapper = declaration_wrapper(def_node)
    start = _header_start(wrapper)
    end = wrapper.end_byte
    if kind in FIRST_LINE_KINDS:
        newline = data.find(b"\n", start, end)
        if newline >= 0:
            end = newline
    else:
        body = _body_start(def_node)
        if body is not None and body > start:
            end = body
    end = min(end, start + _MAX_HEADER_BYTES)
    if end <= start:
        return None
    text = _WS.sub(" ", data[start:end].decode("utf-8", errors="replace")).strip()
    text = text.rstrip(";,{ ").rstrip()
    return text or None  # (the core cuts long signatures)


def docstring(node: Node, data: bytes) -> str | None:
    """The comment block immediately above a declaration (JSDoc, ``//`` or ``#`` lines), reduced
    cleaned of comment markers. ``node`` is the declaration's :func:`declaration_wrapper`."""
    # A declaration that opens its parent's body (Ruby's body_statement) takes the parent's comment.
    while (
        node.prev_sibling is None
        and node.parent is not None
        and node.parent.start_byte == node.start_byte
    ):
        node = node.parent
    prev = node.prev_sibling
    while prev is not None and prev.type in _PREFIX_TYPES:
        node, prev = prev, prev.prev_sibling
    line = node.start_point[0]
    comments: list[str] = []
    while prev is not None and "comment" in prev.type:
        if effective_end_row(prev) < line - 1:
            break
        before = prev.prev_sibling
        if (
            before is not None
            and "comment" not in before.type
            and effective_end_row(before) == prev.start_point[0]
        ):
            break  # a trailing comment of the previous statement
        comments.append(node_text(prev, data, 8192))
        line = prev.start_point[0]
        prev = before
        if len(comments) > 200:
            break
    if not comments:
        return None
    return clean_comment("\n".join(reversed(comments)))


def clean_comment(raw: str) -> str | None:
    """Strip comment markers and JSDoc tags (the core keeps the first paragraph)."""
    lines: list[str] = []
    for line in raw.splitlines():
        s = line.strip()
        if s.startswith("/*"):
            s = s[2:].lstrip("*!")
        if s.endswith("*/"):
            s = s[:-2]
        s = s.strip()
        if s.startswith("//"):
            s = s.lstrip("/").lstrip("!")
        elif s.startswith("#"):
            s = s.lstrip("#")
        elif s.startswith("*"):
            s = s[1:]
        s = s.strip()
        if _DIRECTIVE.match(s):
            continue
        if s.startswith("@") and lines:  # JSDoc / Javadoc tags end the description
            break
        lines.append(s)
    text = "\n".join(lines).strip()
    if text.startswith("<"):  # C# XML documentation
        text = _XML_TAG.sub("", text).strip()
    return text or None  # (the core keeps the first paragraph, cut to length)
