"""PHP ``use`` statements resolved through composer's autoload maps.

Each ``composer.json`` of the repository (at the root, or above any PHP file: a monorepo's
packages each have one) is read once per index, never executed. Its ``autoload`` and
``autoload-dev`` ``psr-4`` entries map a namespace prefix to folders (``"App\\\\": "src/"``:
``App\\Http\\Kernel`` is ``src/Http/Kernel.php``); ``psr-0`` entries map a prefix to folders
holding the whole namespace as a path (underscores in the class name are folders too). The
longest matching prefix wins, as in composer's class loader.

A class whose namespace no map of the repository covers is a dependency (``vendor/``): it
resolves to nothing. Only a repository without any map falls back to the namespace read as a
folder path (the file ending with ``B/C.php`` for ``A\\B\\C``, nearest the importer).
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from repomapper.index import RepoIndex

from .configfiles import read_config


@dataclass(frozen=True, slots=True)
class Autoload:
    """One prefix of one composer.json: the folders (repository-relative) it maps to."""

    prefix: str  # "App\\" ("" for a fallback folder)
    folders: tuple[str, ...]
    psr0: bool


def autoload_maps(index: RepoIndex) -> tuple[Autoload, ...]:
    """Every PSR-4 and PSR-0 entry of the repository's composer.json files, longest prefix
    first (ties by folder, for a deterministic order)."""
    return index.derived(("treesitter", "composer_autoload"), _autoload_maps)


def _manifests(index: RepoIndex) -> list[str]:
    """composer.json files at the root or in a folder holding (or above) a PHP file."""
    candidates: set[str] = {"composer.json"}
    for directory, files in index.by_dir.items():
        if not any(f.endswith(".php") for f in files):
            continue
        d = directory
        while d:
            candidates.add(f"{d}/composer.json")
            d = posixpath.dirname(d)
    found = []
    for rel in sorted(candidates):
        if rel in index.files or (index.root / rel).is_file():
            found.append(rel)
    return found


def _autoload_maps(index: RepoIndex) -> tuple[Autoload, ...]:
    entries: list[Autoload] = []
    for manifest in _manifests(index):
        data = read_config(index.root, manifest, json.loads, quiet=True)
        if data is None:
            continue
        base = posixpath.dirname(manifest)
        for section in ("autoload", "autoload-dev"):
            table = data.get(section)
            if not isinstance(table, dict):
                continue
            for kind in ("psr-4", "psr-0"):
                mapping = table.get(kind)
                if not isinstance(mapping, dict):
                    continue
                for prefix, folders in mapping.items():
                    listed = [folders] if isinstance(folders, str) else folders
                    if not isinstance(prefix, str) or not isinstance(listed, list):
                        continue
                    kept = tuple(
                        _folder(base, f) for f in listed if isinstance(f, str) and ".." not in f
                    )
                    if kept:
                        entries.append(Autoload(prefix.lstrip("\\"), kept, kind == "psr-0"))
    return tuple(sorted(entries, key=lambda e: (-len(e.prefix), e.prefix, e.folders, e.psr0)))


def _folder(base: str, folder: str) -> str:
    joined = posixpath.normpath(posixpath.join(base, folder.strip("/"))) if folder else base
    return "" if joined == "." else joined


def resolve_class(index: RepoIndex, name: str) -> list[str] | None:
    """The file composer would load for class ``name`` (``A\\B\\C``); ``[]`` when no map of
    the repository has it; ``None`` when the repository has no autoload map at all."""
    maps = autoload_maps(index)
    if not maps:
        return None
    name = name.strip("\\")
    for entry in maps:
        if not entry.psr0 and not (name + "\\").startswith(entry.prefix):
            continue
        if entry.psr0 and not name.startswith(entry.prefix):
            continue
        if entry.psr0:
            namespace, _, short = name.rpartition("\\")
            tail = (namespace.replace("\\", "/") + "/" if namespace else "") + short.replace(
                "_", "/"
            )
        else:
            tail = name[len(entry.prefix) :].replace("\\", "/")
        for folder in entry.folders:
            path = f"{folder}/{tail}.php" if folder else f"{tail}.php"
            if path in index.files:
                return [path]
    return []
