"""What the core knows about the set of files being mapped, for resolving imports."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import cached_property
from pathlib import Path


class RepoIndex:
    """An immutable view of the mapped files with lookup helpers for import resolution."""

    def __init__(self, root: Path, files: Iterable[str]):
        self.root = root
        self.files: frozenset[str] = frozenset(files)

    @cached_property
    def by_dir(self) -> dict[str, tuple[str, ...]]:
        dirs: dict[str, list[str]] = defaultdict(list)
        for f in self.files:
            dirs[posixpath.dirname(f)].append(f)
        return {d: tuple(sorted(fs)) for d, fs in dirs.items()}

    def files_in_dir(self, directory: str, suffixes: Sequence[str] = ()) -> tuple[str, ...]:
        """Files directly inside ``directory`` (relative, ``""`` for the root)."""
        found = self.by_dir.get(directory.strip("/"), ())
        if suffixes:
            found = tuple(f for f in found if f.endswith(tuple(suffixes)))
        return found

    @cached_property
    def python_modules(self) -> dict[str, tuple[str, ...]]:
        """Dotted module name -> files, for every way the file could be imported.

        ``src/pkg/mod.py`` is importable as ``src.pkg.mod``, ``pkg.mod`` and ``mod``; a longer
        (more specific) name wins at lookup time.
        """
        modules: dict[str, list[str]] = defaultdict(list)
        for f in self.files:
            if not f.endswith((".py", ".pyi")):
                continue
            parts = f.rsplit(".", 1)[0].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            for i in range(len(parts)):
                modules[".".join(parts[i:])].append(f)
        return {m: tuple(sorted(fs)) for m, fs in modules.items() if m}

    def resolve_python_module(self, dotted: str) -> tuple[str, ...]:
        """Files a dotted module name may refer to; the shortest paths win ties."""
        candidates = self.python_modules.get(dotted, ())
        if len(candidates) <= 1:
            return candidates
        best = min(c.count("/") for c in candidates)
        return tuple(c for c in candidates if c.count("/") == best)

    def resolve_python_relative(self, importer: str, source: str, level: int) -> str | None:
        """Resolve ``from ..pkg import x`` written in ``importer``; ``None`` if not in the repo."""
        base = posixpath.dirname(importer)
        for _ in range(level - 1):
            base = posixpath.dirname(base)
        target = posixpath.join(base, *source.split(".")) if source else base
        target = target.strip("/")
        for candidate in (f"{target}.py", f"{target}.pyi", f"{target}/__init__.py"):
            if candidate in self.files:
                return candidate
        return None

    def resolve_relative_path(
        self,
        importer: str,
        spec: str,
        extensions: Sequence[str] = (),
        index_names: Sequence[str] = ("index",),
    ) -> str | None:
        """Resolve a path-like specifier (``./util``, ``../lib/x.js``) against ``importer``'s
        directory, trying the path as written, then with each extension, then as a directory
        with an index file. Never leaves the repository: ``None`` if it would.
        """
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(importer), spec))
        if joined.startswith("..") or posixpath.isabs(joined):
            return None
        joined = "" if joined == "." else joined
        if joined in self.files:
            return joined
        for ext in extensions:
            if f"{joined}{ext}" in self.files:
                return f"{joined}{ext}"
        for name in index_names:
            for ext in extensions:
                candidate = posixpath.join(joined, f"{name}{ext}") if joined else f"{name}{ext}"
                if candidate in self.files:
                    return candidate
        return None
