"""Digests of repomapper's own files, for the keys of what it persists.

A memoised map, a stored ranking state, a cached extraction row or an indexed posting is only
as valid as the code that made it. Each of their keys includes the digest of the files of the
modules that make it (:data:`MADE_BY`), so a new release or an edited module never replays an
old result; a hand-bumped version number could be forgotten.

The files are the installed ones, found where Python imports the package from (an editable
install reads the working tree): every file of the package's directories (modules and the data
they read, such as the tree-sitter queries), not compiled bytecode. They are read and hashed
once per process, when a key first needs them.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .registry import PluginSet

log = logging.getLogger(__name__)

PACKAGE = "repomapper"
#: subpackages installed from a directory of their own (setuptools' package-dir), walked apart
#: from the package's; False: left out, it makes nothing that is persisted (the conformance
#: suite that plugin authors run)
SUBPACKAGES: dict[str, bool] = {"plugins": True, "conformance": False}

#: What each persisted thing is made by: names of modules, or of packages standing for every
#: file in them, under ``repomapper``. Each list is closed under import (the test of this
#: module checks it), so a module that a producer starts to import is keyed with it.
MADE_BY: dict[str, tuple[str, ...]] = {
    # a memoised map or graph page: everything from discovery
    # to rendering, the bundled backends included
    "map": (PACKAGE,),
    # a tag cache row, between a backend's answer and the stored row (the answering backends'
    # own code is added per route: see backend_modules)
    "extraction": (
        "repomapper.__init__",
        "repomapper.backfill",
        "repomapper.cache",
        "repomapper.cachedir",
        "repomapper.cachetag",
        "repomapper.codedigest",
        "repomapper.extract",
        "repomapper.fileentry",
        "repomapper.gitcmd",
        "repomapper.gitindex",
        "repomapper.hookcall",
        "repomapper.hookspecs",
        "repomapper.ignores",
        "repomapper.isolation",
        "repomapper.madeonread",
        "repomapper.model",
        "repomapper.namecounts",
        "repomapper.registry",
        "repomapper.rowtext",
        "repomapper.stringarrays",
    ),
    # the stored ranking state (repomapper.snapshot): the symbol table, the graph, the resolved
    # imports and the rankings (the backends that resolve imports are in each file's content
    # key, which the state stores)
    "state": (
        "repomapper.__init__",
        "repomapper.backfill",
        "repomapper.cache",
        "repomapper.cachedir",
        "repomapper.cachetag",
        "repomapper.codedigest",
        "repomapper.definitions",
        "repomapper.discover",
        "repomapper.extract",
        "repomapper.fileentry",
        "repomapper.gitcmd",
        "repomapper.gitindex",
        "repomapper.graph",
        "repomapper.graphstate",
        "repomapper.hookcall",
        "repomapper.hookspecs",
        "repomapper.ignores",
        "repomapper.importmemo",
        "repomapper.importrows",
        "repomapper.index",
        "repomapper.isolation",
        "repomapper.joinedstrings",
        "repomapper.layered",
        "repomapper.madeonread",
        "repomapper.mappedpages",
        "repomapper.model",
        "repomapper.namecounts",
        "repomapper.rank",
        "repomapper.registry",
        "repomapper.relevance.roles",
        "repomapper.rowtext",
        "repomapper.snapshot",
        "repomapper.state.graphs",
        "repomapper.stringarrays",
        "repomapper.summaryview",
        "repomapper.tablearrays",
    ),
    # a file's postings in the lexical index (its symbols come keyed by extraction already)
    "lexical": (
        "repomapper.__init__",
        "repomapper.cache",
        "repomapper.cachedir",
        "repomapper.cachetag",
        "repomapper.codedigest",
        "repomapper.hookspecs",
        "repomapper.madeonread",
        "repomapper.model",
        "repomapper.namecounts",
        "repomapper.relevance.lexical",
        "repomapper.relevance.terms",
        "repomapper.rowtext",
        "repomapper.stringarrays",
    ),
}

#: The code of each bundled backend's package: its own and what it imports of the others.
BUNDLED_BACKENDS: dict[str, tuple[str, ...]] = {
    "repomapper.plugins.python": (
        "repomapper.index",
        "repomapper.plugins.__init__",
        "repomapper.plugins.python",
    ),
    "repomapper.plugins.treesitter": (
        "repomapper.index",
        "repomapper.plugins.__init__",
        "repomapper.plugins.treesitter",
    ),
    "repomapper.plugins.ctags": (
        "repomapper.index",
        "repomapper.plugins.__init__",
        "repomapper.plugins.ctags",
        "repomapper.plugins.python",
        # the tree-sitter backend's import-resolution rules, which ctags applies (not its
        # queries or parsing: a changed query does not change what ctags extracts)
        *(
            f"repomapper.plugins.treesitter.{m}"
            for m in (
                "resolve",
                "configfiles",
                "languages",
                "includes",
                "namespaces",
                "declared",
                "loadpaths",
                "composer",
                "workspaces",
                "cargo",
            )
        ),
    ),
    "repomapper.plugins.templates": (
        "repomapper.index",
        "repomapper.plugins.__init__",
        "repomapper.plugins.templates",
    ),
}


def _directory(name: str) -> Path | None:
    """Where Python imports package ``name`` from (without importing it), or None."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    return Path(locations[0]) if locations else None


def _walk(directory: Path, prefix: str, skip: frozenset[str]) -> Iterable[tuple[str, Path]]:
    """(the file's path under the package, with ``/``; the file) for every file kept."""
    for top, dirs, files in os.walk(directory):
        rel = Path(top).relative_to(directory).as_posix()
        here = prefix + ("" if rel == "." else rel + "/")
        dirs[:] = [
            d for d in dirs if d != "__pycache__" and not d.startswith(".") and here + d not in skip
        ]
        for f in files:
            if not f.startswith(".") and not f.endswith((".pyc", ".pyo")):
                yield here + f, Path(top, f)


@functools.cache
def file_digests() -> dict[str, str]:
    """The package's files (path under the package, ``/``-separated -> BLAKE2b of the bytes),
    read once per process."""
    found: dict[str, Path] = {}
    root = _directory(PACKAGE)
    skip = frozenset(SUBPACKAGES)
    if root is not None:
        found.update(_walk(root, "", skip))
    for sub, kept in SUBPACKAGES.items():
        where = _directory(f"{PACKAGE}.{sub}") if kept else None
        if where is not None:
            found.update(_walk(where, sub + "/", frozenset()))
    out: dict[str, str] = {}
    for rel in sorted(found):
        try:
            out[rel] = hashlib.blake2b(found[rel].read_bytes(), digest_size=16).hexdigest()
        except OSError as exc:  # keyed as unreadable: the key still differs from a readable one
            out[rel] = f"unreadable:{type(exc).__name__}"
    if not out:
        log.warning("the source of %s was not found: its caches are keyed by version", PACKAGE)
    return out


def _selected(names: Iterable[str]) -> list[str]:
    """The package's files that the module and package ``names`` stand for."""
    files = file_digests()
    modules, packages = set(), []
    for name in names:
        if name != PACKAGE and not name.startswith(PACKAGE + "."):
            raise ValueError(f"{name} is not in {PACKAGE}")
        rel = name[len(PACKAGE) + 1 :].replace(".", "/")
        modules.add(rel + ".py")
        packages.append(rel + "/" if rel else "")
    prefixes = tuple(packages)
    chosen = [f for f in files if f in modules or f.startswith(prefixes)]
    if files and not chosen:
        raise ValueError(f"no file of {PACKAGE} is named by {sorted(names)}")
    return chosen


@functools.cache
def code_digest(names: tuple[str, ...]) -> str:
    """A digest of the files of the modules and packages ``names`` (16 hex digits; the
    package's version when its files cannot be found)."""
    from . import __version__

    files = file_digests()
    h = hashlib.blake2b(digest_size=8)
    h.update(f"{PACKAGE} {__version__}\0".encode())
    for rel in _selected(names):
        h.update(f"{rel}\0{files[rel]}\0".encode("utf-8", "surrogateescape"))
    return h.hexdigest()


def made_by(what: str) -> str:
    """The digest of the code that makes ``what`` (a key of :data:`MADE_BY`)."""
    return code_digest(MADE_BY[what])


def extraction_code(plugins: PluginSet, rel_path: str) -> str:
    """The digest of the code that makes the tag cache's row of ``rel_path``: the extraction
    path and the bundled backends that would answer for it."""
    names = set(MADE_BY["extraction"])
    for name in plugins.candidates(rel_path):
        names.update(backend_modules(plugins.pm.get_plugin(name)))
    return code_digest(tuple(sorted(names)))


def backend_modules(plugin: object) -> tuple[str, ...]:
    """The bundled code that answers for a registered plugin object, or () for a plugin from
    elsewhere (its own version string keys what it answers)."""
    module = plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
    for package, modules in BUNDLED_BACKENDS.items():
        if module == package or module.startswith(package + "."):
            return modules
    if module.startswith(PACKAGE + ".plugins."):  # a bundled backend not listed above
        return (PACKAGE + ".plugins",)
    return ()
