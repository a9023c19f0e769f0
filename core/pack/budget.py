"""Fill the token budget: files by score, each in the best mode its role allows that still fits
(``full`` -> ``outline`` -> ``signatures``), counted exactly; never over budget."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..model import Tag
from .content import MODES, render
from .models import FileContent, symbol_id
from .roles import RolePolicy
from .select import Candidate
from .view import StateView

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Filled:
    files: tuple[FileContent, ...]
    tokens: int
    omitted: tuple[dict[str, Any], ...]
    #: symbol id -> "body" or "signature", for the files included
    shown: dict[str, str]


def order(cands: dict[str, Candidate]) -> list[Candidate]:
    """Targets first, then by score; path breaks ties (deterministic)."""
    return sorted(cands.values(), key=lambda c: (not c.target, -c.score, c.path))


class _Filling:
    """The budget left, the files placed and left out so far, and what each placed file
    shows of its symbols."""

    def __init__(
        self, view: StateView, policy: RolePolicy, budget: int, count: Callable[[str], int]
    ):
        self.view = view
        self.policy = policy
        self.remaining = budget
        self.count = count
        self.files: list[FileContent] = []
        self.omitted: list[dict[str, Any]] = []
        self.shown: dict[str, str] = {}

    def place(self, c: Candidate) -> None:
        """Put ``c`` in, in the best mode that fits, or say why it is left out."""
        lines = self.view.content(c.path)
        if isinstance(lines, str):
            self.omitted.append({"path": c.path, "score": c.score, "reason": lines})
            return
        mapped = c.path in self.view.mapped
        definitions = self.view.definitions(c.path) if mapped else None
        best = (
            self.policy.target_mode
            if c.target or (self.policy.named_full and c.named)
            else self.policy.other_mode
        )
        modes = MODES[MODES.index(best) :] if mapped else ("full",)
        import_lines = self.view.import_lines(c.path)
        tried: set[str] = set()
        for mode, bodies in _attempts(modes, list(c.bodies)):
            content, spans = render(
                c.path,
                lines,
                definitions,
                import_lines,
                mode,
                bodies,
                frozenset(c.matter),
            )
            if not content or content in tried:
                continue
            tried.add(content)
            tokens = self.count(content)
            if tokens > self.remaining:
                continue
            self.remaining -= tokens
            language = self.view.language(c.path)
            self.files.append(
                FileContent(
                    c.path, language, mode, content, spans, tokens, len(lines), c.score, c.why()
                )
            )
            if definitions is not None:
                self._note_shown(c, definitions, spans)
            return
        reason = "budget" if tried else "nothing to show"
        self.omitted.append({"path": c.path, "score": c.score, "reason": reason})

    def _note_shown(
        self, c: Candidate, definitions: Sequence[Tag], spans: tuple[tuple[int, int], ...]
    ) -> None:
        """How much of each symbol that matters the file shows: its body, its signature, or
        only its name in the pack's symbol list."""
        lines = {n for a, b in spans for n in range(a, b + 1)}
        for s in definitions:
            sid = symbol_id(c.path, s.qualified_name)
            if sid not in c.matter:
                continue
            if all(n in lines for n in range(s.start_line, max(s.end_line, s.start_line) + 1)):
                self.shown[sid] = "body"
            elif s.start_line in lines:
                self.shown[sid] = "signature"
            else:
                self.shown[sid] = "listed"


def _attempts(modes: Sequence[str], bodies: list[str]) -> Iterator[tuple[str, frozenset[str]]]:
    """Each mode to try, best first, with the bodies it shows: an outline that does not fit
    is tried again with the first half of its bodies (the ones asked for first), down to none,
    before the file falls to signatures only."""
    for mode in modes:
        if mode != "outline":
            yield mode, frozenset(bodies)
            continue
        n = len(bodies)
        while True:
            yield mode, frozenset(bodies[:n])
            if n == 0:
                break
            n //= 2


def fill(
    view: StateView,
    cands: dict[str, Candidate],
    policy: RolePolicy,
    budget: int,
    count: Callable[[str], int],
) -> Filled:
    """The files of the pack in order, each in the best mode that still fits the budget."""
    filling = _Filling(view, policy, budget, count)
    for c in order(cands):
        filling.place(c)
    return Filled(
        tuple(filling.files), budget - filling.remaining, tuple(filling.omitted), filling.shown
    )
