"""Each file's ranking summary, kept between calls and replaced per changed file.

A file whose cache key (path, stat, backends, content digest) is unchanged keeps its summary
object: the graph state compares summaries by identity to find what an edit changed, and the
MCP tools read the very objects the ranking holds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from ..cache import CacheKey, RowHeads
from ..extract import Extractor
from ..fileentry import FileEntry
from ..isolation.supervisor import UNSETTLED
from ..model import FileSymbols
from ..summaryview import HeadMade, Slot, SummaryView


class Summaries:
    """path -> (its key, its summary), for the files extracted so far."""

    def __init__(self) -> None:
        self._rows: dict[str, tuple[CacheKey, Slot]] = {}
        #: what the last :meth:`current` did: files from the cache, extracted, reused
        self.last_stats: dict[str, int] = {}
        #: False when the last :meth:`current` was touched by a crash, a time-out or a
        #: disabled plugin (what was built from it is not stored for later processes)
        self.settled = True

    def __len__(self) -> int:
        return len(self._rows)

    def current(
        self,
        root: Path,
        extractor: Extractor,
        entries: Sequence[FileEntry],
        misses: Callable[[int], None] | None = None,
        deferred: bool = False,
        heads: RowHeads | None = None,
    ) -> SummaryView:
        """The summaries of ``entries``: kept ones for unchanged keys, the others looked up in
        the cache or extracted. An extraction touched by a crash, a time-out or a disabled
        plugin is not kept for the next call. ``deferred``: see
        :meth:`repomapper.cache.TagCache.lookup`; with it, the files ``heads`` knows are made
        when first read (see :mod:`repomapper.summaryview`)."""
        rows = self._rows
        keys = extractor.keys_of(entries)
        changed = [
            e
            for e, k in zip(entries, keys, strict=True)
            if (row := rows.get(e.path)) is None or row[0] != k
        ]
        made: HeadMade | None = None
        if changed and deferred and heads is not None:
            known, make, changed = extractor.from_heads(root, changed, heads)
            made = HeadMade(known, make)
        got = extractor.run(root, changed, misses=misses, deferred=deferred) if changed else {}
        if not changed and misses is not None:
            misses(0)
        fresh = {p: fs for p, fs in got.items() if isinstance(fs, FileSymbols)}
        if changed or made:
            found = len(made) if made is not None else 0
            stats = extractor.stats if changed else {"cached": 0, "extracted": 0}
            self.last_stats = {
                **stats,
                "cached": stats["cached"] + found,
                "reused": len(entries) - len(changed) - found,
            }
        else:
            self.last_stats = {"cached": len(entries), "extracted": 0, "reused": len(entries)}
        self.settled = not any(d.code in UNSETTLED for d in extractor.diagnostics)
        if not self.settled:
            rows.clear()  # a plugin disabled for the whole run: nothing of it is kept
        out: dict[str, Slot] = {}
        for entry, key in zip(entries, keys, strict=True):
            path = entry.path
            extracted = fresh.get(path)
            slot: Slot
            if extracted is None:
                if made is not None and path in made:
                    slot = made
                    rows[path] = (key, made)
                else:
                    row = rows.get(path)
                    if row is None or row[0] != key:
                        continue  # not extracted (the extraction reported why)
                    slot = row[1]
            elif not any(d.code in UNSETTLED for d in extracted.diagnostics):
                slot = extracted
                rows[path] = (key, extracted)
            else:
                slot = extracted
                rows.pop(path, None)
                self.settled = False
            out[path] = slot
        return SummaryView(out)

    def replace(self, path: str, summary: FileSymbols) -> None:
        """Stand ``summary`` in for the kept summary of ``path`` (same key)."""
        key, _ = self._rows[path]
        self._rows[path] = (key, summary)

    def forget(self, keep: Sequence[FileEntry]) -> None:
        """Drop every file not in ``keep`` (files gone from the tree)."""
        wanted = {e.path for e in keep}
        for path in [p for p in self._rows if p not in wanted]:
            del self._rows[path]
