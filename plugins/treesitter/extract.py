"""Definitions and references from a parsed file, from its query's matches (one walk of the
tree for tags and imports: :mod:`.captures`).

Capture conventions in ``queries/*-tags.scm``:

* ``@definition.<kind>`` on a definition node with ``@name`` on its name (and, for Go methods,
  ``@receiver`` on the receiver type, which becomes the scope);
* ``@scope.<kind>`` on a node that only encloses others (Rust ``impl``, C++ ``namespace``, an
  anonymous function), with an optional ``@name``;
* ``@reference.<kind>`` on the name node of a reference (``call``, ``type``, ``attribute``,
  ``name``).

Scopes come from nesting, computed with a stack over the sorted node ranges (no recursion).
"""

from __future__ import annotations

import operator
import re
from dataclasses import dataclass
from typing import Any

from repomapper.model import DEF, Tag, reference_tag, tag_sort_key

from .captures import Captured, captured
from .parsing import PLACEHOLDER, Parsed
from .snippets import declaration_wrapper, docstring, effective_end_row, node_text, signature

#: Kinds that enclose other definitions (and so appear in their scope).
CONTAINER_KINDS = frozenset(
    {
        "class",
        "interface",
        "enum",
        "module",
        "namespace",
        "impl",
        "function",
        "method",
        "struct",
        "trait",
        "object",
    }
)
#: A function directly inside one of these is a method.
CLASS_LIKE = frozenset({"class", "interface", "impl", "trait", "struct", "enum", "object"})
#: Names declared inside a function or method body are locals, not definitions.
LOCAL_KINDS = frozenset({"variable", "constant"})
FUNCTION_KINDS = frozenset({"function", "method"})
#: Grammars where a function's body is the signature's next sibling, not its child (Dart).
DETACHED_BODIES = frozenset({"function_body"})
SIGNATURE_WRAPPERS = frozenset({"method_signature"})
_START_LINE = operator.attrgetter("start_line")
_MAX_NAME = 200
_SCOPE_CUT = re.compile(r"[<\[( ]")
_SPACE = re.compile(r"\s")


@dataclass(frozen=True, slots=True)
class _Entry:
    """A definition or an enclosing scope, by byte range."""

    start: int
    end: int
    order: int  # definitions before scopes of the same range
    kind: str
    chain_name: str  # what it contributes to the scope path of what it encloses
    name: str = ""
    qualifier: str = ""
    def_node: Any = None
    line: int = 0  # 1-based line of the name (its last segment, for a qualified name)


def clean_scope(text: str) -> str:
    """``*Server`` -> ``Server``; ``Point<T>`` -> ``Point``; ``G[T]`` -> ``G``."""
    t = text.strip().lstrip("*&").strip()
    t = _SCOPE_CUT.split(t, maxsplit=1)[0]
    return t.strip()


def _valid_name(name: str) -> bool:
    return (
        bool(name)
        and len(name) <= _MAX_NAME
        and _SPACE.search(name) is None
        and PLACEHOLDER not in name
    )


def collect_tags(parsed: Parsed) -> list[Tag]:
    """Definitions and references of ``parsed``, sorted and without duplicates."""
    found = captured(parsed)
    definitions = _definition_tags(found, parsed)
    references = _reference_tags(found, parsed)
    # both are in the canonical order and a line's definitions sort before its references
    # (``"def" < "ref"``), so a stable sort by line alone merges them into it
    tags = definitions + references
    tags.sort(key=_START_LINE)
    return tags


def _definition_tags(found: Captured, parsed: Parsed) -> list[Tag]:
    """The definitions, each with the scope path of the named scopes around it, in the
    canonical order."""
    data, path = parsed.data, parsed.path
    entries: list[_Entry] = []
    for _, kind, def_node, name_node, receiver in found.defs.values():
        entry = _definition_entry(kind, def_node, name_node, receiver, data)
        if entry is not None:
            entries.append(entry)
    for kind, node, name_node in found.scopes:
        name = node_text(name_node, data, _MAX_NAME * 2).strip() if name_node is not None else ""
        if "::" in name:
            parts = [clean_scope(p) for p in name.split("::") if p.strip()]
            name = parts[-1] if kind == "impl" and parts else ".".join(parts)
        elif kind == "impl":
            name = clean_scope(name)
        entries.append(_Entry(node.start_byte, node.end_byte, 1, kind, name))
    entries.sort(key=lambda e: (e.start, -e.end, e.order))

    tags: set[Tag] = set()
    stack: list[_Entry] = []
    for entry in entries:
        while stack and not (stack[-1].start <= entry.start and entry.end <= stack[-1].end):
            stack.pop()
        if entry.def_node is not None:
            tag = _definition_tag(entry, stack, data, path)
            if tag is not None:
                tags.add(tag)
        if entry.kind in CONTAINER_KINDS:
            stack.append(entry)
    return sorted(tags, key=tag_sort_key)


def _reference_tags(found: Captured, parsed: Parsed) -> list[Tag]:
    """One reference per (line, name), of its kind of highest priority (the first matched of a
    kind), sorted by line and name: their canonical order, since a file's references differ in
    nothing else. The names of definitions and of named scopes are not references (a Rust
    ``impl`` type is)."""
    data, path = parsed.data, parsed.path
    not_refs = set(found.defs)
    not_refs.update(
        (n.start_byte, n.end_byte) for k, _, n in found.scopes if n is not None and k != "impl"
    )
    not_ref_starts = {start for start, _ in not_refs}
    refs: dict[tuple[int, str], str] = {}
    names: dict[bytes, str] = {}  # a file names the same identifiers over and over ("": invalid)
    longest = _MAX_NAME + 1
    for kind, matched in found.references():
        for nodes in matched:
            for node in nodes:
                start, end = node.start_byte, node.end_byte
                if start in not_ref_starts and (start, end) in not_refs:
                    continue
                raw = data[start : end if end - start <= longest else start + longest]
                name = names.get(raw)
                if name is None:
                    name = raw.decode("utf-8", "replace").strip()
                    name = names[raw] = name if _valid_name(name) else ""
                if name:  # kinds come highest priority first: the first one seen stays
                    refs.setdefault((node.start_point[0] + 1, name), kind)
    return [reference_tag(path, line, name, kind) for (line, name), kind in sorted(refs.items())]


def _definition_entry(
    kind: str, def_node: Any, name_node: Any, receiver: Any, data: bytes
) -> _Entry | None:
    raw = node_text(name_node, data, _MAX_NAME * 2).strip()
    qualifier = ""
    row = name_node.start_point[0]
    if "::" in raw:  # C++ ``void ns::Foo::run()``, Ruby ``class A::B``
        parts = [p.strip() for p in raw.split("::")]
        raw = parts[-1]
        qualifier = ".".join(clean_scope(p) for p in parts[:-1] if p)
        row = name_node.end_point[0]
    if raw.startswith(":") and len(raw) > 1:  # Ruby symbols (attr_reader :name)
        raw = raw[1:]
    if not _valid_name(raw):
        return None
    if receiver is not None:
        qualifier = clean_scope(node_text(receiver, data, _MAX_NAME * 2))
    chain_name = f"{qualifier}.{raw}" if qualifier else raw
    return _Entry(
        def_node.start_byte,
        def_node.end_byte,
        0,
        kind,
        chain_name,
        raw,
        qualifier,
        def_node,
        row + 1,
    )


def _end_row(node: Any) -> int:
    """The definition's last row; a body that follows its signature as a sibling (Dart) counts."""
    outer = (
        node.parent if node.parent is not None and node.parent.type in SIGNATURE_WRAPPERS else node
    )
    body = outer.next_named_sibling
    if body is not None and body.type in DETACHED_BODIES:
        return effective_end_row(body)
    return effective_end_row(node)


def _definition_tag(entry: _Entry, stack: list[_Entry], data: bytes, path: str) -> Tag | None:
    kind = entry.kind
    nearest = stack[-1].kind if stack else None
    if kind in LOCAL_KINDS and nearest in FUNCTION_KINDS:
        return None
    if kind == "function" and (
        nearest in CLASS_LIKE or (entry.qualifier and nearest not in FUNCTION_KINDS)
    ):
        kind = "method"  # a function in a class body, or ``void Widget::draw()``
    chain = [e.chain_name for e in stack if e.chain_name]
    if entry.qualifier:
        chain.append(entry.qualifier)
    end_line = _end_row(entry.def_node) + 1  # (the core clamps it: never before the start)
    wrapper = declaration_wrapper(entry.def_node)
    return Tag(
        path,
        entry.line,
        end_line,
        entry.name,
        DEF,
        kind,
        ".".join(chain),
        signature(entry.def_node, kind, data, wrapper),
        docstring(wrapper, data),
    )
