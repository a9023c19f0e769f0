"""Every file's summary as one mapping, in which the summaries of the files a stored state was
made from are made when first read.

A new process that updates a stored state (see :mod:`repomapper.snapshot`) reads the summaries
of the files an edit changed and of the files its map shows: a few dozen of a large tree's
78,000. Making every summary object up front cost a large share of such a call. A
:class:`SummaryView` holds, per file, either its summary or the :class:`HeadMade` that makes it
from what the stored state says of the file's cache row; a summary made is kept, so a file read
twice is the same object (the graph state compares summaries by identity to find what an edit
changed, and the tools read the very objects the ranking holds). What the ranking asks of every
file (its backend, its diagnostics) is answered from the heads without making the summary.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from .cache import NO_DIAGNOSTICS, row_diagnostics
from .model import Diagnostic, FileSymbols, Tag

log = logging.getLogger(__name__)

#: what a head is: (backend, language, and the diagnostics' JSON text last)
Head = tuple[Any, ...]
#: makes a file's summary from its head and its parsed diagnostics
Maker = Callable[[str, Head, tuple[Diagnostic, ...]], FileSymbols]


def head_diagnostics(path: str, text: str) -> tuple[Diagnostic, ...]:
    """A head's diagnostics; a text that cannot be read is logged and read as none (it costs
    that file's diagnostics, never the run)."""
    try:
        return row_diagnostics(path, text)
    except (ValueError, TypeError) as exc:
        log.warning("%s: the stored diagnostics cannot be read (%s); read as none", path, exc)
        return ()


class HeadMade:
    """The summaries of files known by their heads, each made when first read and kept."""

    __slots__ = ("_heads", "_make", "_made", "_diagnostics", "all_mapped")

    def __init__(self, heads: dict[str, Head], make: Maker):
        self._heads = heads
        #: whether every head names a backend
        self.all_mapped = all(h[0] is not None for h in heads.values())
        self._make = make
        self._made: dict[str, FileSymbols] = {}
        self._diagnostics: dict[str, tuple[Diagnostic, ...]] = {}

    def __len__(self) -> int:
        return len(self._heads)

    def __contains__(self, path: object) -> bool:
        return path in self._heads

    def get(self, path: str) -> FileSymbols:
        """The summary of ``path``, made on the first read."""
        found = self._made.get(path)
        if found is None:
            found = self._made[path] = self.transient(path)
        return found

    def transient(self, path: str) -> FileSymbols:
        """The summary of ``path`` as :meth:`get` gives it, made without being kept when it
        was not made yet (a pass that reads every file once, and keeps nothing of it)."""
        found = self._made.get(path)
        return (
            found
            if found is not None
            else self._make(path, self._heads[path], self.diagnostics(path))
        )

    def plugin(self, path: str) -> str | None:
        return self._heads[path][0]  # type: ignore[no-any-return]

    def diagnostics(self, path: str) -> tuple[Diagnostic, ...]:
        """The diagnostics of ``path``, parsed once, without making its summary."""
        found = self._diagnostics.get(path)
        if found is None:
            found = self._diagnostics[path] = head_diagnostics(path, self._heads[path][-1])
        return found


#: a file's entry in a view: its summary, or what makes it
Slot = FileSymbols | HeadMade


def _plugin(path: str, slot: Slot) -> str | None:
    return slot.plugin(path) if isinstance(slot, HeadMade) else slot.plugin


def _diagnostics(path: str, slot: Slot) -> tuple[Diagnostic, ...]:
    return slot.diagnostics(path) if isinstance(slot, HeadMade) else slot.diagnostics


def _mapped(path: str, slot: Slot) -> bool:
    if isinstance(slot, HeadMade):  # (every head names a backend, as a rule: no call per file)
        return slot.all_mapped or slot.plugin(path) is not None
    return slot.plugin is not None


class SummaryView(Mapping[str, FileSymbols]):
    """path -> summary, in the order given; entries held by a :class:`HeadMade` are made when
    read (see the module's docstring). Immutable: a change is a new view."""

    __slots__ = ("_slots",)

    def __init__(self, slots: dict[str, Slot]):
        self._slots = slots

    def __getitem__(self, path: str) -> FileSymbols:
        found = self._slots[path]
        return found.get(path) if isinstance(found, HeadMade) else found

    def __iter__(self) -> Iterator[str]:
        return iter(self._slots)

    def __len__(self) -> int:
        return len(self._slots)

    def __contains__(self, path: object) -> bool:
        return path in self._slots

    def transient(self, path: str) -> FileSymbols:
        """The summary of ``path``, equal to the view's, not kept by the view when it was not
        made yet: a pass over a large tree's every file (the lexical index's) would otherwise
        hold every file's definitions at once."""
        found = self._slots[path]
        return found.transient(path) if isinstance(found, HeadMade) else found

    def slot(self, path: str) -> Slot:
        return self._slots[path]

    def plugin(self, path: str) -> str | None:
        return _plugin(path, self._slots[path])

    def diagnostics_of(self, path: str) -> tuple[Diagnostic, ...]:
        return _diagnostics(path, self._slots[path])

    def plugins(self) -> Iterator[tuple[str, str | None]]:
        """(path, backend) of every file, in order."""
        for path, slot in self._slots.items():
            yield path, _plugin(path, slot)

    def diagnostics(self) -> list[Diagnostic]:
        """Every file's diagnostics, in order (asked of every file by every map: a head that
        has none is passed over without a call)."""
        out: list[Diagnostic] = []
        for path, slot in self._slots.items():
            if type(slot) is HeadMade:
                if slot._heads[path][-1] != NO_DIAGNOSTICS:
                    out.extend(slot.diagnostics(path))
            else:
                out.extend(_diagnostics(path, slot))
        return out

    def mapped(self) -> SummaryView:
        """The files a backend answered for (a server asks on every call)."""
        return SummaryView({p: s for p, s in self._slots.items() if _mapped(p, s)})

    def replacing(self, summaries: Mapping[str, FileSymbols], order: Iterable[str]) -> SummaryView:
        """A view over ``order`` (files of this view) with ``summaries`` standing in for theirs."""
        slots = self._slots
        return SummaryView({p: summaries.get(p) or slots[p] for p in order})

    def changed_since(self, old: SummaryView) -> list[str]:
        """The files whose summary is not the one of ``old`` (the same files)."""
        before = old._slots
        changed = []
        for path, now in self._slots.items():
            was = before[path]
            if was is not now and old[path] is not self[path]:
                changed.append(path)
        return changed

    def same_files(self, other: SummaryView) -> bool:
        return self._slots.keys() == other._slots.keys()

    def definitions(self) -> Mapping[str, Sequence[Tag]]:
        """path -> the file's definitions, read when asked for."""
        return _Definitions(self)


class _Definitions(Mapping[str, Sequence[Tag]]):
    __slots__ = ("_view",)

    def __init__(self, view: SummaryView):
        self._view = view

    def __getitem__(self, path: str) -> Sequence[Tag]:
        return self._view[path].definitions

    def __iter__(self) -> Iterator[str]:
        return iter(self._view)

    def __len__(self) -> int:
        return len(self._view)

    def __contains__(self, path: object) -> bool:
        return path in self._view


def plugin_of(files: Mapping[str, FileSymbols], path: str) -> str | None:
    """The backend of ``path``'s summary, without making a summary a view holds unmade."""
    if isinstance(files, SummaryView):
        return files.plugin(path)
    return files[path].plugin


def plugins_of(files: Mapping[str, FileSymbols]) -> Iterator[tuple[str, str | None]]:
    """(path, backend) of every file, without making a summary a view holds unmade."""
    if isinstance(files, SummaryView):
        return files.plugins()
    return ((p, fs.plugin) for p, fs in files.items())


def diagnostics_of(files: Mapping[str, FileSymbols], path: str) -> tuple[Diagnostic, ...]:
    """The diagnostics of ``path``'s summary, without making a summary a view holds unmade."""
    if isinstance(files, SummaryView):
        return files.diagnostics_of(path)
    return files[path].diagnostics


def mapped_files(summaries: Mapping[str, FileSymbols]) -> Mapping[str, FileSymbols]:
    """The files a backend answered for (a view of a view)."""
    if isinstance(summaries, SummaryView):
        return summaries.mapped()
    return {p: fs for p, fs in summaries.items() if fs.plugin is not None}


def all_diagnostics(summaries: Mapping[str, FileSymbols]) -> list[Diagnostic]:
    """Every file's diagnostics, in the mapping's order."""
    if isinstance(summaries, SummaryView):
        return summaries.diagnostics()
    out: list[Diagnostic] = []
    for fs in summaries.values():
        out.extend(fs.diagnostics)
    return out


def changed_files(old: Mapping[str, FileSymbols], new: Mapping[str, FileSymbols]) -> list[str]:
    """The files of ``new`` whose summary is not ``old``'s (compared by identity)."""
    if isinstance(old, SummaryView) and isinstance(new, SummaryView):
        return new.changed_since(old)
    return [p for p, fs in new.items() if old[p] is not fs]


def same_files(a: Mapping[str, FileSymbols], b: Mapping[str, FileSymbols]) -> bool:
    if isinstance(a, SummaryView) and isinstance(b, SummaryView):
        return a.same_files(b)
    return a.keys() == b.keys()


def definitions_of(summaries: Mapping[str, FileSymbols]) -> Mapping[str, Sequence[Tag]]:
    """path -> definitions, made when read for a view."""
    if isinstance(summaries, SummaryView):
        return summaries.definitions()
    return {p: fs.definitions for p, fs in summaries.items()}


def with_summaries(
    files: Mapping[str, FileSymbols],
    summaries: Mapping[str, FileSymbols],
    order: Iterable[str],
) -> Mapping[str, FileSymbols]:
    """The files of ``order`` (files of ``files``) with ``summaries`` standing in for theirs, the
    others unmade if a view holds them unmade."""
    if isinstance(files, SummaryView):
        return files.replacing(summaries, order)
    return {p: summaries.get(p) or files[p] for p in order}
