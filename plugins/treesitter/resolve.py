"""Resolving imports to repository files, per language family.

* TypeScript/JavaScript: relative specifiers with extension and ``index`` probing (a ``.js``
  specifier may name a ``.ts`` file, as in TypeScript ESM code); bare specifiers through the
  nearest ``tsconfig.json``/``jsconfig.json`` ``baseUrl`` and ``paths``, then the repository's
  own packages by their ``package.json`` name (:mod:`.workspaces`); other packages resolve to
  nothing.
* Go: the import path minus the module path of the nearest ``go.mod``, as a package directory
  (all its non-test ``.go`` files); ``vendor/`` too.
* C/C++ ``#include``: the includer's folder and the repository's include roots
  (:mod:`.includes`).
* Rust: ``mod x;``, ``use crate::/self::/super::``, and the workspace's other crates by
  name (:mod:`.cargo`).
* Java and Kotlin by declared packages, C# ``using`` by declared namespaces, with a bounded
  fan-out (:mod:`.namespaces`).
* Ruby ``require_relative`` by path, ``require`` on the load path (:mod:`.loadpaths`).
* PHP ``require``/``include`` by path, ``use`` through composer's PSR-4/PSR-0 maps
  (:mod:`.composer`), or the namespace as a folder path where the repository has no map.

Configuration files are read, never executed. Per-index lookups are cached on the index object.
"""

from __future__ import annotations

import json
import logging
import posixpath
import threading
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repomapper.index import RepoIndex
from repomapper.model import Import

from .configfiles import MAX_CONFIG_BYTES, read_config
from .languages import spec_for_path

log = logging.getLogger(__name__)

TS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
#: A specifier written with a JavaScript extension may name the TypeScript source.
_JS_TO_TS = {".js": (".ts", ".tsx"), ".jsx": (".tsx",), ".mjs": (".mts",), ".cjs": (".cts",)}
TS_CONFIG_NAMES = ("tsconfig.json", "jsconfig.json")

_MAX_EXTENDS = 5


@dataclass(frozen=True, slots=True)
class TsPaths:
    """The module-resolution part of a tsconfig, with directories relative to the repo root."""

    base_url: str | None  # None when not set (or outside the repository)
    paths_base: str | None
    paths: tuple[tuple[str, tuple[str, ...]], ...]


class _IndexCache:
    """Lookups derived from one :class:`RepoIndex` (which is immutable)."""

    def __init__(self, index: RepoIndex):
        self.index = index
        self.lock = threading.Lock()
        self.go_modules: dict[str, tuple[str, str] | None] = {}
        self.tsconfigs: dict[str, TsPaths | None] = {}
        self._by_basename: dict[str, tuple[str, ...]] | None = None
        self._dirs: tuple[str, ...] | None = None

    @property
    def by_basename(self) -> dict[str, tuple[str, ...]]:
        if self._by_basename is None:
            names: dict[str, list[str]] = defaultdict(list)
            for f in self.index.files:
                names[posixpath.basename(f)].append(f)
            self._by_basename = {k: tuple(sorted(v)) for k, v in names.items()}
        return self._by_basename

    @property
    def dirs(self) -> tuple[str, ...]:
        if self._dirs is None:
            self._dirs = tuple(sorted(self.index.by_dir))
        return self._dirs

    def files_ending_with(self, suffix: str) -> list[str]:
        """Files whose path is ``suffix`` or ends with ``/suffix``."""
        suffix = suffix.strip("/")
        return [
            f
            for f in self.by_basename.get(posixpath.basename(suffix), ())
            if f == suffix or f.endswith("/" + suffix)
        ]

    def exists(self, rel: str) -> bool:
        if rel in self.index.files:
            return True
        try:
            return (self.index.root / rel).is_file()
        except OSError:
            return False


_caches: weakref.WeakKeyDictionary[RepoIndex, _IndexCache] = weakref.WeakKeyDictionary()
_caches_lock = threading.Lock()


def _cache_for(index: RepoIndex) -> _IndexCache:
    with _caches_lock:
        try:
            cache = _caches.get(index)
            if cache is None:
                cache = _caches[index] = _IndexCache(index)
        except TypeError:  # an index type without weak references: correct, just uncached
            cache = _IndexCache(index)
        return cache


def resolve(imp: Import, index: RepoIndex) -> list[str] | None:
    """Repository files ``imp`` refers to; ``None`` if the importer is not a language we serve."""
    spec = spec_for_path(imp.file_path)
    if spec is None:
        return None
    resolver = _RESOLVERS.get(spec.imports)
    if resolver is None:
        return []
    found = set(resolver(imp, index, _cache_for(index)))
    found.discard(imp.file_path)
    return sorted(found)


def resolve_as(family: str, imp: Import, index: RepoIndex) -> list[str] | None:
    """``imp`` resolved with the rules of language family ``family`` (``"c"``, ``"go"``,
    ``"java"``, ...: the ``imports`` names of :data:`.languages.SPECS`), whichever backend
    extracted it; ``None`` for a family without rules here."""
    resolver = _RESOLVERS.get(family)
    if resolver is None:
        return None
    found = set(resolver(imp, index, _cache_for(index)))
    found.discard(imp.file_path)
    return sorted(found)


def _closest(importer: str, candidates: Iterable[str]) -> list[str]:
    """The candidates sharing the longest directory prefix with ``importer`` (ties: all)."""
    parts = posixpath.dirname(importer).split("/")
    scored: list[tuple[int, str]] = []
    for c in candidates:
        cparts = posixpath.dirname(c).split("/")
        common = 0
        for a, b in zip(parts, cparts, strict=False):
            if a != b:
                break
            common += 1
        scored.append((common, c))
    if not scored:
        return []
    best = max(s for s, _ in scored)
    return sorted(c for s, c in scored if s == best)


def _inside(path: str) -> str | None:
    """``path`` normalised, or ``None`` if it leaves the repository."""
    norm = posixpath.normpath(path) if path else ""
    if norm == ".":
        return ""
    if norm.startswith("..") or posixpath.isabs(norm):
        return None
    return norm


# -- TypeScript / JavaScript ------------------------------------------------------------------


def probe_ts(index: RepoIndex, importer: str, spec: str) -> str | None:
    """``spec`` relative to ``importer``'s directory, as TypeScript and bundlers look it up."""
    hit = index.resolve_relative_path(importer, spec, TS_EXTENSIONS, ("index",))
    if hit is not None:
        return hit
    stem, ext = posixpath.splitext(spec)
    for alt in _JS_TO_TS.get(ext.lower(), ()):
        hit = index.resolve_relative_path(importer, stem + alt, (), ())
        if hit is not None:
            return hit
    return None


def _resolve_ecma(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    spec = imp.source
    if spec.startswith("."):
        hit = probe_ts(index, imp.file_path, spec)
        return [hit] if hit else []
    if spec.startswith("/") or ":" in spec:  # absolute paths, node:fs, URLs
        return []
    config = _tsconfig_for(cache, posixpath.dirname(imp.file_path))
    if config is not None:
        for target in ts_path_candidates(config, spec):
            hit = probe_ts(index, "_", target)  # "_" sits in the root: target is root-relative
            if hit is not None:
                return [hit]
    from .workspaces import resolve_package, resolve_private_import

    def probe(target: str) -> str | None:
        return probe_ts(index, "_", target)

    if spec.startswith("#"):
        hit = resolve_private_import(index, imp.file_path, spec, probe)
    else:
        hit = resolve_package(index, spec, probe)
    return [hit] if hit is not None else []


def ts_path_candidates(config: TsPaths, spec: str) -> list[str]:
    """Root-relative paths to try for a bare specifier, in TypeScript's order: the ``paths``
    pattern with the longest prefix first, then ``baseUrl``."""
    matches: list[tuple[int, str, tuple[str, ...]]] = []
    for pattern, targets in config.paths:
        if "*" in pattern:
            prefix, suffix = pattern.split("*", 1)
            if (
                spec.startswith(prefix)
                and spec.endswith(suffix)
                and len(spec) >= len(prefix) + len(suffix)
            ):
                star = spec[len(prefix) : len(spec) - len(suffix)]
                matches.append((len(prefix), star, targets))
        elif pattern == spec:
            matches.append((len(pattern) + 1_000_000, "", targets))
    candidates: list[str] = []
    if config.paths_base is not None:
        for _, star, targets in sorted(matches, key=lambda m: -m[0]):
            for target in targets:
                joined = _inside(posixpath.join(config.paths_base, target.replace("*", star)))
                if joined:
                    candidates.append(joined)
    if config.base_url is not None:
        joined = _inside(posixpath.join(config.base_url, spec))
        if joined:
            candidates.append(joined)
    return candidates


def _tsconfig_for(cache: _IndexCache, directory: str) -> TsPaths | None:
    visited: list[str] = []
    d: str | None = directory
    found: TsPaths | None = None
    with cache.lock:
        while d is not None:
            if d in cache.tsconfigs:
                found = cache.tsconfigs[d]
                break
            visited.append(d)
            names = (posixpath.join(d, n) if d else n for n in TS_CONFIG_NAMES)
            config_path = next((p for p in names if cache.exists(p)), None)
            if config_path is not None:
                found = load_tsconfig(cache.index.root, config_path)
                break
            d = posixpath.dirname(d) if d else None
        for v in visited:
            cache.tsconfigs[v] = found
    return found


def load_tsconfig(root: Path, rel_path: str) -> TsPaths | None:
    """Read ``baseUrl`` and ``paths`` from a tsconfig (following relative ``extends``)."""
    base_url: str | None = None
    paths: dict[str, list[str]] | None = None
    paths_dir: str | None = None
    base_defined = False
    current: str | None = rel_path
    seen: set[str] = set()
    while current is not None and current not in seen and len(seen) < _MAX_EXTENDS:
        seen.add(current)
        data = _read_jsonc(root, current)
        if data is None:
            break
        options = data.get("compilerOptions")
        config_dir = posixpath.dirname(current)
        if isinstance(options, dict):
            if not base_defined and isinstance(options.get("baseUrl"), str):
                base_url = _inside(posixpath.join(config_dir, options["baseUrl"]))
                base_defined = True
            if paths is None and isinstance(options.get("paths"), dict):
                paths = {
                    k: [t for t in v if isinstance(t, str)]
                    for k, v in options["paths"].items()
                    if isinstance(v, list)
                }
                paths_dir = config_dir
        parent = data.get("extends")
        current = None
        if isinstance(parent, str) and parent.startswith("."):
            target = _inside(posixpath.join(config_dir, parent))
            if target is not None:
                current = target if target.endswith(".json") else f"{target}.json"
    if not base_defined and paths is None:
        return None
    paths_base = base_url if base_defined else paths_dir
    return TsPaths(
        base_url if base_defined else None,
        paths_base,
        tuple((k, tuple(v)) for k, v in sorted((paths or {}).items())),
    )


def _read_jsonc(root: Path, rel_path: str) -> dict[str, Any] | None:
    return read_config(root, rel_path, lambda text: json.loads(strip_jsonc(text)))


def strip_jsonc(text: str) -> str:
    """JSON with comments and trailing commas (tsconfig's dialect) to plain JSON."""
    out: list[str] = []
    i, n = 0, len(text)
    pending_comma: int | None = None  # index in out of a comma that may be trailing
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            pending_comma = None
            i = j + 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
            continue
        if c == ",":
            pending_comma = len(out)
        elif c in "}]" and pending_comma is not None:
            out[pending_comma] = ""
            pending_comma = None
        elif not c.isspace():
            pending_comma = None
        out.append(c)
        i += 1
    return "".join(out)


# -- Go -------------------------------------------------------------------------------------------


def go_package_files(index: RepoIndex, directory: str) -> list[str]:
    return [f for f in index.files_in_dir(directory, (".go",)) if not f.endswith("_test.go")]


def _resolve_go(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    path = imp.source
    if path.startswith("."):
        target = _inside(posixpath.join(posixpath.dirname(imp.file_path), path))
        return go_package_files(index, target) if target is not None else []
    module = _go_module_for(cache, posixpath.dirname(imp.file_path))
    candidates: list[tuple[str, str]] = [module] if module else []
    candidates += sorted(_other_go_modules(cache), key=lambda m: (-len(m[1]), m[0]))
    for module_dir, module_path in candidates:
        if path == module_path:
            return go_package_files(index, module_dir)
        if path.startswith(module_path + "/"):
            rest = path[len(module_path) + 1 :]
            target = _inside(posixpath.join(module_dir, rest) if module_dir else rest)
            return go_package_files(index, target) if target is not None else []
    if module is not None:
        vendored = _inside(posixpath.join(module[0], "vendor", path))
        if vendored is not None:
            return go_package_files(index, vendored)
    return []


def _other_go_modules(cache: _IndexCache) -> list[tuple[str, str]]:
    """Modules of the ``go.mod`` files among the mapped files (multi-module repositories)."""
    found = []
    for gomod in cache.by_basename.get("go.mod", ()):
        module = _go_module_for(cache, posixpath.dirname(gomod))
        if module is not None:
            found.append(module)
    return found


def _go_module_for(cache: _IndexCache, directory: str) -> tuple[str, str] | None:
    """(directory of the nearest go.mod at or above ``directory``, its module path)."""
    visited: list[str] = []
    d: str | None = directory
    found: tuple[str, str] | None = None
    with cache.lock:
        while d is not None:
            if d in cache.go_modules:
                found = cache.go_modules[d]
                break
            visited.append(d)
            gomod = posixpath.join(d, "go.mod") if d else "go.mod"
            if cache.exists(gomod):
                module = read_go_module(cache.index.root / gomod, gomod)
                found = (d, module) if module else None
                break
            d = posixpath.dirname(d) if d else None
        for v in visited:
            cache.go_modules[v] = found
    return found


def read_go_module(path: Path, rel_path: str) -> str | None:
    """The module path declared by a go.mod (``module example.com/m``), or ``None``."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace")
    except OSError as exc:
        log.warning(
            "%s: cannot read: %s",
            rel_path,
            exc,
            extra={"code": "config_unreadable", "path": rel_path},
        )
        return None
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        parts = line.split()
        if len(parts) >= 2 and parts[0] == "module":
            return parts[1].strip('"`') or None
    return None


# -- Rust -----------------------------------------------------------------------------------------

_CRATE_ROOTS = ("lib.rs", "main.rs")


def _rust_module_dir(path: str) -> str:
    """The directory holding the submodules of the module in file ``path``."""
    name = posixpath.basename(path)
    directory = posixpath.dirname(path)
    if name in ("mod.rs", *_CRATE_ROOTS):
        return directory
    return posixpath.join(directory, name[:-3]) if directory else name[:-3]


def _rust_module_files(
    index: RepoIndex, module_dir: str, crate_dir: str | None, crate_root: str | None = None
) -> list[str]:
    if module_dir == crate_dir:
        if crate_root is not None:  # another crate of the workspace: its library root
            return [crate_root]
        names = [posixpath.join(module_dir, r) if module_dir else r for r in _CRATE_ROOTS]
    else:
        names = [f"{module_dir}.rs", posixpath.join(module_dir, "mod.rs")]
    return [n for n in names if n in index.files]


def _rust_crate_dir(index: RepoIndex, path: str) -> str | None:
    d: str | None = posixpath.dirname(path)
    while d is not None:
        if any((posixpath.join(d, r) if d else r) in index.files for r in _CRATE_ROOTS):
            return d
        d = posixpath.dirname(d) if d else None
    return None


def _resolve_rust(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    importer = imp.file_path
    crate_dir = _rust_crate_dir(index, importer)
    crate_root: str | None = None
    segments = imp.source.split("::")
    if imp.is_relative and len(segments) == 1 and segments[0] not in ("crate", "self", "super"):
        # ``mod name;``
        module_dir = _rust_module_dir(importer)
        return _rust_module_files(
            index, posixpath.join(module_dir, segments[0]) if module_dir else segments[0], crate_dir
        )
    if segments[0] == "crate":
        if crate_dir is None:
            return []
        base, rest = crate_dir, segments[1:]
    elif segments[0] in ("self", "super"):
        base = _rust_module_dir(importer)
        i = 1 if segments[0] == "self" else 0
        while i < len(segments) and segments[i] == "super":
            base = posixpath.dirname(base)
            i += 1
        rest = segments[i:]
    else:  # another crate: one of the workspace's, or a dependency (not in the repository)
        from .cargo import workspace_crates

        crate_root = workspace_crates(index).get(segments[0])
        if crate_root is None:
            return []
        crate_dir = base = posixpath.dirname(crate_root)
        rest = segments[1:]
    found: set[str] = set()
    tails = [rest + [n] for n in imp.names if n not in ("*", "self")] or [rest]
    if "*" in imp.names or "self" in imp.names:
        tails.append(rest)
    for tail in tails:
        for k in range(len(tail), -1, -1):
            module_dir = posixpath.join(base, *tail[:k]) if (base or tail[:k]) else ""
            module_dir = module_dir.strip("/")
            files = _rust_module_files(index, module_dir, crate_dir, crate_root)
            if files:
                found.update(files)
                break
    return sorted(found)


# -- Java, C/C++, Ruby, PHP -----------------------------------------------------------------------


def _resolve_java(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    from .namespaces import resolve_jvm

    return resolve_jvm(imp, index)


def _resolve_csharp(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    from .namespaces import resolve_csharp

    return resolve_csharp(imp, index)


def _resolve_c(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    from .includes import resolve_include

    return resolve_include(imp, index)


def _resolve_ruby(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    from .loadpaths import resolve_ruby

    return resolve_ruby(imp, index)


def _resolve_php(imp: Import, index: RepoIndex, cache: _IndexCache) -> list[str]:
    source = imp.source
    if source.lower().endswith((".php", ".inc", ".phtml")):  # require / include
        hit = index.resolve_relative_path(
            imp.file_path, source if source.startswith(".") else f"./{source}"
        )
        if hit is None and not source.startswith("."):
            hit = source if source in index.files else None
        return [hit] if hit else []
    from .composer import resolve_class

    found: set[str] = set()
    namespaces = [f"{source}\\{n}" for n in imp.names] or [source]
    for ns in namespaces:
        by_map = resolve_class(index, ns)
        if by_map is not None:  # the repository's autoload maps decide
            found.update(by_map)
            continue
        parts = [p for p in ns.split("\\") if p]
        for k in range(len(parts)):
            if len(parts) - k < min(2, len(parts)):
                break
            hits = cache.files_ending_with("/".join(parts[k:]) + ".php")
            if hits:
                found.update(_closest(imp.file_path, hits))
                break
    return sorted(found)


_RESOLVERS: dict[str, Callable[[Import, RepoIndex, _IndexCache], list[str]]] = {
    "ecma": _resolve_ecma,
    "go": _resolve_go,
    "rust": _resolve_rust,
    "java": _resolve_java,
    "kotlin": _resolve_java,
    "c": _resolve_c,
    "ruby": _resolve_ruby,
    "php": _resolve_php,
    "csharp": _resolve_csharp,
}
