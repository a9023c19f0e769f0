"""Python's import rules over the mapped files: dotted module names, relative imports and
qualified names (``pkg.mod.Class.method``) to the repository files that define them.

A file is importable under a name only the way Python would import it: by its path from an
**import root**, a directory that would be on ``sys.path`` when the repository's code runs:

* the repository root (top-level packages and modules, and ``src.pkg`` through a namespace);
* a directory that is not a package and is inside none, but holds a package (``src/`` of a
  ``src`` layout, ``lib/``, ``python/``, a test folder of sample packages);
* for a file that is not in a package (a script, a test module in a plain folder), its own
  directory, as ``python script.py`` and pytest put it on ``sys.path``.

Every folder on the way may be a regular package (``__init__.py``) or a namespace package (none);
a namespace portion never shadows a standard-library module (Python takes the regular module
first). So ``import json`` in ``django/core/serializers/python.py`` is the standard library, not
``django/core/serializers/json.py``, which is importable only as ``django.core.serializers.json``.
Relative imports resolve from the importing file's package.

The core's :class:`~repomapper.index.RepoIndex` knows nothing of Python; the module table is
built once per index through its neutral :meth:`~repomapper.index.RepoIndex.derived` store.
"""

from __future__ import annotations

import posixpath
import sys
from collections import defaultdict
from dataclasses import dataclass

from repomapper.index import RepoIndex

PYTHON_MODULE_SUFFIXES = (".py", ".pyi")
#: Part of the Python backends' versions (the tag cache key): a change to these rules changes
#: the resolved imports the cache keeps.
RESOLVER_VERSION = "roots-1"
_TABLE_KEY = ("python", "modules")
_INIT_NAMES = ("__init__.py", "__init__.pyi")
_STDLIB = frozenset(sys.stdlib_module_names)


@dataclass(frozen=True, slots=True)
class ModuleTable:
    """Dotted name -> the files it names (shortest paths first), and what per-importer lookups
    need: the packages (directories with an ``__init__``) and the import roots."""

    names: dict[str, tuple[str, ...]]
    packages: frozenset[str]
    roots: tuple[str, ...]


def module_table(index: RepoIndex) -> ModuleTable:
    """The repository's importable modules; built once per index."""
    return index.derived(_TABLE_KEY, _build_table)


def _module_parts(path: str) -> list[str] | None:
    """``a/b/c.py`` -> ``[a, b, c]``, ``a/b/__init__.py`` -> ``[a, b]``; None for a file no
    import statement can name (``my-script.py``, ``a.b.py``)."""
    parts = path.rsplit(".", 1)[0].split("/")
    if parts[-1] == "__init__":
        parts.pop()
    return parts if parts and all(p.isidentifier() for p in parts) else None


def _build_table(index: RepoIndex) -> ModuleTable:
    files = sorted(f for f in index.files if f.endswith(PYTHON_MODULE_SUFFIXES))
    packages = frozenset(
        posixpath.dirname(f) for f in files if posixpath.basename(f) in _INIT_NAMES
    )
    packages = packages - {""}  # an __init__.py at the root makes no importable name of it

    def in_package(d: str) -> bool:
        while d:
            if d in packages:
                return True
            d = posixpath.dirname(d)
        return False

    # roots besides the repository's own: outside every package, parents of a top package
    roots = {""}
    for p in packages:
        parent = posixpath.dirname(p)
        if parent and not in_package(parent):
            roots.add(parent)
    ordered_roots = tuple(sorted(roots))

    modules: dict[str, list[str]] = defaultdict(list)
    for f in files:
        d = posixpath.dirname(f)
        under = [""]
        while d:
            if d in roots:
                under.append(d)
            d = posixpath.dirname(d)
        for root in under:
            parts = _module_parts(f[len(root) + 1 :] if root else f)
            if not parts:
                continue
            top = f"{root}/{parts[0]}" if root else parts[0]
            if len(parts) > 1 and top not in packages and parts[0] in _STDLIB:
                continue  # a namespace portion: the standard library's module comes first
            modules[".".join(parts)].append(f)
    names = {m: tuple(sorted(fs, key=lambda f: (f.count("/"), f))) for m, fs in modules.items()}
    return ModuleTable(names, packages, ordered_roots)


def resolve_module(index: RepoIndex, dotted: str, importer: str | None = None) -> tuple[str, ...]:
    """Files a dotted module name refers to, from the import roots (and from the importer's
    own directory when it is not in a package); the shortest paths win ties."""
    table = module_table(index)
    found = table.names.get(dotted)
    if found:
        best = found[0].count("/")
        return tuple(f for f in found if f.count("/") == best)
    if importer is not None:
        home = posixpath.dirname(importer)
        if home and home not in table.packages and home not in table.roots:
            return _module_files(index, home, dotted.split("."))
    return ()


def _module_files(index: RepoIndex, base: str, parts: list[str]) -> tuple[str, ...]:
    """The module file(s) of ``parts`` below ``base``: ``x.py``, ``x.pyi``, or the package's
    ``__init__``."""
    if not all(parts):
        return ()
    target = posixpath.join(base, *parts) if base else "/".join(parts)
    found = tuple(f"{target}{s}" for s in PYTHON_MODULE_SUFFIXES if f"{target}{s}" in index.files)
    if found:
        return found
    return tuple(f"{target}/{n}" for n in _INIT_NAMES if f"{target}/{n}" in index.files)


def resolve_relative(index: RepoIndex, importer: str, source: str, level: int) -> str | None:
    """Resolve ``from ..pkg import x`` written in ``importer``; ``None`` if not in the repo or
    if the dots climb above the repository root."""
    parts = posixpath.dirname(importer).split("/") if "/" in importer else []
    if level - 1 > len(parts):
        return None
    base = "/".join(parts[: len(parts) - (level - 1)])
    found = _module_files(index, base, source.split(".")) if source else ()
    if not source:
        found = tuple(f"{base}/{n}" if base else n for n in _INIT_NAMES)
        found = tuple(f for f in found if f in index.files)
    return found[0] if found else None


def resolve_qualified(
    index: RepoIndex, target: str, importer: str | None = None
) -> tuple[str, ...]:
    """Files that define a qualified name such as ``pkg.mod.Class.method``: the module named by
    its longest prefix that is one (the whole name may itself be a module)."""
    parts = target.split(".")
    for cut in range(len(parts), 0, -1):
        found = resolve_module(index, ".".join(parts[:cut]), importer)
        if found:
            return found
    return ()
