"""Python's import rules over the mapped files: dotted module names, relative imports and
qualified names (``pkg.mod.Class.method``) to the repository files that define them.

The core's :class:`~repomapper.index.RepoIndex` knows nothing of Python; the module table is
built once per index through its neutral :meth:`~repomapper.index.RepoIndex.derived` store.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict

from repomapper.index import RepoIndex

PYTHON_MODULE_SUFFIXES = (".py", ".pyi")
_TABLE_KEY = ("python", "modules")


def module_table(index: RepoIndex) -> dict[str, tuple[str, ...]]:
    """Dotted module name -> the files it names, for every way each file could be imported.

    ``src/pkg/mod.py`` is importable as ``src.pkg.mod``, ``pkg.mod`` and ``mod``; of the files a
    name could mean, those with the shortest path are kept. Built once per index.
    """
    return index.derived(_TABLE_KEY, _build_table)


def _build_table(index: RepoIndex) -> dict[str, tuple[str, ...]]:
    modules: dict[str, list[str]] = defaultdict(list)
    for f in index.files:
        if not f.endswith(PYTHON_MODULE_SUFFIXES):
            continue
        parts = f.rsplit(".", 1)[0].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        for i in range(len(parts)):
            modules[".".join(parts[i:])].append(f)
    table: dict[str, tuple[str, ...]] = {}
    for m, fs in modules.items():
        if m:
            best = min(f.count("/") for f in fs)  # the shortest paths win ties
            table[m] = tuple(sorted(f for f in fs if f.count("/") == best))
    return table


def resolve_module(index: RepoIndex, dotted: str) -> tuple[str, ...]:
    """Files a dotted module name may refer to; the shortest paths win ties."""
    return module_table(index).get(dotted, ())


def resolve_relative(index: RepoIndex, importer: str, source: str, level: int) -> str | None:
    """Resolve ``from ..pkg import x`` written in ``importer``; ``None`` if not in the repo."""
    base = posixpath.dirname(importer)
    for _ in range(level - 1):
        base = posixpath.dirname(base)
    target = posixpath.join(base, *source.split(".")) if source else base
    target = target.strip("/")
    for candidate in (f"{target}.py", f"{target}.pyi", f"{target}/__init__.py"):
        if candidate in index.files:
            return candidate
    return None


def resolve_qualified(index: RepoIndex, target: str) -> tuple[str, ...]:
    """Files that define a qualified name such as ``pkg.mod.Class.method``: the module named by
    its longest prefix that is one (the whole name may itself be a module)."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        found = resolve_module(index, ".".join(parts[:cut]))
        if found:
            return found
    return ()
