"""Settings of the pack generator: arguments win over environment variables, which win over the
defaults of the design (``CONTEXT_PACK_DIR``, ``DEFAULT_TOKEN_BUDGET``, ``MAX_DEPENDENCY_DEPTH``,
``MIN_RELEVANCE_SCORE``).

Nothing is written into the mapped repository unless asked: there is no default pack directory
(packs are written only when ``pack_dir`` or ``CONTEXT_PACK_DIR`` names one)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class PackError(ValueError):
    """Bad input to the pack generator (task id, target, setting): the message says which."""


@dataclass(frozen=True, slots=True)
class PackSettings:
    #: where packs are written; None: nowhere (the caller prints or returns them)
    pack_dir: Path | None
    token_budget: int = 100_000
    max_dependency_depth: int = 3
    min_relevance_score: float = 0.2

    @classmethod
    def resolve(
        cls,
        root: Path,
        *,
        pack_dir: str | os.PathLike[str] | None = None,
        token_budget: int | None = None,
        max_dependency_depth: int | None = None,
        min_relevance_score: float | None = None,
        env: Mapping[str, str] | None = None,
    ) -> PackSettings:
        env = os.environ if env is None else env

        def pick(arg: Any, name: str, conv: Callable[[str], Any], default: Any) -> Any:
            if arg is not None:
                value = arg
            elif env.get(name, "").strip():
                try:
                    value = conv(env[name].strip())
                except ValueError as exc:
                    raise PackError(f"{name}={env[name]!r} is not a valid value: {exc}") from exc
            else:
                value = default
            return conv(value)

        named = pick(pack_dir, "CONTEXT_PACK_DIR", str, "")
        directory = _under(root, named) if named else None
        s = cls(
            directory,
            pick(token_budget, "DEFAULT_TOKEN_BUDGET", int, 100_000),
            pick(max_dependency_depth, "MAX_DEPENDENCY_DEPTH", int, 3),
            pick(min_relevance_score, "MIN_RELEVANCE_SCORE", float, 0.2),
        )
        if s.token_budget < 1:
            raise PackError(f"the token budget must be at least 1 (got {s.token_budget})")
        if s.max_dependency_depth < 0:
            raise PackError(
                f"MAX_DEPENDENCY_DEPTH must be 0 or more (got {s.max_dependency_depth})"
            )
        if not 0.0 <= s.min_relevance_score <= 1.0:
            raise PackError(
                f"MIN_RELEVANCE_SCORE must be between 0 and 1 (got {s.min_relevance_score})"
            )
        return s

    def to_dict(self) -> dict[str, Any]:
        # where files go is left out: a pack is the same wherever it is written
        return {
            "token_budget": self.token_budget,
            "max_dependency_depth": self.max_dependency_depth,
            "min_relevance_score": self.min_relevance_score,
        }


def _under(root: Path, path: str | os.PathLike[str]) -> Path:
    """``path``, relative ones taken from the root (as the design's ``CONTEXT_PACK_DIR``)."""
    p = Path(path)
    return p if p.is_absolute() else root / p
