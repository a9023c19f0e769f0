"""Pieces shared by the Python backends: what they claim and how Python imports resolve."""

from __future__ import annotations

import ast
import logging
from collections.abc import Sequence

from repomapper.index import RepoIndex
from repomapper.model import Import, SymbolKind

from .modules import resolve_module, resolve_qualified, resolve_relative

log = logging.getLogger(__name__)

PYTHON_EXTENSIONS = (".py", ".pyi", ".pyw")
#: The two kinds of function definition node.
_FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


def is_python(path: str) -> bool:
    return path.lower().endswith(PYTHON_EXTENSIONS)


def resolve_python_import(imp: Import, index: RepoIndex) -> Sequence[str] | None:
    """Files in the repository an import refers to (``None`` for non-Python importers).

    ``from pkg import mod`` also resolves ``pkg/mod.py`` when ``mod`` is a submodule.
    """
    if not is_python(imp.file_path):
        return None
    found: set[str] = set()
    if imp.level:
        base = resolve_relative(index, imp.file_path, imp.source, imp.level)
        if base:
            found.add(base)
        for name in imp.names:
            sub = ".".join(p for p in (imp.source, name) if p)
            target = resolve_relative(index, imp.file_path, sub, imp.level)
            if target:
                found.add(target)
        return sorted(found)
    found.update(resolve_module(index, imp.source, imp.file_path))
    for name in imp.names:
        if name != "*":
            found.update(resolve_module(index, f"{imp.source}.{name}", imp.file_path))
    found.discard(imp.file_path)
    return sorted(found)


def resolve_python_target(file_path: str, target: str, index: RepoIndex) -> Sequence[str] | None:
    """Files defining a reference's qualified target (``None`` for non-Python files)."""
    if not is_python(file_path):
        return None
    return list(resolve_qualified(index, target, file_path))


def unparse(node: ast.AST) -> str:
    try:
        return ast.unparse(node)
    except (RecursionError, ValueError):
        return "..."


def signature_of(node: ast.AST) -> str:
    """A definition's one-line header (``def f(a, b=1) -> int:``, ``class C(Base):``); shared so
    both Python backends give the same text (the core cuts long signatures)."""
    if isinstance(node, _FunctionNode):
        prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
        returns = f" -> {unparse(node.returns)}" if node.returns is not None else ""
        sig = f"{prefix} {node.name}({unparse(node.args)}){returns}:"
    elif isinstance(node, ast.ClassDef):
        bases = [unparse(b) for b in node.bases] + [unparse(k) for k in node.keywords]
        sig = f"class {node.name}({', '.join(bases)}):" if bases else f"class {node.name}:"
    else:
        sig = unparse(node).split("\n", 1)[0]
    return sig


def variable_kind(name: str) -> str:
    letters = [c for c in name if c.isalpha()]
    if letters and all(c.isupper() for c in letters) and len(name) > 1:
        return SymbolKind.CONSTANT
    return SymbolKind.VARIABLE


#: Per node type, the fields that can hold child nodes (``ctx``, a Load/Store marker under
#: every name, carries nothing for us).


def parse_python(data: bytes, filename: str, type_comments: bool = False) -> ast.Module:
    """``ast.parse``, tried a second time when it fails with CPython's "AST constructor
    recursion depth mismatch" (a SystemError of Python 3.11 before 3.11.8: the constructor's
    recursion counter is shared by every thread of the interpreter, so a parse elsewhere at the
    same moment can fail a valid one; the counter starts afresh with each parse)."""
    try:
        return ast.parse(data, filename=filename, type_comments=type_comments)
    except SystemError as exc:
        if "recursion depth mismatch" not in str(exc):
            raise
        log.debug("%s: parse retried after %s", filename, exc)
        return ast.parse(data, filename=filename, type_comments=type_comments)
