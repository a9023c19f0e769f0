"""Imports from a parsed file: the language's imports query finds the statements
(``@import.<handler>``), and a small handler per statement form reads them as written."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from repomapper.model import Import, import_sort_key

from .captures import captured
from .parsing import PLACEHOLDER, Parsed
from .snippets import node_text, string_value

if TYPE_CHECKING:
    from tree_sitter import Node

Handler = Callable[[Any, bytes, str], list[Import]]


def _line(node: Node) -> int:
    return node.start_point[0] + 1


def _text(node: Node, data: bytes) -> str:
    return node_text(node, data, 2048).strip()


def _dotted(node: Node, data: bytes) -> str:
    return "".join(_text(node, data).split())


# -- JavaScript / TypeScript ------------------------------------------------------------------


def _es_names(clause: Any, data: bytes) -> tuple[list[str], list[str | None], str | None]:
    names: list[str] = []
    aliases: list[str | None] = []
    alias: str | None = None
    for child in clause.named_children:
        if child.type == "identifier":  # default import
            names.append("default")
            aliases.append(_text(child, data))
        elif child.type in ("namespace_import", "namespace_export"):
            ids = [c for c in child.named_children if c.type in ("identifier", "string")]
            if ids:
                alias = (
                    string_value(ids[0], data) if ids[0].type == "string" else _text(ids[0], data)
                )
        elif child.type in ("named_imports", "export_clause"):
            for spec in child.named_children:
                if spec.type not in ("import_specifier", "export_specifier"):
                    continue
                name = spec.child_by_field_name("name")
                local = spec.child_by_field_name("alias")
                if name is None:
                    continue
                names.append(_spec_name(name, data))
                aliases.append(_spec_name(local, data) if local is not None else None)
    return names, aliases, alias


def _spec_name(node: Node, data: bytes) -> str:
    if node.type == "string":
        return string_value(node, data) or ""
    return _text(node, data)


def _es_import(node: Node, data: bytes, path: str) -> list[Import]:
    source_node = node.child_by_field_name("source")
    names: list[str] = []
    aliases: list[str | None] = []
    alias: str | None = None
    for child in node.named_children:
        if child.type == "import_clause":
            names, aliases, alias = _es_names(child, data)
        elif child.type == "import_require_clause":  # import x = require("./x")
            source_node = child.child_by_field_name("source")
            ids = [c for c in child.named_children if c.type == "identifier"]
            alias = _text(ids[0], data) if ids else None
    source = string_value(source_node, data) if source_node is not None else None
    if not source:
        return []
    return [_es_record(path, source, names, aliases, alias, node)]


def _es_record(
    path: str,
    source: str,
    names: list[str],
    aliases: list[str | None],
    alias: str | None,
    node: Node,
) -> Import:
    """The import record of an ES/CommonJS statement: relative when its specifier starts with
    a dot."""
    return Import(
        path, source, tuple(names), source.startswith("."), _line(node), 0, tuple(aliases), alias
    )


def _es_export(node: Node, data: bytes, path: str) -> list[Import]:
    source = string_value(node.child_by_field_name("source"), data)
    if not source:
        return []
    names: list[str] = []
    aliases: list[str | None] = []
    alias: str | None = None
    if any(c.type == "*" for c in node.children):
        names, aliases = ["*"], [None]
    for child in node.named_children:
        if child.type == "namespace_export":
            _, _, alias = _es_names(node, data)
            names, aliases = ["*"], [None]
        elif child.type == "export_clause":
            names, aliases, _ = _es_names(node, data)
    return [_es_record(path, source, names, aliases, alias, node)]


def _first_string_argument(call: Any, data: bytes) -> str | None:
    args = call.child_by_field_name("arguments")
    if args is None or args.named_child_count == 0:
        return None
    first = args.named_children[0]
    if first.type not in ("string", "template_string"):
        return None
    return string_value(first, data)


def _require(node: Node, data: bytes, path: str) -> list[Import]:
    source = _first_string_argument(node, data)
    if not source:
        return []
    names: list[str] = []
    aliases: list[str | None] = []
    alias: str | None = None
    parent = node.parent
    if parent is not None and parent.type == "variable_declarator":
        target = parent.child_by_field_name("name")
        if target is not None and target.type == "identifier":
            alias = _text(target, data)
        elif target is not None and target.type == "object_pattern":
            for prop in target.named_children:
                if prop.type == "shorthand_property_identifier_pattern":
                    names.append(_text(prop, data))
                    aliases.append(None)
                elif prop.type == "pair_pattern":
                    key, value = prop.child_by_field_name("key"), prop.child_by_field_name("value")
                    if key is not None:
                        names.append(_spec_name(key, data))
                        aliases.append(_text(value, data) if value is not None else None)
    return [_es_record(path, source, names, aliases, alias, node)]


def _dynamic(node: Node, data: bytes, path: str) -> list[Import]:
    source = _first_string_argument(node, data)
    if not source:
        return []
    return [Import(path, source, (), source.startswith("."), _line(node))]


# -- Go -----------------------------------------------------------------------------------------


def _go(node: Node, data: bytes, path: str) -> list[Import]:
    source = string_value(node.child_by_field_name("path"), data)
    if not source:
        return []
    name = node.child_by_field_name("name")
    alias = _text(name, data) if name is not None else None
    return [Import(path, source, (), source.startswith("."), _line(node), 0, (), alias)]


# -- Rust ---------------------------------------------------------------------------------------

_RUST_LOCAL = ("crate", "self", "super")


def _rust_use(node: Node, data: bytes, path: str) -> list[Import]:
    argument = node.child_by_field_name("argument")
    if argument is None:
        return []
    # (path segments, name, alias) for every leaf of the use tree, walked with a stack
    leaves: list[tuple[tuple[str, ...], str, str | None]] = []
    stack: list[tuple[tuple[str, ...], Any]] = [((), argument)]
    while stack:
        prefix, n = stack.pop()
        if n.type == "use_as_clause":
            target, alias = n.child_by_field_name("path"), n.child_by_field_name("alias")
            if target is not None:
                parts = prefix + tuple(_dotted(target, data).split("::"))
                leaves.append((parts[:-1], parts[-1], _text(alias, data) if alias else None))
        elif n.type == "use_wildcard":
            inner = [c for c in n.named_children]
            parts = prefix + (tuple(_dotted(inner[0], data).split("::")) if inner else ())
            leaves.append((parts, "*", None))
        elif n.type == "scoped_use_list":
            target, group = n.child_by_field_name("path"), n.child_by_field_name("list")
            parts = prefix + (tuple(_dotted(target, data).split("::")) if target else ())
            if group is not None:
                stack.extend((parts, c) for c in reversed(group.named_children))
        elif n.type == "use_list":
            stack.extend((prefix, c) for c in reversed(n.named_children))
        elif n.is_named and "comment" not in n.type:
            parts = prefix + tuple(_dotted(n, data).split("::"))
            leaves.append((parts[:-1], parts[-1], None))
    grouped: dict[tuple[str, ...], tuple[list[str], list[str | None]]] = {}
    singles: list[Import] = []
    for parts, name, alias in leaves:
        if not parts:
            singles.append(Import(path, name, (), name in _RUST_LOCAL, _line(node), 0, (), alias))
            continue
        names, aliases = grouped.setdefault(parts, ([], []))
        names.append(name)
        aliases.append(alias)
    return singles + [
        Import(
            path,
            "::".join(parts),
            tuple(names),
            parts[0] in _RUST_LOCAL,
            _line(node),
            0,
            tuple(aliases),
        )
        for parts, (names, aliases) in grouped.items()
    ]


def _rust_mod(node: Node, data: bytes, path: str) -> list[Import]:
    name = node.child_by_field_name("name")
    if name is None or node.child_by_field_name("body") is not None:
        return []
    return [Import(path, _text(name, data), (), True, _line(node))]


def _rust_extern(node: Node, data: bytes, path: str) -> list[Import]:
    name = node.child_by_field_name("name")
    alias = node.child_by_field_name("alias")
    if name is None:
        return []
    return [
        Import(
            path,
            _text(name, data),
            (),
            False,
            _line(node),
            0,
            (),
            _text(alias, data) if alias is not None else None,
        )
    ]


# -- Java, C#, PHP ------------------------------------------------------------------------------


def _java(node: Node, data: bytes, path: str) -> list[Import]:
    target = [c for c in node.named_children if c.type in ("scoped_identifier", "identifier")]
    if not target:
        return []
    wildcard = any(c.type == "asterisk" for c in node.named_children)
    return [Import(path, _dotted(target[0], data), ("*",) if wildcard else (), False, _line(node))]


def _kotlin(node: Node, data: bytes, path: str) -> list[Import]:
    """``import a.b.C``, ``import a.b.*`` (names ``("*",)``) and ``import a.b.C as D``."""
    target = next((c for c in node.named_children if c.type == "qualified_identifier"), None)
    if target is None:
        return []
    wildcard = any(c.type == "*" for c in node.children)
    alias_node = next((c for c in node.named_children if c.type == "identifier"), None)
    alias = _text(alias_node, data) if alias_node is not None else None
    return [
        Import(
            path,
            _dotted(target, data).replace("`", ""),
            ("*",) if wildcard else (),
            False,
            _line(node),
            0,
            (),
            alias,
        )
    ]


def _csharp(node: Node, data: bytes, path: str) -> list[Import]:
    alias_node = node.child_by_field_name("name")
    targets = [
        c
        for c in node.named_children
        if c.type in ("qualified_name", "identifier", "generic_name", "alias_qualified_name")
        and not (alias_node is not None and c.start_byte == alias_node.start_byte)
    ]
    if not targets:
        return []
    alias = _text(alias_node, data) if alias_node is not None else None
    return [Import(path, _dotted(targets[-1], data), (), False, _line(node), 0, (), alias)]


def _php_use(node: Node, data: bytes, path: str) -> list[Import]:
    group = node.child_by_field_name("body")
    prefix = next((c for c in node.named_children if c.type == "namespace_name"), None)
    found: list[Import] = []
    if group is not None and prefix is not None:
        names: list[str] = []
        aliases: list[str | None] = []
        for clause in group.named_children:
            if clause.type != "namespace_use_clause":
                continue
            target, alias = _php_clause(clause, data)
            if target:
                names.append(target)
                aliases.append(alias)
        source = _dotted(prefix, data).strip("\\")
        found.append(Import(path, source, tuple(names), False, _line(node), 0, tuple(aliases)))
        return found
    for clause in node.named_children:
        if clause.type == "namespace_use_clause":
            target, alias = _php_clause(clause, data)
            if target:
                found.append(Import(path, target, (), False, _line(node), 0, (), alias))
    return found


def _php_clause(clause: Any, data: bytes) -> tuple[str, str | None]:
    alias_node = clause.child_by_field_name("alias")
    targets = [
        c
        for c in clause.named_children
        if c.type in ("qualified_name", "name", "namespace_name")
        and not (alias_node is not None and c.start_byte == alias_node.start_byte)
    ]
    target = _dotted(targets[0], data).lstrip("\\") if targets else ""
    return target, (_text(alias_node, data) if alias_node is not None else None)


def _php_require(node: Node, data: bytes, path: str) -> list[Import]:
    if node.named_child_count == 0:
        return []
    arg = node.named_children[0]
    if arg.type == "parenthesized_expression" and arg.named_child_count:
        arg = arg.named_children[0]
    source: str | None = None
    if arg.type in ("string", "encapsed_string"):
        source = string_value(arg, data)
    elif arg.type == "binary_expression":
        left, right = arg.child_by_field_name("left"), arg.child_by_field_name("right")
        if (
            left is not None
            and right is not None
            and _text(left, data) == "__DIR__"
            and right.type in ("string", "encapsed_string")
        ):
            tail = string_value(right, data)
            source = f".{tail}" if tail and tail.startswith("/") else tail
    if not source:
        return []
    return [Import(path, source, (), source.startswith("."), _line(node))]


# -- Ruby, C/C++ --------------------------------------------------------------------------------


def _ruby_require(node: Node, data: bytes, path: str) -> list[Import]:
    method = node.child_by_field_name("method")
    source = _first_string_argument(node, data)
    if method is None or not source:
        return []
    relative = _text(method, data) == "require_relative" or source.startswith(".")
    return [Import(path, source, (), relative, _line(node))]


def _c_include(node: Node, data: bytes, path: str) -> list[Import]:
    target = node.child_by_field_name("path")
    if target is None or target.type not in ("string_literal", "system_lib_string"):
        return []
    source = string_value(target, data)
    if not source:
        return []
    return [Import(path, source, (), target.type == "string_literal", _line(node))]


# -- every other language: the captured node is the imported path ------------------------------

_COMPUTED = frozenset(
    {
        "command_substitution",
        "simple_expansion",
        "expansion",
        "interpolation",
        "template_substitution",
    }
)


def _path(node: Node, data: bytes, path: str) -> list[Import]:
    """``@import.path`` on the node naming what is imported (a string literal or a dotted name);
    a path computed at run time (a shell expansion, an interpolation) is not an import we can
    follow."""
    if any(c.type in _COMPUTED for c in node.named_children):
        return []
    source = string_value(node, data) if "string" in node.type else _dotted(node, data)
    source = (source or "").strip()
    if not source or len(source) > 500 or PLACEHOLDER in source:
        return []
    return [Import(path, source, (), source.startswith("."), _line(node))]


def _scala(node: Node, data: bytes, path: str) -> list[Import]:
    """``import a.b.C`` and ``import a.b.{C, D => E}``."""
    parts: list[str] = []
    names: list[str] = []
    for i, child in enumerate(node.children):
        field = node.field_name_for_child(i)
        if field == "path" and child.is_named:
            parts.append(_text(child, data))
        elif child.type == "namespace_selectors":
            names.extend(_text(c, data).split("=>")[0].strip() for c in child.named_children)
    if not parts:
        return []
    return [Import(path, ".".join(parts), tuple(n for n in names if n), False, _line(node))]


HANDLERS: dict[str, Handler] = {
    "scala": _scala,
    "path": _path,
    "es_import": _es_import,
    "es_export": _es_export,
    "require": _require,
    "dynamic": _dynamic,
    "go": _go,
    "rust_use": _rust_use,
    "rust_mod": _rust_mod,
    "rust_extern": _rust_extern,
    "java": _java,
    "kotlin": _kotlin,
    "csharp": _csharp,
    "php_use": _php_use,
    "php_require": _php_require,
    "ruby_require": _ruby_require,
    "c_include": _c_include,
}


def collect_imports(parsed: Parsed) -> list[Import]:
    """The imports of ``parsed`` as written, sorted by line, without duplicates."""
    found: set[Import] = set()
    for kind, nodes in captured(parsed).imports:
        handler = HANDLERS.get(kind)
        if handler is None:
            continue
        for node in nodes:
            found.update(handler(node, parsed.data, parsed.path))
    return sorted(found, key=import_sort_key)
