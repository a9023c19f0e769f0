"""The live index: one repository's extraction kept in memory and updated per changed file.

Built on RepoMap's public pieces (``collect``, ``extract``, ``resolve_imports``): the per-file
summaries come from the SQLite tag cache (so a restart is cheap), and only files whose size or
mtime changed are extracted again; their rows in the lookup tables (name -> definitions, name ->
referencing files) are replaced. Import edges are resolved on first use; after that an edit
re-resolves the changed files' own imports, and an added or removed file all of them.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..discover import FileEntry
from ..index import RepoIndex
from ..model import Diagnostic, FileExtraction, FileSymbols, Tag

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RefreshStats:
    checked: int
    changed: int
    added: int
    removed: int
    seconds: float
    how: str  # "discover" (a full listing), "stat" (known files re-stat'ed) or "skip"


class LiveIndex:
    """The extracted repository at ``rm.root``: summaries, lookup tables, import edges.

    Not thread-safe by itself: the service serialises calls. ``watching`` is set by a watcher
    that calls :meth:`mark_dirty` on file events; without one, every :meth:`refresh` lists the
    repository again (the stat/size fallback).
    """

    def __init__(self, rm):
        self.rm = rm
        self.root: Path = rm.root
        self.entries: dict[str, FileEntry] = {}
        self.files: dict[str, FileSymbols] = {}
        self.discovery_diagnostics: tuple[Diagnostic, ...] = ()
        self.files_seen = 0
        self.defs: dict[str, dict[str, tuple[Tag, ...]]] = defaultdict(dict)
        self.refs: dict[str, dict[str, int]] = defaultdict(dict)
        self.version = 0
        self.watching = False
        self._dirty = threading.Event()
        self._dirty.set()
        self._imports: tuple[dict[str, Counter[str]], dict[str, Counter[str]]] | None = None
        self._index: RepoIndex | None = None
        self.last_refresh: RefreshStats | None = None

    # -- keeping it current --------------------------------------------------------------------
    def mark_dirty(self, changes: object = None) -> None:
        """A watcher saw the tree change: the next refresh lists the repository again."""
        self._dirty.set()

    def refresh(self) -> RefreshStats:
        """Bring the index up to date. With a watcher and no event since the last refresh, only
        the known files are re-stat'ed (an edit is seen even before its event arrives); otherwise
        the repository is listed again, which also finds added and removed files."""
        started = time.perf_counter()
        if self.watching and not self._dirty.is_set():
            changed, removed = self._stat_known()
            how = "stat" if changed or removed else "skip"
            added = 0
        else:
            self._dirty.clear()
            entries, diags, seen = self.rm.collect(None)
            self.discovery_diagnostics = tuple(diags)
            self.files_seen = seen
            fresh = {e.path: e for e in entries}
            removed = [p for p in self.entries if p not in fresh]
            changed = [e for p, e in fresh.items() if self.entries.get(p) != e]
            added = sum(1 for e in changed if e.path not in self.entries)
            how = "discover"
        if changed or removed:
            self._apply(changed, removed)
        stats = RefreshStats(
            len(self.entries), len(changed), added, len(removed), time.perf_counter() - started, how
        )
        self.last_refresh = stats
        return stats

    def _stat_known(self) -> tuple[list[FileEntry], list[str]]:
        changed: list[FileEntry] = []
        removed: list[str] = []
        root = str(self.root)
        for path, entry in self.entries.items():
            try:
                st = os.stat(os.path.join(root, path))
            except OSError:
                removed.append(path)
                continue
            if st.st_size != entry.size or st.st_mtime_ns != entry.mtime_ns:
                if st.st_size > self.rm.max_file_size:
                    removed.append(path)
                    self._dirty.set()  # let discovery report why on the next call
                else:
                    changed.append(FileEntry(path, st.st_size, st.st_mtime_ns))
        return changed, removed

    def _apply(self, changed: Sequence[FileEntry], removed: Sequence[str]) -> None:
        extracted = self.rm.extract(list(changed)) if changed else {}
        before = {p for p, fs in self.files.items() if fs.plugin is not None}
        for path in removed:
            self._drop(path)
            self.entries.pop(path, None)
        for entry in changed:
            self._drop(entry.path)
            self.entries[entry.path] = entry
            fs = extracted.get(entry.path)
            if fs is None:
                continue
            self.files[entry.path] = fs
            by_name: dict[str, list[Tag]] = defaultdict(list)
            for tag in fs.definitions:
                by_name[tag.name].append(tag)
            for name, tags in by_name.items():
                self.defs[name][entry.path] = tuple(
                    sorted(tags, key=lambda t: (t.start_line, t.end_line))
                )
            for name, count in fs.references:
                self.refs[name][entry.path] = count
        self.version += 1
        after = {p for p, fs in self.files.items() if fs.plugin is not None}
        touched = {e.path for e in changed} | set(removed)
        if after != before or touched - after:
            # resolution depends on the file set and may read files that are not mapped
            # (tsconfig.json, go.mod): resolve again when asked
            self._imports = None
            self._index = None
        elif self._imports is not None:  # same files: only the changed importers' edges move
            self._reimport([e.path for e in changed])

    def _reimport(self, paths: Sequence[str]) -> None:
        forward, backward = self._imports
        index = self._repo_index()
        for path in paths:
            for target in forward.pop(path, {}):
                rows = backward.get(target)
                if rows is not None:
                    rows.pop(path, None)
                    if not rows:
                        del backward[target]
            fs = self.files.get(path)
            if fs is None or fs.plugin is None or not fs.imports:
                continue
            found = self.rm.file_imports(path, fs, index)
            if found:
                forward[path] = found
                for target, n in found.items():
                    backward.setdefault(target, Counter())[path] = n

    def _drop(self, path: str) -> None:
        old = self.files.pop(path, None)
        if old is None:
            return
        for name in {t.name for t in old.definitions}:
            rows = self.defs.get(name)
            if rows is not None:
                rows.pop(path, None)
                if not rows:
                    del self.defs[name]
        for name, _ in old.references:
            rows = self.refs.get(name)
            if rows is not None:
                rows.pop(path, None)
                if not rows:
                    del self.refs[name]

    # -- reading -------------------------------------------------------------------------------
    @property
    def mapped(self) -> dict[str, FileSymbols]:
        return {p: fs for p, fs in self.files.items() if fs.plugin is not None}

    def import_edges(self) -> tuple[dict[str, Counter[str]], dict[str, Counter[str]]]:
        """(importer -> imported files, imported file -> importers), resolved by each file's
        backend; computed on first use after a change."""
        if self._imports is None:
            forward = self.rm.resolve_imports(self.mapped, self._repo_index())
            backward: dict[str, Counter[str]] = defaultdict(Counter)
            for src, targets in forward.items():
                for dst, n in targets.items():
                    backward[dst][src] += n
            self._imports = (dict(forward), dict(backward))
        return self._imports

    def _repo_index(self) -> RepoIndex:
        """The index of the mapped files (kept, with the backends' tables built from it, while
        the file set is the same)."""
        if self._index is None:
            self._index = RepoIndex(self.root, self.mapped)
        return self._index

    def full_extraction(self, paths: Sequence[str]) -> Mapping[str, FileExtraction]:
        """Every tag (references with their lines) of ``paths``, from the cache where it has them."""
        entries = [self.entries[p] for p in paths if p in self.entries]
        return self.rm.extract(entries, full=True) if entries else {}
