"""What a cluster worker runs: one batch of a repository's files extracted into cache rows.

A batch is plain data (the root as the worker sees it, and repository-relative paths); so is
what comes back (:class:`BatchResult` as JSON-shaped lists: each row's content key and the
seven text columns the cache stores). Nothing a worker returns is trusted by the driver: it is
checked as an imported bundle's row is, and kept only under the content key the driver computed
from its own read of the file (see :mod:`.driver`).

The files are extracted as a map extracts them: through the plugins, in the supervised worker
processes of :mod:`repomapper.isolation` (a plugin that crashes or hangs costs its file, never the
cluster worker), with the default plugin configuration that ``index export`` uses.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..cache import TagCache
from ..extract import Extractor
from ..isolation.pool import WorkerPool
from ..model import Diagnostic
from ..paths import entries_for
from ..registry import PluginConfig, PluginSet

log = logging.getLogger(__name__)

#: a file larger than this is not extracted on a worker (a map skips it too: its discovery
#: limit is smaller)
MAX_FILE_SIZE = 1 << 62

#: One batch's answer, as plain data: {"rows": [[path, digest, fingerprint, [7 columns]], ...],
#: "left": [[path, why], ...], "notes": [message, ...], "worker": host:pid, "seconds": busy}
BatchResult = dict[str, Any]

_local = threading.local()


def _plugins() -> tuple[PluginSet, WorkerPool]:
    """The plugin set and the kept extraction worker of this thread (made once: loading the
    plugins and forking a worker cost more than a small batch's extraction)."""
    found: tuple[PluginSet, WorkerPool] | None = getattr(_local, "plugins", None)
    if found is None:
        found = _local.plugins = (PluginSet(PluginConfig()), WorkerPool(1))
    return found


def extract_rows(root: str, paths: Sequence[str]) -> BatchResult:
    """Extract ``paths`` (relative to ``root``, a directory this worker can read) and return
    each file's cache row with its content key, as plain data. A file that cannot be read, or
    whose extraction a crash, a time-out or a disabled plugin touched, has no row: it is listed
    in ``left`` with the reason, and the driver extracts it itself."""
    started = time.perf_counter()
    plugins, pool = _plugins()
    base = Path(root)
    diags: list[Diagnostic] = []
    entries = entries_for(base, [base / p for p in paths], MAX_FILE_SIZE, diags)
    scratch = TagCache()
    extractor = Extractor(plugins, scratch, jobs=1, pool=pool)
    extractor.prepare(base, entries)
    extractor.run(base, entries)
    rows: list[list[Any]] = []
    left: list[list[str]] = [[d.path or "", d.message] for d in diags]
    for entry in entries:
        key = extractor.key(entry)
        row = scratch.rows.get(key.content)
        if row is None:
            left.append([entry.path, "not extracted soundly on the worker"])
        else:
            rows.append([key.path, key.digest, key.fingerprint, list(row)])
    notes = [d.message for d in extractor.diagnostics]
    return {
        "rows": rows,
        "left": left,
        "notes": notes,
        "worker": f"{os.uname().nodename}:{os.getpid()}",
        "seconds": time.perf_counter() - started,
    }


def release() -> None:
    """Stop this thread's kept extraction worker (a process that runs batches in its own
    threads, as a test does, calls this when done; a cluster worker keeps its own until it
    exits)."""
    found: tuple[PluginSet, WorkerPool] | None = getattr(_local, "plugins", None)
    if found is not None:
        found[1].close()
        del _local.plugins
