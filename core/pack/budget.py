"""Fill the token budget: files by score, each in the best mode its role allows that still fits
(``full`` -> ``outline`` -> ``signatures``), counted exactly; never over budget."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..model import Tag
from .content import MODES, render
from .models import FileContent, symbol_id
from .roles import RolePolicy
from .select import FUNCTION_KINDS, Candidate
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
        #: the files placed as outlines: (their place in ``files``, candidate, bodies shown)
        self.outlines: list[tuple[int, Candidate, frozenset[str]]] = []

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
                if mode == "outline":
                    self.outlines.append((len(self.files) - 1, c, bodies))
            return
        reason = "budget" if tried else "nothing to show"
        self.omitted.append({"path": c.path, "score": c.score, "reason": reason})

    def widen(self) -> None:
        """What the budget leaves once every file is placed goes to the bodies of the other
        functions that matter in the files shown as outlines, file by file in their order and
        each in the order it was asked for, while each fits (no file placed is displaced: a
        small repository's pack showed a few signatures in a tenth of its budget)."""
        for i, c, bodies in self.outlines:
            placed = self.files[i]
            definitions = self.view.definitions(c.path)
            functions = {
                symbol_id(c.path, s.qualified_name)
                for s in definitions
                if str(s.symbol_kind) in FUNCTION_KINDS
            }
            lines = self.view.content(c.path)
            if isinstance(lines, str):
                continue
            import_lines = self.view.import_lines(c.path)
            matter = frozenset(c.matter)
            for sid in c.matter:
                if sid in bodies or sid not in functions or self.remaining <= 0:
                    continue
                wider = bodies | {sid}
                content, spans = render(
                    c.path, lines, definitions, import_lines, "outline", wider, matter
                )
                tokens = self.count(content)
                if tokens - placed.token_count > self.remaining:
                    continue
                self.remaining -= tokens - placed.token_count
                placed = replace(placed, content=content, spans=spans, token_count=tokens)
                bodies = wider
            if placed is not self.files[i]:
                self.files[i] = placed
                self._note_shown(c, definitions, placed.spans)

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
    # with targets, what else shows a body is what the targets use (the role's table); from the
    # task's text alone the ranking is all there is to go on, and its functions fill the rest
    if policy.dependency_bodies and not any(c.target for c in cands.values()):
        filling.widen()
    return Filled(
        tuple(filling.files), budget - filling.remaining, tuple(filling.omitted), filling.shown
    )
