"""Render ranked definitions as map text, and fit it to a token budget by binary search.

Each selected definition is shown by its source line, under the header lines of its enclosing
scopes, with an elision mark between lines that are not adjacent. Files come in rank order;
lines are cut at a maximum width. The budget is a hard cap: only text whose exact count is within
it is ever returned.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

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


class SourceLines:
    """File lines on demand, read once per file (rendering never re-parses)."""

    def __init__(self, root: Path):
        self.root = root
        self._lines: dict[str, list[str]] = {}

    def get(self, path: str) -> list[str]:
        lines = self._lines.get(path)
        if lines is None:
            try:
                text = (self.root / path).read_text("utf-8", errors="replace")
                lines = text.splitlines()
            except OSError as exc:
                log.warning("%s: cannot read for rendering: %s", path, exc)
                lines = []
            self._lines[path] = lines
        return lines


def _cut(line: str) -> str:
    line = line.rstrip()
    return line if len(line) <= MAX_LINE else line[: MAX_LINE - 1] + "…"


def enclosing_lines(line: int, defs: Sequence[Tag]) -> list[int]:
    """Start lines of the definitions that enclose ``line`` (outermost first)."""
    return sorted(d.start_line for d in defs if d.start_line < line <= d.end_line)


def render_file(path: str, lines_of_interest: set[int], defs: Sequence[Tag], source: list[str]) -> str:
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

    def render(self, items: Sequence[Item]) -> str:
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
            for tag in self.definitions.get((item.path, item.ident), ()):
                interest[item.path].add(tag.start_line)
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
                        (t for i in items if i.path == path and i.ident for t in self.definitions.get((path, i.ident), ())),
                        key=lambda t: t.start_line,
                    )
                    text = f"{path}:\n" + "".join(f"{_cut(t.signature or t.name)}\n" for t in sigs)
                self._file_cache[key] = text
            chunks.append(text)
        if bare:
            chunks.append("".join(f"{p}\n" for p in bare))
        return "\n".join(chunks)


def fit_to_budget(
    items: Sequence[Item],
    render: Callable[[Sequence[Item]], str],
    count: Callable[[str], int],
    budget: int,
) -> tuple[str, int, int]:
    """The longest prefix of ``items`` whose rendering fits ``budget`` tokens.

    Returns (text, tokens, number of items). Exponential search from Aider's first guess, then
    binary search; every accepted text was counted exactly, so the result never exceeds the budget.
    """
    n_items = len(items)
    best: tuple[str, int, int] = ("", 0, 0)
    if n_items == 0 or budget <= 0:
        return best
    memo: dict[int, tuple[str, int]] = {}

    def measure(n: int) -> tuple[str, int]:
        if n not in memo:
            text = render(items[:n])
            memo[n] = (text, count(text))
        return memo[n]

    # Every item adds at least one token, so more than `budget` items can never fit.
    hi = min(n_items, budget)
    lo = 0
    guess = max(1, min(hi, budget // 25))
    # exponential phase: find a failing upper bound
    while True:
        text, tokens = measure(guess)
        if tokens <= budget:
            lo = guess
            best = (text, tokens, guess)
            if guess == hi:
                return best
            guess = min(hi, guess * 2)
        else:
            hi = guess - 1
            break
    # binary phase on (lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        text, tokens = measure(mid)
        if tokens <= budget:
            lo = mid
            best = (text, tokens, mid)
        else:
            hi = mid - 1
    return best

