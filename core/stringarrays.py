"""Lists of strings as one byte array (UTF-8, NUL-separated): how a stored state's ``.npz``
archive holds paths, digests and names, which numpy reads back without pickling."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def joined(values: Sequence[str]) -> Any:
    """``values`` as one UTF-8 byte array, NUL-separated (a fixed-width string array would take
    four bytes per character of the longest name, for every name)."""
    import numpy as np

    text = "\0".join(values)
    if text.count("\0") != max(len(values) - 1, 0):
        raise ValueError("a name holds a NUL character")
    data = text.encode("utf-8", "surrogateescape")
    return np.frombuffer(data, dtype=np.uint8) if values else np.zeros(0, dtype=np.uint8)


def split(array: Any, count: int | None = None) -> list[str]:
    """The strings of an array made by :func:`joined`; ``count``: how many there must be (then
    an empty array of one string is that one empty string, which :func:`joined` writes as no
    bytes, the same as no strings)."""
    if array.dtype != "uint8" or array.ndim != 1:
        raise ValueError("strings are a byte array")
    whole = len(array) or count == 1
    out = array.tobytes().decode("utf-8", "surrogateescape").split("\0") if whole else []
    if count is not None and len(out) != count:
        raise ValueError("a string array does not match its counts")
    return out


def triples(array: Any) -> list[tuple[str, str, str]]:
    """The strings of an array made by :func:`joined` taken three at a time (content keys:
    path, digest, backends)."""
    values = split(array)
    if len(values) % 3:
        raise ValueError("a string array of triples holds a partial one")
    return list(zip(values[0::3], values[1::3], values[2::3], strict=True))
