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
    """The strings of an array made by :func:`joined`; ``count``: how many there must be."""
    if array.dtype != "uint8" or array.ndim != 1:
        raise ValueError("strings are a byte array")
    out = array.tobytes().decode("utf-8", "surrogateescape").split("\0") if len(array) else []
    if count is not None and len(out) != count:
        raise ValueError("a string array does not match its counts")
    return out
