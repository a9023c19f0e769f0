"""How a repomapper process asks the cyclic garbage collector to work.

A map holds hundreds of thousands of long-lived objects (every file's summary, the symbol table,
the graph blocks) and almost none of them form cycles: they are freed by reference counting.
With CPython's defaults the collector walks them again every 700 allocations' worth of young
objects and again in every older-generation pass, which is a sizeable share of a fresh process's
run after an edit, and in the MCP server the SDK's own objects (its pydantic models) are walked
again and again during a cold map. Objects that exist when a process has loaded its code
are frozen (left out of every walk; they stay alive as they would anyway), and the youngest
generation is collected far less often. Cycles are still found, only less often.

How much less depends on how long the process lives. A command answers once and exits: what it
makes lives until it exits or is freed by reference counting, so a collection walks it for
next to nothing; it collects every :data:`ONE_SHOT_YOUNG` allocations (a large tree's edit then
makes none: see docs/benchmarks.md). What lives on between answers (the MCP server, an
extraction worker) makes garbage call after call, and one collection over that many young
objects would pause a call for longer than the call takes, so it collects every
:data:`LONG_LIVED_YOUNG`.

Applied by the ``repomapper`` command and the MCP server, never by the library on import: an
embedding application owns its process's collector.
"""

from __future__ import annotations

import gc
import os

#: allocations (net of frees) between collections of the youngest generation in a command that
#: answers once (CPython: 700)
ONE_SHOT_YOUNG = 1_000_000
#: the same in a process that lives on between answers
LONG_LIVED_YOUNG = 50_000


_forks_long_lived = False


def tune_for_repomapper(long_lived: bool = False) -> None:
    """Freeze what is alive now (loaded modules, the SDK) and collect young objects as a command
    that answers once does, and a process it forks (an extraction worker) as one that lives
    on; ``long_lived``: as one that lives on (an application that keeps a ``RepoMap``). Have the
    allocator give large freed blocks back (:mod:`repomapper.mempolicy`)."""
    global _forks_long_lived
    from .mempolicy import fix_mmap_threshold

    fix_mmap_threshold()
    gc.freeze()
    young, older, oldest = gc.get_threshold()
    gc.set_threshold(max(LONG_LIVED_YOUNG if long_lived else ONE_SHOT_YOUNG, young), older, oldest)
    if not long_lived and not _forks_long_lived and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=tune_for_long_lived)
        _forks_long_lived = True


def tune_for_long_lived() -> None:
    """Collect young objects at least every :data:`LONG_LIVED_YOUNG` allocations (a process
    forked from a command, or a command that turns into a server; one with a lower threshold,
    such as an embedding application's, keeps it)."""
    young, older, oldest = gc.get_threshold()
    if young > LONG_LIVED_YOUNG:
        gc.set_threshold(LONG_LIVED_YOUNG, older, oldest)
