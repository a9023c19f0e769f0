"""Fill the token budget: files by score, each in the best mode its role allows that still fits
(``full`` -> ``outline`` -> ``signatures``), counted exactly; never over budget."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .content import MODES, render
from .models import ASTContext, FileContent
from .roles import RolePolicy
from .select import Candidate

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


def fill(
    root: Path,
    ctx: ASTContext,
    cands: dict[str, Candidate],
    policy: RolePolicy,
    budget: int,
    count: Callable[[str], int],
) -> Filled:
    remaining = budget
    files: list[FileContent] = []
    omitted: list[dict[str, Any]] = []
    shown: dict[str, str] = {}
    for c in order(cands):
        try:
            raw = (root / c.path).read_bytes()
            text = raw.decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            omitted.append({"path": c.path, "score": c.score, "reason": f"unreadable: {exc}"})
            continue
        parsed = ctx.files.get(c.path)
        best = (
            policy.target_mode if c.target or (policy.named_full and c.named) else policy.other_mode
        )
        modes = MODES[MODES.index(best) :] if parsed is not None else ("full",)
        bodies = frozenset(c.bodies)
        matter = frozenset(c.matter)
        placed = False
        tried: set[str] = set()
        for mode in modes:
            content, spans = render(text, parsed, mode, bodies, matter)
            if not content or content in tried:
                continue
            tried.add(content)
            tokens = count(content)
            if tokens > remaining:
                continue
            remaining -= tokens
            line_count = len(text.splitlines())
            files.append(
                FileContent(
                    c.path,
                    parsed.language if parsed else "",
                    mode,
                    content,
                    spans,
                    tokens,
                    line_count,
                    c.score,
                    c.why(),
                )
            )
            if parsed is not None:
                lines = {n for a, b in spans for n in range(a, b + 1)}
                for s in parsed.symbols:
                    if s.id not in c.matter:
                        continue
                    if all(n in lines for n in range(s.start_line, s.end_line + 1)):
                        shown[s.id] = "body"
                    elif s.start_line in lines:
                        shown[s.id] = "signature"
                    else:
                        shown[s.id] = "listed"
            placed = True
            break
        if not placed:
            omitted.append(
                {
                    "path": c.path,
                    "score": c.score,
                    "reason": "budget" if tried else "nothing to show",
                }
            )
    return Filled(tuple(files), budget - remaining, tuple(omitted), shown)
