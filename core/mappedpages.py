"""Giving back the pages of arrays that are views of a file mapped into memory.

A stored state's arrays are views of its file (see :mod:`repomapper.snapshot.stored`): each
page read stays resident in the process until the file is unmapped, although once its values
are checked, copied into a spliced layout or made into names nothing reads it again. On a large
tree those pages were a third of an edit's peak memory. :func:`give_back` tells the system
they are not needed (``MADV_DONTNEED``): they leave the process's resident memory and stay
in the page cache, and a later read of the same values faults them in again from there, so
it is never a question of correctness, only of what is resident. Arrays that are not views of
a mapped file are left alone.
"""

from __future__ import annotations

import mmap
from typing import Any

#: the unit the system gives pages back in
PAGE = mmap.PAGESIZE


def give_back(*arrays: Any) -> int:
    """Give back the whole pages that ``arrays`` (numpy arrays, or None) occupy in a
    read-only file mapping; returns how many bytes were given back (0 where the system has no
    ``madvise`` or an array is not such a view)."""
    advice = getattr(mmap, "MADV_DONTNEED", None)
    if advice is None:
        return 0
    given = 0
    for array in arrays:
        found = _mapping_of(array)
        if found is None:
            continue
        view, start, end = found
        lo = -(-start // PAGE) * PAGE  # whole pages only: a neighbour may share the edges
        hi = end // PAGE * PAGE
        if hi > lo:
            try:
                view.madvise(advice, lo, hi - lo)
            except (OSError, ValueError):
                continue
            given += hi - lo
    return given


def _mapping_of(array: Any) -> tuple[mmap.mmap, int, int] | None:
    """The read-only mapping ``array`` is a contiguous view of, and the byte range it covers
    there; None for anything else."""
    base = getattr(array, "base", None)
    if base is None or not getattr(array, "flags", None) or not array.flags.contiguous:
        return None
    while not isinstance(base, mmap.mmap):
        # an array's base, or the object a memoryview (np.frombuffer's base) was made of
        base = base.obj if isinstance(base, memoryview) else getattr(base, "base", None)
        if base is None:
            return None
    if array.flags.writeable or base.closed:
        return None  # (only our read-only mappings: a writable one may hold what it was given)
    import numpy as np

    start = array.ctypes.data - np.frombuffer(base, dtype=np.uint8, count=0).ctypes.data
    end = start + array.nbytes
    if not 0 <= start <= end <= len(base):
        return None
    return base, start, end
