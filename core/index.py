"""What the core knows about the set of files being mapped, for resolving imports.

Language-neutral: files by directory and path-like specifiers. Language rules (Python's
dotted modules, Go's module paths, ...) live in the backends, which may keep tables built from
the index in :meth:`RepoIndex.derived`.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")


class RepoIndex:
    """An immutable view of the mapped files with lookup helpers for import resolution."""

    def __init__(self, root: Path, files: Iterable[str]):
        self.root = root
        self.files: frozenset[str] = frozenset(files)
        self._derived: dict[Hashable, Any] = {}

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

    def derived(self, key: Hashable, build: Callable[[RepoIndex], T]) -> T:
        """A table computed once from this index and kept as long as it: ``build(self)`` on the
        first request for ``key``, the same object afterwards.

        For a backend's own lookup structures (a module-name table, say), which the core does
        not know about: namespace ``key`` by the backend (``("python", "modules")``). ``build``
        must depend on the index only, so the table is the same whoever asks first.
        """
        try:
            found: T = self._derived[key]  # what build made for this key
            return found
        except KeyError:
            value = self._derived[key] = build(self)
            return value

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
