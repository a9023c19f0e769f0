"""The ranking state kept in the cache as arrays, so that a new process updates it by the files
that changed instead of building it from every file's summary.

A process that builds the state (see :func:`repomapper.graphstate.build_state`) stores its
symbol table, the factored graph's layout, the definition index, the resolved imports, the
task-free PageRank and the definitions' ranking as numpy arrays (``allow_pickle=False``: nothing
but numbers and strings is read back), with the content key of every file it was built from
(path, content digest, backends), the files that are not mapped (resolution reads some of
them), and the chat files and mentions. A repository keeps its newest one.

A later process over the same files loads it as a :class:`~repomapper.graphstate.GraphState`
whose rows are made only when read (:mod:`repomapper.layered`): the symbol table answers a
name from its arrays, a block of the factored graph is computed again only when an update
reads it, a file's definitions are parsed only when a map shows them, and a name is decoded
from the archive's bytes only when read (see :mod:`repomapper.joinedstrings`: an update splices
the layout's identifiers and the definition index's names as ids). The files whose content
changed since enter with their old summaries (read from the cache by their old content keys),
so :func:`~repomapper.graphstate.update_state` replaces their rows as it would in a long-lived
process. The result equals a state built from scratch (tests compare the maps byte for byte);
anything missing, foreign or unreadable builds the state again.
"""

from __future__ import annotations

from .encode import encode, write
from .load import load
from .stored import VERSION, Stored, changed_files, decode

__all__ = [
    "DRIFT_SHARE",
    "MAX_CHANGED",
    "MAX_CHANGED_SHARE",
    "VERSION",
    "Stored",
    "changed_files",
    "decode",
    "drift_limit",
    "encode",
    "load",
    "max_changed",
    "write",
]

#: a stored state is updated by at most this many changed files, or :data:`MAX_CHANGED_SHARE`
#: of its files if that is more; more build it again (each changed file's old summary is read
#: and its rows replaced, and a state that drifted far from the stored one is better built and
#: stored again)
MAX_CHANGED = 64
#: an update costs about each changed file's old and new rows, a build every file's: in a large
#: tree a branch switch of hundreds of files is still an update
MAX_CHANGED_SHARE = 0.01


def max_changed(files: int) -> int:
    """How many changed files a stored state of ``files`` files is updated by."""
    return max(MAX_CHANGED, int(files * MAX_CHANGED_SHARE))


#: A stored state is written when built, never when updated (an updated state is encoded whole,
#: as costly as a build), so each new process updates it by every file changed since it was
#: stored, however many calls before it did the same. Once the files those calls updated add up
#: to this share of the state's files, the next call builds it again and stores it: an update
#: costs a changed file about what a build costs twenty files (see docs/benchmarks.md), so
#: repeated updates never cost more than about one build before the state is current again
#: (the rule of renting until the rent paid equals the price).
DRIFT_SHARE = 0.05


def drift_limit(files: int) -> int:
    """How many file updates, summed over the calls that loaded it, a stored state of ``files``
    files takes before it is built again (see :data:`DRIFT_SHARE`); never fewer than one call
    may update it by."""
    return max(max_changed(files), int(files * DRIFT_SHARE))
