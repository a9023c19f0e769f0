"""The default Python backend, on the standard library's ``ast``.

Definitions: classes, functions, methods, module- and class-level assignments, with end lines,
one-line signatures and docstrings. References: calls, names and attributes in load context.
Imports: ``import x``, ``from x import y as z``, relative imports with their level.
"""

from __future__ import annotations

import ast
import builtins
import logging
import sys
import warnings
from collections.abc import Iterator
from typing import Any

from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import DEF, REF, BackendInfo, Capability, Import, SourceFile, SymbolKind, Tag

from .common import (
    PYTHON_EXTENSIONS,
    _FunctionNode,
    is_python,
    parse_python,
    resolve_python_import,
    signature_of,
    variable_kind,
)
from .modules import RESOLVER_VERSION

log = logging.getLogger(__name__)

NAME = "python_ast"
VERSION = f"1.0-{RESOLVER_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}"
_IGNORED_REFS = frozenset({"self", "cls"})
#: References to builtins (``str``, ``len``) are dropped unless the file binds the name itself by
#: an import or a definition: otherwise a compat module's ``str = str`` attracts every file.
_BUILTINS = frozenset(dir(builtins))


@hookimpl
def backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=VERSION,
        languages=("python",),
        extensions=PYTHON_EXTENSIONS,
        capabilities=tuple(c.value for c in Capability),
        description="Python via the standard library's ast (fast; name-based references)",
        detail=f"Python {sys.version.split()[0]} grammar",
    )


def parse_module(source: SourceFile) -> ast.Module | None:
    """Parse ``source``; on any failure log a warning with a reason code and return ``None``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not our business
            return parse_python(source.data, source.path)
    except SyntaxError as exc:
        code = (
            "decode_error" if "decode" in str(exc) or "utf-8" in str(exc).lower() else "parse_error"
        )
        log.warning(
            "%s: cannot parse: %s", source.path, exc.msg, extra={"code": code, "path": source.path}
        )
    except ValueError as exc:  # null bytes
        log.warning(
            "%s: cannot parse: %s",
            source.path,
            exc,
            extra={"code": "parse_error", "path": source.path},
        )
    except (RecursionError, MemoryError):
        log.warning(
            "%s: nesting too deep to parse",
            source.path,
            extra={"code": "too_deep", "path": source.path},
        )
    return None


def _docstring(node: _FunctionNode | ast.ClassDef) -> str | None:
    try:
        doc = ast.get_docstring(node, clean=True)
    except TypeError:
        return None
    return doc or None  # (the core keeps the first paragraph, cut to length)


def _assigned_names(node: ast.AST) -> Iterator[ast.Name]:
    targets: list[ast.AST]
    if isinstance(node, ast.Assign):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    else:
        return
    stack = targets
    while stack:
        t = stack.pop()
        if isinstance(t, ast.Name):
            yield t
        elif isinstance(t, ast.Tuple | ast.List):
            stack.extend(t.elts)
        elif isinstance(t, ast.Starred):
            stack.append(t.value)


_FIELDS: dict[type[ast.AST], tuple[str, ...]] = {}
_STATEMENT_LISTS = ("body", "orelse", "finalbody", "handlers", "cases")


def _fields(t: type[ast.AST]) -> tuple[str, ...]:
    found = _FIELDS.get(t)
    if found is None:
        found = _FIELDS[t] = tuple(f for f in t._fields if f != "ctx")
    return found


def _definition_outer(node: _FunctionNode | ast.ClassDef) -> list[ast.AST]:
    """Decorators, bases, defaults and annotations: they belong to the enclosing scope."""
    outer: list[ast.AST] = [*node.decorator_list]
    if isinstance(node, ast.ClassDef):
        outer += [*node.bases, *(k.value for k in node.keywords)]
    else:
        a = node.args
        outer += [d for d in (*a.defaults, *a.kw_defaults) if d is not None]
        outer += [
            x.annotation
            for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
            if x is not None and x.annotation is not None
        ]
        if node.returns is not None:
            outer.append(node.returns)
    return outer


def analyse(tree: ast.Module, path: str) -> tuple[list[Tag], list[Import]]:
    """Definitions, references and imports in ``tree``, without recursion (deep code is safe).

    Statements are walked with their scope (only they can define names); the expressions they
    hold are collected and walked afterwards as a flat stack, since an expression never contains
    a definition. This keeps the per-node work small: the walk dominates extraction time.
    """
    defs: list[Tag] = []
    imports: list[Import] = []
    bound: set[str] = set()
    exprs: list[ast.AST] = []
    # (statements, scope, container) where container is "module", "class" or "function"
    blocks: list[tuple[list[ast.stmt], str, str]] = [(tree.body, "", "module")]
    while blocks:
        statements, scope, container = blocks.pop()
        for node in statements:
            t = type(node)
            kind: str
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                if isinstance(node, ast.ClassDef):
                    kind, inner = SymbolKind.CLASS, "class"
                else:
                    kind = SymbolKind.METHOD if container == "class" else SymbolKind.FUNCTION
                    inner = "function"
                defs.append(
                    Tag(
                        path,
                        node.lineno,
                        node.end_lineno or node.lineno,
                        node.name,
                        DEF,
                        kind,
                        scope,
                        signature_of(node),
                        _docstring(node),
                    )
                )
                exprs.extend(_definition_outer(node))
                blocks.append((node.body, f"{scope}.{node.name}" if scope else node.name, inner))
                continue
            if isinstance(node, ast.Import):
                for a in node.names:
                    imports.append(Import(path, a.name, (), False, node.lineno, 0, (), a.asname))
                    bound.update((a.asname or a.name.split(".")[0], a.name))
                continue
            if isinstance(node, ast.ImportFrom):
                imports.append(
                    Import(
                        path,
                        node.module or "",
                        tuple(a.name for a in node.names),
                        node.level > 0,
                        node.lineno,
                        node.level,
                        tuple(a.asname for a in node.names),
                        None,
                    )
                )
                bound.update(a.asname or a.name for a in node.names)
                continue
            if container != "function" and isinstance(node, ast.Assign | ast.AnnAssign):
                for target in _assigned_names(node):
                    kind = SymbolKind.FIELD if container == "class" else variable_kind(target.id)
                    defs.append(
                        Tag(
                            path,
                            target.lineno,
                            node.end_lineno or target.lineno,
                            target.id,
                            DEF,
                            kind,
                            scope,
                            signature_of(node),
                            None,
                        )
                    )
            for name in _fields(t):
                value = getattr(node, name, None)
                if isinstance(value, list):
                    if name in _STATEMENT_LISTS:
                        if name == "handlers" or name == "cases":
                            for handler in value:  # except clauses and match cases hold statements
                                blocks.append((handler.body, scope, container))
                                exprs.extend(
                                    getattr(handler, f)
                                    for f in ("type", "pattern", "guard")
                                    if getattr(handler, f, None) is not None
                                )
                        else:
                            blocks.append((value, scope, container))
                    else:
                        exprs.extend(v for v in value if isinstance(v, ast.AST))
                elif isinstance(value, ast.AST):
                    exprs.append(value)
    refs = _references(exprs)
    bound.update(t.name for t in defs)
    tags = defs + [
        Tag(path, line, line, name, REF, kind, "", None, None)
        for (line, name), kind in refs.items()
        if name not in _IGNORED_REFS and (name not in _BUILTINS or name in bound)
    ]
    tags.sort(key=lambda t: (t.start_line, t.kind, t.name, t.end_line, t.scope))
    imports.sort(key=lambda i: (i.line_number, i.source, i.names))
    return tags, imports


def _references(stack: list[ast.AST]) -> dict[tuple[int, str], str]:
    """(line, name) -> reference kind for every name, attribute and call in the expressions."""
    refs: dict[tuple[int, str], str] = {}
    name_t, attr_t, call_t, const_t, load_t = (
        ast.Name,
        ast.Attribute,
        ast.Call,
        ast.Constant,
        ast.Load,
    )
    while stack:
        # dispatched on its exact type, which is faster than isinstance here (the hottest
        # loop of the backend) but which mypy does not narrow on
        node: Any = stack.pop()
        t = type(node)
        if t is name_t:
            if type(node.ctx) is load_t:
                refs.setdefault((node.lineno, node.id), SymbolKind.NAME)
            continue
        if t is const_t:
            continue
        if t is attr_t:
            if type(node.ctx) is load_t:
                refs.setdefault((node.end_lineno or node.lineno, node.attr), SymbolKind.ATTRIBUTE)
            stack.append(node.value)
            continue
        if t is call_t:
            func = node.func
            if type(func) is name_t:
                refs[(func.lineno, func.id)] = SymbolKind.CALL
            elif type(func) is attr_t:
                refs[(func.end_lineno or func.lineno, func.attr)] = SymbolKind.CALL
        for name in _fields(t):
            value = getattr(node, name, None)
            if isinstance(value, list):
                stack.extend(v for v in value if isinstance(v, ast.AST))
            elif isinstance(value, ast.AST):
                stack.append(value)
    return refs


def collect_tags(tree: ast.Module, path: str) -> list[Tag]:
    """Definitions and references of a parsed module (see :func:`analyse`)."""
    return analyse(tree, path)[0]


def collect_imports(tree: ast.Module, path: str) -> list[Import]:
    """Imports of a parsed module (see :func:`analyse`)."""
    return analyse(tree, path)[1]


def analyse_source(source: SourceFile) -> tuple[list[Tag], list[Import]]:
    """Definitions, references and imports of ``source``, parsed and analysed once per file
    (the tags and imports hooks share the result through :meth:`SourceFile.memo`)."""
    return source.memo((NAME, "analysis"), lambda: _analyse_uncached(source))


def _analyse_uncached(source: SourceFile) -> tuple[list[Tag], list[Import]]:
    tree = parse_module(source)
    result: tuple[list[Tag], list[Import]] = ([], [])
    if tree is not None:
        try:
            result = analyse(tree, source.path)
        except RecursionError:  # ast.unparse on pathological input
            log.warning(
                "%s: nesting too deep", source.path, extra={"code": "too_deep", "path": source.path}
            )
    return result


@hookimpl
def extract_tags(source: SourceFile) -> list[Tag] | None:
    if not is_python(source.path):
        return None
    return list(analyse_source(source)[0])


@hookimpl
def extract_imports(source: SourceFile) -> list[Import] | None:
    if not is_python(source.path):
        return None
    return list(analyse_source(source)[1])


@hookimpl
def resolve_import(imp: Import, index: RepoIndex) -> list[str] | None:
    found = resolve_python_import(imp, index)
    return None if found is None else list(found)
