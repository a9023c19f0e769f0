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

from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import DEF, REF, BackendInfo, Capability, Import, SourceFile, SymbolKind, Tag

from .python_common import PYTHON_EXTENSIONS, is_python, resolve_python_import

log = logging.getLogger(__name__)

NAME = "python_ast"
VERSION = f"1.0-py{sys.version_info[0]}.{sys.version_info[1]}"
MAX_SIGNATURE = 240
_IGNORED_REFS = frozenset({"self", "cls"})
#: References to builtins (``str``, ``len``) are dropped unless the file binds the name itself by
#: an import or a definition: otherwise a compat module's ``str = str`` attracts every file.
_BUILTINS = frozenset(dir(builtins))
_REF_PRIORITY = {SymbolKind.CALL: 0, SymbolKind.ATTRIBUTE: 1, SymbolKind.NAME: 2}

_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


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
            return ast.parse(source.data, filename=source.path, type_comments=False)
    except SyntaxError as exc:
        code = "decode_error" if "decode" in str(exc) or "utf-8" in str(exc).lower() else "parse_error"
        log.warning("%s: cannot parse: %s", source.path, exc.msg, extra={"code": code, "path": source.path})
    except ValueError as exc:  # null bytes
        log.warning("%s: cannot parse: %s", source.path, exc, extra={"code": "parse_error", "path": source.path})
    except (RecursionError, MemoryError):
        log.warning(
            "%s: nesting too deep to parse", source.path, extra={"code": "too_deep", "path": source.path}
        )
    return None


def _unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (RecursionError, ValueError):
        return "..."


def _signature(node: ast.AST) -> str:
    if isinstance(node, _FunctionNode):
        prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
        returns = f" -> {_unparse(node.returns)}" if node.returns is not None else ""
        sig = f"{prefix} {node.name}({_unparse(node.args)}){returns}:"
    elif isinstance(node, ast.ClassDef):
        bases = [_unparse(b) for b in node.bases] + [_unparse(k) for k in node.keywords]
        sig = f"class {node.name}({', '.join(bases)}):" if bases else f"class {node.name}:"
    else:
        sig = _unparse(node).split("\n", 1)[0]
    if len(sig) > MAX_SIGNATURE:
        sig = sig[: MAX_SIGNATURE - 3] + "..."
    return sig


def _docstring(node: ast.AST) -> str | None:
    try:
        doc = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]
    except TypeError:
        return None
    if not doc:
        return None
    return doc.strip().split("\n\n", 1)[0][:500]


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


def _variable_kind(name: str) -> str:
    letters = [c for c in name if c.isalpha()]
    if letters and all(c.isupper() for c in letters) and len(name) > 1:
        return SymbolKind.CONSTANT
    return SymbolKind.VARIABLE


def _children(node: ast.AST) -> list[ast.AST]:
    """Child nodes without ``ast.iter_child_nodes``'s generator overhead, and without the
    ``ctx`` markers (a Load/Store instance under every name) that carry nothing for us."""
    out: list[ast.AST] = []
    for name in node._fields:
        if name == "ctx":
            continue
        value = getattr(node, name, None)
        if isinstance(value, list):
            out.extend(v for v in value if isinstance(v, ast.AST))
        elif isinstance(value, ast.AST):
            out.append(value)
    return out


def analyse(tree: ast.Module, path: str) -> tuple[list[Tag], list[Import]]:
    """Definitions, references and imports in ``tree``, in one walk without recursion (deep
    code is safe)."""
    defs: list[Tag] = []
    imports: list[Import] = []
    bound: set[str] = set()
    refs: dict[tuple[int, str], str] = {}
    # (node, scope, container) where container is "module", "class" or "function"
    stack: list[tuple[ast.AST, str, str]] = [(tree, "", "module")]
    while stack:
        node, scope, container = stack.pop()
        if isinstance(node, _FunctionNode | ast.ClassDef):
            if isinstance(node, ast.ClassDef):
                kind, inner = SymbolKind.CLASS, "class"
            else:
                kind = SymbolKind.METHOD if container == "class" else SymbolKind.FUNCTION
                inner = "function"
            defs.append(
                Tag(path, node.lineno, node.end_lineno or node.lineno, node.name, DEF, kind, scope,
                    _signature(node), _docstring(node))
            )
            inner_scope = f"{scope}.{node.name}" if scope else node.name
            # decorators, bases, defaults and annotations belong to the enclosing scope
            outer = [*node.decorator_list]
            if isinstance(node, ast.ClassDef):
                outer += [*node.bases, *(k.value for k in node.keywords)]
            else:
                a = node.args
                outer += [d for d in (*a.defaults, *a.kw_defaults) if d is not None]
                outer += [x.annotation for x in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg)
                          if x is not None and x.annotation is not None]
                if node.returns is not None:
                    outer.append(node.returns)
            stack.extend((child, scope, container) for child in reversed(outer))
            stack.extend((child, inner_scope, inner) for child in reversed(node.body))
            continue
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                refs.setdefault((node.lineno, node.id), SymbolKind.NAME)
            continue
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                refs[(func.lineno, func.id)] = SymbolKind.CALL
            elif isinstance(func, ast.Attribute):
                refs[(func.end_lineno or func.lineno, func.attr)] = SymbolKind.CALL
        elif isinstance(node, ast.Attribute):
            if isinstance(node.ctx, ast.Load):
                refs.setdefault((node.end_lineno or node.lineno, node.attr), SymbolKind.ATTRIBUTE)
        elif isinstance(node, ast.Import):
            for a in node.names:
                imports.append(Import(path, a.name, (), False, node.lineno, 0, (), a.asname))
                bound.update((a.asname or a.name.split(".")[0], a.name))
            continue
        elif isinstance(node, ast.ImportFrom):
            imports.append(
                Import(path, node.module or "", tuple(a.name for a in node.names), node.level > 0,
                       node.lineno, node.level, tuple(a.asname for a in node.names), None)
            )
            bound.update(a.asname or a.name for a in node.names)
            continue
        elif container in ("module", "class") and isinstance(node, ast.Assign | ast.AnnAssign):
            for target in _assigned_names(node):
                kind = SymbolKind.FIELD if container == "class" else _variable_kind(target.id)
                defs.append(
                    Tag(path, target.lineno, node.end_lineno or target.lineno, target.id, DEF,
                        kind, scope, _signature(node), None)
                )
        elif isinstance(node, ast.Constant):
            continue
        children = _children(node)
        children.reverse()
        stack.extend((child, scope, container) for child in children)
    bound.update(t.name for t in defs)
    tags = defs + [
        Tag(path, line, line, name, REF, kind, "", None, None)
        for (line, name), kind in refs.items()
        if name not in _IGNORED_REFS and (name not in _BUILTINS or name in bound)
    ]
    tags.sort(key=lambda t: (t.start_line, t.kind, t.name, t.end_line, t.scope))
    imports.sort(key=lambda i: (i.line_number, i.source, i.names))
    return tags, imports


def collect_tags(tree: ast.Module, path: str) -> list[Tag]:
    """Definitions and references of a parsed module (see :func:`analyse`)."""
    return analyse(tree, path)[0]


def collect_imports(tree: ast.Module, path: str) -> list[Import]:
    """Imports of a parsed module (see :func:`analyse`)."""
    return analyse(tree, path)[1]


#: The last file analysed: extract_tags and extract_imports are asked one after the other for
#: the same file, and it is parsed once.
_memo: tuple[str, bytes, tuple[list[Tag], list[Import]]] | None = None


def analyse_source(source: SourceFile) -> tuple[list[Tag], list[Import]]:
    global _memo
    if _memo is not None and _memo[0] == source.path and _memo[1] == source.data:
        return _memo[2]
    tree = parse_module(source)
    result: tuple[list[Tag], list[Import]] = ([], [])
    if tree is not None:
        try:
            result = analyse(tree, source.path)
        except RecursionError:  # ast.unparse on pathological input
            log.warning("%s: nesting too deep", source.path, extra={"code": "too_deep", "path": source.path})
    _memo = (source.path, source.data, result)
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
