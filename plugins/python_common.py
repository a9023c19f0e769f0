"""Pieces shared by the Python backends: what they claim and how Python imports resolve."""

from __future__ import annotations

from collections.abc import Sequence

from repomapper.index import RepoIndex
from repomapper.model import Import

PYTHON_EXTENSIONS = (".py", ".pyi", ".pyw")


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
        base = index.resolve_python_relative(imp.file_path, imp.source, imp.level)
        if base:
            found.add(base)
        for name in imp.names:
            sub = ".".join(p for p in (imp.source, name) if p)
            target = index.resolve_python_relative(imp.file_path, sub, imp.level)
            if target:
                found.add(target)
        return sorted(found)
    found.update(index.resolve_python_module(imp.source))
    for name in imp.names:
        if name != "*":
            found.update(index.resolve_python_module(f"{imp.source}.{name}"))
    found.discard(imp.file_path)
    return sorted(found)
