"""Resolved imports held as arrays over file ids: what a built state keeps and a stored one
loads (see :mod:`repomapper.snapshot`).

A state's imports are read as importer -> {imported file: count}; on a large tree holding them
that way (a ``Counter`` of path strings per importer) was the largest part of a cold run's
memory (a replicated tree resolves each Python import to every copy of its module). Here they
are a few flat arrays, an importer's ``Counter`` made when it is read, and the import matrix's
entries computed from them at once.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from .layered import Layered

#: an importer's entries of the import matrix: rows, columns, weights
Entries = tuple[Any, Any, Any]


class ImportRows(Mapping[str, Counter[str]]):
    """importer -> {imported file: count} over ``files`` (sorted; ids are positions):
    ``importers`` (file ids, ascending), ``starts`` (where each importer's entries begin, and
    the total), ``targets`` (file ids, ascending per importer) and ``counts``."""

    def __init__(
        self, files: Sequence[str], importers: Any, starts: Any, targets: Any, counts: Any
    ):
        n = len(files)
        if len(starts) != len(importers) + 1 or targets.shape != counts.shape:
            raise ValueError("import arrays differ in length")
        if targets.shape != (int(starts[-1]),):
            raise ValueError("import targets do not match their counts")
        for ids in (importers, targets):
            if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= n):
                raise ValueError("an import names a file that is not mapped")
        if len(importers) > 1 and bool((importers[1:] <= importers[:-1]).any()):
            raise ValueError("importers are not sorted")
        self.files, self.importers, self.starts = files, importers, starts
        self.targets, self.counts = targets, counts
        self._made: dict[str, Counter[str]] = {}

    def _at(self, path: object) -> int | None:
        """The importer's position among the importers."""
        if not isinstance(path, str):
            return None
        i = bisect_left(self.files, path)
        if i >= len(self.files) or self.files[i] != path:
            return None
        j = int(self.importers.searchsorted(i))
        return j if j < len(self.importers) and int(self.importers[j]) == i else None

    def __getitem__(self, path: str) -> Counter[str]:
        found = self._made.get(path)
        if found is None:
            j = self._at(path)
            if j is None:
                raise KeyError(path)
            lo, hi = int(self.starts[j]), int(self.starts[j + 1])
            names = [self.files[t] for t in self.targets[lo:hi].tolist()]
            found = Counter(dict(zip(names, self.counts[lo:hi].tolist(), strict=True)))
            self._made[path] = found
        return found

    def __contains__(self, path: object) -> bool:
        return self._at(path) is not None

    def __iter__(self) -> Iterator[str]:
        return (self.files[i] for i in self.importers.tolist())

    def __len__(self) -> int:
        return len(self.importers)

    def importers_of(self, path: str) -> dict[str, int]:
        """The files importing ``path``, with their counts, read from the arrays (no
        importer's ``Counter`` is made)."""
        import numpy as np

        i = bisect_left(self.files, path)
        if i >= len(self.files) or self.files[i] != path:
            return {}
        at = np.flatnonzero(self.targets == i)
        owners = self.importers[np.searchsorted(self.starts, at, "right") - 1]
        return {
            self.files[o]: c for o, c in zip(owners.tolist(), self.counts[at].tolist(), strict=True)
        }

    def entries(self, chat_files: frozenset[str]) -> tuple[Entries, list[tuple[str, int, int]]]:
        """The import matrix's entries (what :func:`repomapper.graph.import_weights` gives,
        self-imports left out, in its order: importers, then targets, ascending), and each
        importer's range of them."""
        import numpy as np

        from .graph import CHAT_MULTIPLIER, IMPORT_EDGE_WEIGHT

        owner = np.repeat(self.importers, np.diff(self.starts))
        boost = np.ones(len(self.files), dtype=np.float64)
        for f in chat_files:
            i = bisect_left(self.files, f)
            if i < len(self.files) and self.files[i] == f:
                boost[i] = CHAT_MULTIPLIER
        weights = np.sqrt(self.counts.astype(np.float64))
        weights *= IMPORT_EDGE_WEIGHT  # (in import_weights' order: weight x sqrt, x chat)
        if chat_files:
            weights *= boost[owner]
        rows, cols = owner, self.targets
        selfs = rows == cols
        if selfs.any():
            keep = ~selfs
            rows, cols, weights = rows[keep], cols[keep], weights[keep]
        los = np.searchsorted(rows, self.importers, "left").tolist()
        his = np.searchsorted(rows, self.importers, "right").tolist()
        ranges = [
            (self.files[i], lo, hi)
            for i, lo, hi in zip(self.importers.tolist(), los, his, strict=True)
        ]
        return (rows, cols, weights), ranges


class ImportsCollector:
    """Resolved imports gathered into arrays as they come, importer by importer."""

    def __init__(self, files: Sequence[str]):
        self.files = files
        self._at = {f: i for i, f in enumerate(files)}
        self._importer, self._target, self._count = array("i"), array("i"), array("q")
        #: importers whose imports name a file that is not mapped, as they were resolved
        self.odd: dict[str, Counter[str]] = {}

    def add(self, importer: str, found: Counter[str]) -> None:
        """One importer's resolved imports (nothing for an empty one). One that names a file
        that is not mapped (the import matrix leaves such an entry out, the readers of the
        imports see it) is kept as it is, in :attr:`odd`."""
        if not found:
            return
        ids = list(map(self._at.get, found))
        if None in ids:
            self.odd[importer] = found
            return
        self._importer.extend([self._at[importer]] * len(ids))
        self._target.extend(ids)  # type: ignore[arg-type]
        self._count.extend(found.values())

    def rows(self) -> ImportRows:
        import numpy as np

        importer = np.frombuffer(self._importer, np.int32) if self._importer else _empty()
        target = np.frombuffer(self._target, np.int32) if self._target else _empty()
        count = np.frombuffer(self._count, np.int64) if self._count else np.zeros(0, np.int64)
        at = np.lexsort((target, importer))
        importer, target, count = importer[at], target[at], count[at]
        self._importer, self._target, self._count = array("i"), array("i"), array("q")
        ids, per = np.unique(importer, return_counts=True)
        starts = np.zeros(len(ids) + 1, dtype=np.int64)
        np.cumsum(per, out=starts[1:])
        return ImportRows(self.files, ids.astype(np.int32), starts, target, count)


def _empty() -> Any:
    import numpy as np

    return np.zeros(0, dtype=np.int32)


def importers_of(imports: Mapping[str, Mapping[str, int]], path: str) -> dict[str, int]:
    """The importers of ``path`` in ``imports`` (importer -> {imported file: count}), with
    their counts: from the arrays of a state's :class:`ImportRows` and the importers an update
    set on top of them, or by reading every importer of a plain mapping."""
    base = imports.base if isinstance(imports, Layered) else imports
    if not isinstance(base, ImportRows):
        return {src: targets[path] for src, targets in imports.items() if path in targets}
    if base is imports:
        return base.importers_of(path)
    assert isinstance(imports, Layered)
    found = {src: n for src, n in base.importers_of(path).items() if imports.from_base(src)}
    for src in imports.changed_keys():
        targets = imports.get(src)
        if targets and path in targets:
            found[src] = targets[path]
    return found
