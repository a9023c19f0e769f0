"""How a repomapper process asks the cyclic garbage collector to work.

A map holds hundreds of thousands of long-lived objects (every file's summary, the symbol table,
the graph blocks) and almost none of them form cycles: they are freed by reference counting.
With CPython's defaults the collector walks them again every 700 allocations' worth of young
objects and again in every older-generation pass, which is a sizeable share of a fresh process's
run after an edit, and in the MCP server the SDK's own objects (its pydantic models) are walked
again and again during a cold map. Objects that exist when a process has loaded its code
are frozen (left out of every walk; they stay alive as they would anyway), and the youngest
generation is collected every :data:`YOUNG_THRESHOLD` allocations instead of 700. Cycles are
still found, only less often.

Applied by the ``repomapper`` command and the MCP server, never by the library on import: an
embedding application owns its process's collector.
"""

from __future__ import annotations

import gc

#: allocations (net of frees) between collections of the youngest generation (CPython: 700)
YOUNG_THRESHOLD = 50_000


def tune_for_repomapper() -> None:
    """Freeze what is alive now (loaded modules, the SDK) and collect young objects less often;
    have the allocator give large freed blocks back (:mod:`repomapper.mempolicy`)."""
    from .mempolicy import fix_mmap_threshold

    fix_mmap_threshold()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(max(YOUNG_THRESHOLD, gc.get_threshold()[0]), older, oldest)
