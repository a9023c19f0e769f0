"""Render ranked definitions as map text, and fit it to a token budget.

Each selected definition is shown by its source line, under the header lines of its enclosing
scopes, with an elision mark between lines that are not adjacent. Files come in rank order;
lines are cut at a maximum width. The budget is a hard cap: only text whose exact count is within
it is ever returned; an entry that does not fit is shortened or skipped and filling goes on. An
entry that repeats a line already shown is wanted less each time (:func:`repriced`).
"""

from __future__ import annotations

import heapq
import logging
import re
from array import array
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import accumulate
from pathlib import Path
from typing import overload

from .madeonread import MadeOnRead
from .model import Tag

log = logging.getLogger(__name__)

ELISION = "⋮"
MAX_LINE = 100


@dataclass(frozen=True, slots=True)
class Item:
    """One entry of the ranked list: a (file, identifier) pair, or a bare file (ident None)."""

    path: str
    ident: str | None
    score: float
    #: show at most this many of the identifier's definitions in the file (None: all of them)
    limit: int | None = None
    #: the first definitions not shown: the entry shows definitions ``skip`` to ``limit``
    skip: int = 0

    def shown(self, tags: Sequence[Tag]) -> Sequence[Tag]:
        """Which of the identifier's definitions in the file (``tags``) the entry shows."""
        return tags[self.skip : self.limit] if self.skip or self.limit else tags

    def shortened(self) -> Item:
        """The entry cut to its first definition."""
        return replace(self, limit=self.skip + 1)


class SourceLines:
    """File lines on demand, read once per file (rendering never re-parses).

    ``digests`` (path -> content digest, for files whose digest is known to match what is on
    disk) lets ``kept`` (path -> (digest, lines), owned by a long-lived caller) carry a file's
    lines from one map to the next while its content is the same."""

    def __init__(
        self,
        root: Path,
        kept: dict[str, tuple[str, Sequence[str]]] | None = None,
        digests: Callable[[str], str | None] | None = None,
    ):
        self.root = root
        self._lines: dict[str, Sequence[str]] = {}
        self._kept, self._digest = kept, digests

    def get(self, path: str) -> Sequence[str]:
        lines = self._lines.get(path)
        if lines is None:
            digest = self._digest(path) if self._digest is not None else None
            found = self._kept.get(path) if self._kept is not None and digest else None
            if found is not None and found[0] == digest:
                lines = found[1]
            else:
                lines = self._read(path)
                if digest and self._kept is not None:
                    self._kept[path] = (digest, lines)
            self._lines[path] = lines
        return lines

    def _read(self, path: str) -> Sequence[str]:
        try:
            # utf-8-sig: a byte-order mark is not part of the first line
            return text_lines((self.root / path).read_text("utf-8-sig", errors="replace"))
        except OSError as exc:
            log.warning("%s: cannot read for rendering: %s", path, exc)
            return []


#: line boundaries ``str.splitlines`` knows besides the line feed
_OTHER_BREAKS = re.compile("[\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def text_lines(text: str) -> Sequence[str]:
    """``text.splitlines()``, kept compact when the text breaks lines with line feeds only (a
    list of lines costs a string object per line on top of the text)."""
    if _OTHER_BREAKS.search(text):
        return text.splitlines()
    return TextLines(text)


class TextLines(MadeOnRead[str]):
    """The lines of a text whose only line boundary is the line feed, as ``splitlines`` gives
    them: the text kept whole with where each line ends, a line made when read."""

    __slots__ = ("_text", "_ends")

    def __init__(self, text: str) -> None:
        parts = text.split("\n")
        if parts[-1] == "":  # a final line feed ends the last line; it starts none
            parts.pop()
        self._text = text
        #: the length of the text up to each line's end, line feeds left out
        self._ends = array("q", accumulate(map(len, parts)))

    def _rows(self) -> tuple[str]:
        return (self._text,)

    def __len__(self) -> int:
        return len(self._ends)

    def _line(self, i: int) -> str:
        end = self._ends[i]
        start = self._ends[i - 1] + i if i else 0
        return self._text[start : end + i]

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[str]: ...
    def __getitem__(self, i: int | slice) -> str | Sequence[str]:
        n = len(self._ends)
        if isinstance(i, slice):
            return [self._line(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("line index out of range")
        return self._line(i)


def _cut(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def enclosing_lines(line: int, defs: Sequence[Tag]) -> list[int]:
    """Start lines of the definitions that enclose ``line`` (outermost first)."""
    return sorted(d.start_line for d in defs if d.start_line < line <= d.end_line)


def render_file(
    path: str, lines_of_interest: set[int], defs: Sequence[Tag], source: Sequence[str]
) -> str:
    shown: set[int] = set()
    for line in lines_of_interest:
        shown.add(line)
        shown.update(enclosing_lines(line, defs))
    out = [f"{path}:"]
    prev = 0
    for line in sorted(shown):
        if line < 1 or line > len(source):
            continue
        if line != prev + 1:
            out.append(ELISION)
        out.append(_cut(source[line - 1]))
        prev = line
    if prev < len(source):
        out.append(ELISION)
    return "\n".join(out) + "\n"


class MapRenderer:
    def __init__(
        self,
        definitions: Mapping[tuple[str, str], Sequence[Tag]],
        file_defs: Mapping[str, Sequence[Tag]],
        lines: SourceLines,
    ):
        self.definitions = definitions
        self.file_defs = file_defs
        self.lines = lines
        self._file_cache: dict[tuple[str, frozenset[int]], str] = {}

    def render(self, items: Sequence[Item], file_order: Mapping[str, int] | None = None) -> str:
        """The map text of ``items``: files in order of first appearance, or by ``file_order``."""
        order: list[str] = []
        interest: dict[str, set[int]] = {}
        bare: list[str] = []
        for item in items:
            if item.ident is None:
                bare.append(item.path)
                continue
            if item.path not in interest:
                order.append(item.path)
                interest[item.path] = set()
            tags = self.definitions.get((item.path, item.ident), ())
            for tag in item.shown(tags):
                interest[item.path].add(tag.start_line)
        if file_order is not None:
            order.sort(key=lambda p: (file_order.get(p, len(file_order)), p))
            bare.sort(key=lambda p: (file_order.get(p, len(file_order)), p))
        chunks = []
        for path in order:
            key = (path, frozenset(interest[path]))
            text = self._file_cache.get(key)
            if text is None:
                source = self.lines.get(path)
                if source:
                    text = render_file(path, interest[path], self.file_defs.get(path, ()), source)
                else:  # deleted or unreadable since extraction: fall back to the signatures
                    sigs = sorted(
                        (
                            t
                            for i in items
                            if i.path == path and i.ident
                            for t in self.definitions.get((path, i.ident), ())
                        ),
                        key=lambda t: t.start_line,
                    )
                    text = f"{path}:\n" + "".join(f"{_cut(t.signature or t.name)}\n" for t in sigs)
                self._file_cache[key] = text
            chunks.append(text)
        if bare:
            chunks.append("".join(f"{p}\n" for p in bare))
        return "\n".join(chunks)


#: The budget fill gives up after this many entries in a row that do not fit.
MAX_SKIPS = 64
#: An entry whose line repeats one already shown is wanted this much less for each time it was
#: shown: eleven subclasses' ``def decode(self, data: bytes) -> bytes:`` say little more than
#: one, and a second ``var x = require(...)`` nothing an agent needs before other code.
REPEAT_FACTOR = 0.5


def repriced(
    items: Iterable[Item],
    shapes: Callable[[Item], Sequence[str | None]],
    files_last: bool = False,
) -> Iterator[Item]:
    """``items`` (most wanted first) with each entry wanted :data:`REPEAT_FACTOR` times less
    for every entry of the same shape yielded before it, and moved back behind the entries
    wanted more than that. ``shapes`` gives the shape of each definition an entry shows (its
    line, see :func:`line_shape`; None for one without); an entry whose definitions repeat
    one another (one identifier defined in several classes of the file) is split into one
    entry per definition, so the first is shown and the others are priced as repeats.
    ``files_last``: entries without an identifier come after every deferred entry (the order
    without a task: definitions, then files)."""
    seen: Counter[str] = Counter()
    waiting: list[tuple[float, int, Item, str]] = []  # (-want, arrival, entry, shape)
    arrived = 0

    def release(bound: float | None) -> Iterator[Item]:
        """The deferred entries wanted at least ``bound`` (all of them when None)."""
        while waiting and (bound is None or -waiting[0][0] >= bound):
            neg, n, item, shape = heapq.heappop(waiting)
            want = item.score * REPEAT_FACTOR ** seen[shape]
            if want < -neg:  # its shape was shown again while it waited
                heapq.heappush(waiting, (-want, n, item, shape))
                continue
            seen[shape] += 1
            yield replace(item, score=want)

    for item in items:
        if item.ident is None:
            yield from release(None if files_last else item.score)
            yield item
            continue
        parts = shapes(item)
        split = len(parts) > 1 and (
            len(set(parts)) < len(parts) or any(p is not None and seen[p] for p in parts)
        )
        pieces = (
            [(Item(item.path, item.ident, item.score, item.skip + i + 1, item.skip + i), p)
             for i, p in enumerate(parts)]
            if split
            else [(item, parts[0] if len(parts) == 1 else None)]
        )  # fmt: skip
        for piece, shape in pieces:
            yield from release(piece.score)
            if shape is None or not seen[shape]:
                if shape is not None:
                    seen[shape] += 1
                yield piece
                continue
            arrived += 1
            want = piece.score * REPEAT_FACTOR ** seen[shape]
            heapq.heappush(waiting, (-want, arrived, piece, shape))
    yield from release(None)


#: string literals of most languages (quotes and back-quotes, with escapes); a backslash is
#: read only as the start of an escape, so a line of many backslashes and no closing quote
#: costs linear time (with ``.`` in the second branch too, it backtracked exponentially)
_STRING = re.compile(r"""(['"`])(?:\\.|(?!\1)[^\\])*\1""")
#: member names after a dot (``require('./utils').compileETag``)
_MEMBER = re.compile(r"\.[A-Za-z_$][\w$]*")
#: kinds of definitions that hold data, whose shape sets their name and values aside
_DATA_KINDS = frozenset({"variable", "constant", "field"})


def line_shape(tag: Tag) -> str | None:
    """What makes two definitions' lines the same for :func:`repriced`: the signature with its
    white space collapsed; for data (variables, constants, fields) also without the defined
    name, string literals and member names, so ``var debug = require('debug')`` and
    ``var Route = require('./route');`` are one shape (a final semicolon is set aside). None for
    a definition without a signature."""
    if not tag.signature:
        return None
    line = " ".join(tag.signature.split()).rstrip(";")
    if str(tag.symbol_kind) in _DATA_KINDS:
        line = _STRING.sub("''", line)
        line = re.sub(rf"(?<![\w$]){re.escape(tag.name)}(?![\w$])", "_", line)
        line = _MEMBER.sub("._", line)
    return line


def fill_budget(
    items: Iterable[Item],
    render: Callable[[Sequence[Item]], str],
    count: Callable[[str], int],
    budget: int,
    section: Callable[[Sequence[Item]], int] | None = None,
) -> tuple[str, int, list[Item]]:
    """Take ``items`` in order, skipping (or shortening to one definition) what does not fit,
    and keep filling: one oversized entry never ends the map early.

    Each entry is priced by its own file's section (the map is the sum of its sections, give or
    take a token at each join): ``section`` (the items of one file -> tokens; by default their
    rendered text, counted); the final text is counted exactly and the last entries are dropped
    until it fits, so the result never exceeds ``budget``.
    Returns (text, tokens, selected items).
    """
    if section is None:

        def section(part: Sequence[Item]) -> int:
            return count(render(part))

    if not items or budget <= 0:
        return "", 0, []
    selected: list[Item] = []
    by_file: dict[str | None, list[Item]] = {}
    cost: dict[str | None, int] = {}
    used = 0
    skips = 0
    for item in items:
        if skips >= MAX_SKIPS or used >= budget:
            break
        key = item.path if item.ident is not None else None
        current = by_file.get(key, [])
        accepted = None
        for candidate in (item, item.shortened()) if item.ident else (item,):
            tokens = section([*current, candidate])
            delta = tokens - cost.get(key, 0) + (0 if current else 1)
            if used + delta <= budget:
                accepted = (candidate, tokens, delta)
                break
        if accepted is None:
            skips += 1
            continue
        skips = 0
        candidate, tokens, delta = accepted
        by_file.setdefault(key, []).append(candidate)
        cost[key] = tokens
        used += delta
        selected.append(candidate)
    while selected:
        text = render(selected)
        tokens = count(text)
        if tokens <= budget:
            return text, tokens, selected
        selected.pop()
    return "", 0, []
