"""JavaScript/TypeScript packages of the repository itself (a monorepo's workspaces), imported by
name: ``import { x } from "@scope/core"`` from ``packages/app`` means the file that the
``package.json`` named ``@scope/core`` exports; ``import x from "#config"`` means the target of
``#config`` in the ``imports`` map of the importer's nearest ``package.json``.

The entry is read as Node and TypeScript read it: ``exports`` (a string, an object of
conditions, or an object of subpaths with ``"."`` and ``"./sub/*"`` patterns; arrays as
fallbacks), then ``source``, ``module``, ``main``, ``types``/``typings``, then ``index``. A target
that points at build output not in the repository (``./lib/index.js``, ``./dist/index.d.ts``) is
looked for in the package's sources: the same path under ``src/``, with TypeScript extensions.

``package.json`` files are read (never executed), once per index, the ones under
``node_modules`` never.
"""

from __future__ import annotations

import json
import logging
import posixpath
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from repomapper.index import RepoIndex

from .configfiles import read_config

log = logging.getLogger(__name__)

#: Conditions in the order an entry is looked for: the source first, then what a bundler or
#: Node would load, then the declarations (which map back to the source).
CONDITIONS = ("source", "import", "module", "default", "require", "node", "browser", "types")
#: Folders of build output whose files are compiled from ``src/``.
BUILD_DIRS = frozenset({"dist", "lib", "build", "out", "esm", "cjs", "es", "module", "types"})
_DECLARATION = (".d.ts", ".d.mts", ".d.cts")


@dataclass(frozen=True, slots=True)
class Package:
    """A workspace package: its folder (repository-relative) and the fields that locate files."""

    name: str  # "" for a package.json without one
    directory: str
    exports: Any
    fields: tuple[tuple[str, str], ...]  # (field, target) for source, module, main, types
    imports: Any = None  # the "imports" map of ``#name`` specifiers


@dataclass(frozen=True, slots=True)
class Packages:
    """The repository's ``package.json`` files: by package name (the shallowest one when
    fixtures repeat a name) and by folder."""

    by_name: dict[str, Package]
    by_dir: dict[str, Package]


def workspace_packages(index: RepoIndex) -> dict[str, Package]:
    """Package name -> the package, for every ``package.json`` with a name."""
    return _packages(index).by_name


def _packages(index: RepoIndex) -> Packages:
    return index.derived(("treesitter", "workspace_packages"), _read_packages)


def _read_packages(index: RepoIndex) -> Packages:
    by_name: dict[str, Package] = {}
    by_dir: dict[str, Package] = {}
    manifests = sorted(
        (f for f in index.files if posixpath.basename(f) == "package.json"),
        key=lambda f: (f.count("/"), f),
    )
    for manifest in manifests:
        if "node_modules" in manifest.split("/"):
            continue
        data = _read_manifest(index, manifest)
        if data is None:
            continue
        raw_name = data.get("name")
        name = raw_name if isinstance(raw_name, str) else ""
        fields = tuple(
            (key, data[key])
            for key in ("source", "module", "main", "types", "typings")
            if isinstance(data.get(key), str)
        )
        directory = posixpath.dirname(manifest)
        package = Package(name, directory, data.get("exports"), fields, data.get("imports"))
        by_dir[directory] = package
        if name and name not in by_name:
            by_name[name] = package
    return Packages(by_name, by_dir)


def resolve_private_import(
    index: RepoIndex, importer: str, spec: str, probe: Callable[[str], str | None]
) -> str | None:
    """A ``#name`` specifier through the ``imports`` map of the importer's nearest
    ``package.json`` (Node's subpath imports), or ``None``."""
    by_dir = _packages(index).by_dir
    d: str | None = posixpath.dirname(importer)
    while d is not None and d not in by_dir:
        d = posixpath.dirname(d) if d else None
    if d is None:
        return None
    package = by_dir[d]
    for target in _export_targets(package.imports, spec, "#"):
        if target.startswith("."):
            hit = _probe_target(package.directory, target, probe)
            if hit is not None:
                return hit
    return None


def _read_manifest(index: RepoIndex, rel_path: str) -> dict[str, Any] | None:
    # a broken manifest (often a deliberate test fixture) names no package: worth a line in
    # the debug log, not a warning on every run
    return read_config(index.root, rel_path, json.loads, quiet=True)


def split_specifier(spec: str) -> tuple[str, str]:
    """``@scope/pkg/a/b`` -> (``@scope/pkg``, ``a/b``); ``pkg`` -> (``pkg``, ``""``)."""
    parts = spec.split("/")
    cut = 2 if spec.startswith("@") else 1
    return "/".join(parts[:cut]), "/".join(parts[cut:])


def resolve_package(index: RepoIndex, spec: str, probe: Callable[[str], str | None]) -> str | None:
    """The repository file a bare specifier names through a workspace package, or ``None``.
    ``probe(path)`` looks a root-relative path up with the language's extensions and ``index``
    files."""
    name, subpath = split_specifier(spec)
    package = workspace_packages(index).get(name)
    if package is None:
        return None
    key = f"./{subpath}" if subpath else "."
    for target in _export_targets(package.exports, key):
        hit = _probe_target(package.directory, target, probe)
        if hit is not None:
            return hit
    if subpath:
        tries = [subpath, f"src/{subpath}"]
    else:
        tries = [t for _, t in package.fields] + ["src/index", "index"]
    for target in tries:
        hit = _probe_target(package.directory, target, probe)
        if hit is not None:
            return hit
    return None


def _export_targets(exports: Any, key: str, marker: str = ".") -> Iterator[str]:
    """The targets ``exports`` gives for subpath ``key`` (``"."`` or ``"./x"``; ``"#x"`` in an
    ``imports`` map, whose keys start with ``marker`` ``#``), best first."""
    if exports is None:
        return
    is_map = isinstance(exports, dict) and any(k.startswith(marker) for k in exports)
    if not is_map:  # a string, an array or an object of conditions: the "." entry
        if key == "." and marker == ".":
            yield from _leaves(exports)
        return
    if key in exports:
        yield from _leaves(exports[key])
        return
    # patterns: the longest prefix before "*" wins, as in Node
    matches: list[tuple[int, str, Any]] = []
    for pattern, value in exports.items():
        if "*" not in pattern:
            continue
        prefix, suffix = pattern.split("*", 1)
        if key.startswith(prefix) and key.endswith(suffix) and len(key) >= len(prefix + suffix):
            matches.append((len(prefix), key[len(prefix) : len(key) - len(suffix)], value))
    for _, star, value in sorted(matches, key=lambda m: -m[0]):
        for target in _leaves(value):
            yield target.replace("*", star)


def _leaves(value: Any, depth: int = 0) -> Iterator[str]:
    """The strings of a conditions value in :data:`CONDITIONS` order (others after, as written)."""
    if depth > 8:
        return
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item, depth + 1)
    elif isinstance(value, dict):
        order = {c: i for i, c in enumerate(CONDITIONS)}
        keys = sorted(value, key=lambda k: (order.get(k, len(order)), list(value).index(k)))
        for k in keys:
            yield from _leaves(value[k], depth + 1)


def _probe_target(directory: str, target: str, probe: Callable[[str], str | None]) -> str | None:
    """``target`` (``./lib/index.js``) inside the package folder, else its source under ``src/``."""
    if not isinstance(target, str) or not target or target.startswith(("/", "#")):
        return None
    rel = posixpath.normpath(posixpath.join(directory, target) if directory else target)
    if rel.startswith("..") or posixpath.isabs(rel):
        return None
    hit = probe(rel)
    if hit is not None:
        return hit
    inner = posixpath.normpath(target).split("/")
    stem = "/".join(inner)
    for ext in _DECLARATION:
        if stem.endswith(ext):
            stem = stem[: -len(ext)]
            break
    inner = stem.split("/")
    if inner and inner[0] in BUILD_DIRS:
        inner = ["src", *inner[1:]]
    elif inner and inner[0] != "src":
        inner = ["src", *inner]
    else:
        return None
    source = posixpath.join(directory, *inner) if directory else posixpath.join(*inner)
    if source.startswith(".."):
        return None
    return probe(source)
