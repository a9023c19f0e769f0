"""A cached file summary's parts kept as the cache's JSON text and parsed when first read.

A run that starts from a stored state (see :mod:`repomapper.snapshot`) reads the references of the
changed files and the definitions of the files its map shows, a few dozen of thousands; parsing
every row up front (every file's definitions and reference summary) cost most of such a run. A row
that turns out unreadable when it is parsed is logged and read as empty: it costs that file's part,
never the run.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Generic, TypeVar, overload

from .madeonread import MadeOnRead
from .model import Import, NameFacts, Tag, name_facts, tag_facts
from .namecounts import NameCounts

log = logging.getLogger(__name__)


#: a part's text, or what reads it from the cache when first needed
Text = str | Callable[[], str]

T = TypeVar("T")
#: what a row is made from: a part's text, or a reference summary both its parts read
S = TypeVar("S")


def _parsed(path: str, what: str, text: Text) -> Any:
    try:
        return json.loads(text if isinstance(text, str) else text())
    except ValueError as exc:
        log.warning("%s: the cached %s cannot be read (%s); read as empty", path, what, exc)
        return None


class _Lazy(MadeOnRead[T], Generic[T, S]):
    """Items of type ``T`` made from a source ``S`` when first read; the source is dropped
    once they are made."""

    __slots__ = ("_path", "_text", "_made")

    def __init__(self, path: str, text: S):
        self._path = path
        self._text: S | None = text
        self._made: Sequence[T] | None = None

    def _make(self, source: S) -> Sequence[T]:
        raise NotImplementedError

    def _all(self) -> Sequence[T]:
        made = self._made
        if made is None:
            source = self._text
            if source is None:  # another thread made the items (before dropping the source)
                return self._all()
            try:
                made = self._make(source)
            except (TypeError, ValueError, KeyError, IndexError) as exc:
                log.warning("%s: a cached row cannot be read (%s); read as empty", self._path, exc)
                made = ()
            self._made = made
            self._text = None
        return made

    def _rows(self) -> tuple[str, Sequence[T]]:
        return self._path, self._all()

    def made(self) -> Sequence[T]:
        """The items, made if they were not yet."""
        return self._all()

    def __len__(self) -> int:
        return len(self._all())

    @overload
    def __getitem__(self, i: int) -> T: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[T]: ...
    def __getitem__(self, i: int | slice) -> T | Sequence[T]:
        return self._all()[i]

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())


class RowTags(_Lazy[Tag, Text]):
    """A file's definitions (:class:`Tag` objects, names, kinds and scopes interned: the same
    names recur across thousands of files)."""

    __slots__ = ("_refetch", "_names")

    def __init__(
        self,
        path: str,
        text: Text,
        refetch: Callable[[], str] | None = None,
        names: NameFacts | None = None,
    ):
        super().__init__(path, text)
        #: reads the text from the cache again, for a row whose text was read for the table
        #: and let go (see :meth:`facts`)
        self._refetch = refetch
        #: the name facts, when whoever made the text had its tags (a worker sends both)
        self._names: NameFacts | None = names

    def name_facts(self) -> NameFacts:
        """What the symbol table reads of the definitions (see :class:`NameFacts`), kept once
        read: a run reads it for a freshly extracted file as soon as its row is stored, so its
        text is let go then and the table is built from these."""
        found = self._names
        if found is None:
            found = self._names = name_facts(self.facts())
        return found

    def refetch_with(self, refetch: Callable[[], str]) -> None:
        """Let :meth:`facts` drop the text once it has read it: ``refetch`` reads it again
        from the cache if a map shows the file (a large tree's definitions held as text were
        a fifth of a cold run's memory, and a map shows a few dozen files). A row whose name
        facts came with it lets its text go now: the table needs nothing else of it."""
        self._refetch = refetch
        if self._names is not None and self._made is None and isinstance(self._text, str):
            if self._names.names:
                self._text = refetch
            else:  # no definitions: nothing to read again
                self._made, self._text = (), None

    def _make(self, source: Text) -> tuple[Tag, ...]:
        rows = _parsed(self._path, "definitions", source) or ()
        intern = sys.intern
        out = []
        for row in rows:
            for i in (2, 3, 4, 5):
                if i < len(row) and isinstance(row[i], str):
                    row[i] = intern(row[i])
            out.append(Tag.from_row(self._path, row))
        return tuple(out)

    def facts(self) -> list[tuple[str, str, str]]:
        """(name, symbol kind, scope) of each definition, for building the symbol table; a row
        not read yet stays unread (read without making its Tags: they are made, and kept, for
        a file a map shows), and a text that can be read again is let go."""
        if self._made is not None:
            return tag_facts(self._made)
        source = self._text
        if source is None:  # another thread made the items meanwhile
            return tag_facts(self._all())
        rows = _parsed(self._path, "definitions", source)
        facts = _row_facts(rows) if rows else []
        if facts is None:  # not rows of tags: read as _make reads them (logged once there)
            return tag_facts(self._all())
        if not facts:  # nothing to make later (an unreadable text was logged once, above)
            self._made, self._text = (), None
        elif self._refetch is not None and self._text is source:
            self._text = self._refetch
        return facts


def _row_facts(rows: Any) -> list[tuple[str, str, str]] | None:
    """:func:`~repomapper.model.tag_facts` of the tags ``rows`` make, read from the rows
    themselves; None for anything but lists of a tag's fields (:meth:`RowTags._make` then
    decides what they are)."""
    intern = sys.intern
    out = []
    try:
        for row in rows:
            if type(row) is not list or not 4 <= len(row) <= 9:
                return None
            name = row[2]
            kind = row[4] if len(row) > 4 else ""
            scope = row[5] if len(row) > 5 else ""
            if type(name) is not str or type(kind) is not str or type(scope) is not str:
                return None
            out.append((intern(name), intern(kind), intern(scope)))
    except TypeError:  # not iterable
        return None
    return out


class RowImports(_Lazy[Import, Text]):
    """A file's imports."""

    __slots__ = ()

    def _make(self, source: Text) -> tuple[Import, ...]:
        rows = _parsed(self._path, "imports", source) or ()
        return tuple(Import.from_row(self._path, r) for r in rows)


class Summary:
    """A file's reference summary (``{"c": [[name, count]...], "t": [[name, target]...]}``),
    parsed once for both of its parts."""

    __slots__ = ("path", "_text", "_parsed")

    def __init__(self, path: str, text: Text):
        self.path, self._text = path, text
        self._parsed: dict[str, list[Any]] | None = None

    def part(self, key: str) -> list[Any]:
        if self._parsed is None:
            found = _parsed(self.path, "reference summary", self._text)
            self._parsed = found if isinstance(found, dict) else {}
            self._text = ""
        return self._parsed.get(key, [])


class RowReferences(_Lazy[tuple[str, int], Summary]):
    """(name, count) per referenced name, names interned."""

    __slots__ = ()

    def __init__(self, summary: Summary):
        super().__init__(summary.path, summary)

    def _make(self, source: Summary) -> NameCounts:
        return NameCounts((n, int(c)) for n, c in source.part("c"))


class RowTargets(_Lazy[tuple[str, str], Summary]):
    """(name, qualified target) per resolved reference."""

    __slots__ = ()

    def __init__(self, summary: Summary):
        super().__init__(summary.path, summary)

    def _make(self, source: Summary) -> tuple[tuple[str, str], ...]:
        return tuple((n, t) for n, t in source.part("t"))


_FETCHING = threading.RLock()


class Deferred:
    """A cached row's texts (definitions, reference summary, imports) read from the cache when
    one is first needed: a run that updates a stored state reads a few files' rows, and the
    texts of all the others, most of the cache on a large tree, are never read. A row gone from
    the cache meanwhile (evicted by another process) is logged and read as empty."""

    __slots__ = ("path", "_fetch", "_texts")

    def __init__(self, path: str, fetch: Callable[[], tuple[str, str, str] | None]):
        self.path, self._fetch = path, fetch
        self._texts: list[str | None] | None = None

    def _get(self, i: int) -> str:
        """Part ``i``'s text, handed out once and let go (each part is parsed once and kept
        as what it makes, or read again only for a file a map shows): a second read of a part
        reads the row again."""
        with _FETCHING:  # one fetch per row, whichever thread reads it first
            texts = self._texts
            if texts is None or texts[i] is None:
                found = self._fetch()
                if found is None:
                    log.warning(
                        "%s: its cached row is no longer in the cache; read as empty", self.path
                    )
                    found = ("[]", "{}", "[]")
                texts = list(found)
            text = texts[i]
            texts[i] = None
            self._texts = texts if any(t is not None for t in texts) else None
        assert text is not None
        return text

    def definitions(self) -> str:
        return self._get(0)

    def summary(self) -> str:
        return self._get(1)

    def imports(self) -> str:
        return self._get(2)
