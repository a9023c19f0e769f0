"""The memoised map: a digest of everything a map depends on, and the replay of a stored map
when that digest is unchanged (no graph, ranking or rendering work is then done)."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .codedigest import made_by
from .isolation.supervisor import UNSETTLED
from .model import Diagnostic, MapResult

if TYPE_CHECKING:
    from .cache import TagCache
    from .discover import FileEntry
    from .extract import Extractor
    from .settings import MapSettings
    from .state import RepositoryState

log = logging.getLogger(__name__)

#: Bump when maps change with no change to repomapper's own files (a dependency's behaviour
#: they rely on): the files' digest (map_code) keys every change to the code itself.
MAP_VERSION = "7"


@functools.cache
def map_code() -> str:
    """What a memoised map's key says of the code that made it: a digest of repomapper's
    files (computed once per process), so a map made by other code is never replayed."""
    return f"{MAP_VERSION}-{made_by('map')}"


def map_digest(
    settings: MapSettings,
    state: RepositoryState,
    extractor: Extractor,
    entries: Sequence[FileEntry],
    diags: Sequence[Diagnostic],
    chat: frozenset[str],
) -> str:
    """Everything a map depends on: the settings, the state's options that shape a map, the
    diagnostics so far, and each file's path, content digest and backends. Nothing outside the
    repository is in it (not its location, not mtimes), so a clone of the same tree replays the
    same map."""
    h = hashlib.sha256()
    selection = settings.selection
    inputs = {
        "version": map_code(),
        "budget": settings.budget,
        "mul": settings.map_mul_no_files,
        "prefix": settings.prefix,
        "counter": state.counter.name,
        "include": selection.include,
        "exclude": selection.exclude,
        "max_file_size": state.max_file_size,
        "chat": sorted(chat),
        "mentioned_fnames": sorted(set(settings.mentioned_files)),
        "mentioned_idents": sorted(set(settings.mentioned_idents)),
        "task": settings.task or "",
        "diagnostics": [d.to_dict() for d in diags],
        # the plugins left out are said by the map (ranking adds their diagnostics after this
        # digest is taken): a map stored before a broken plugin was installed, or after it was
        # fixed, must not be replayed without the word, or with a stale one
        "plugins_left_out": [d.to_dict() for d in state.plugins.load_diagnostics()],
    }
    h.update(json.dumps(inputs, sort_keys=True, default=str).encode())
    hash_files(h, state.root, extractor, entries)
    return h.hexdigest()


def hash_files(
    h: hashlib._Hash, root: Path, extractor: Extractor, entries: Sequence[FileEntry]
) -> None:
    """Feed each file's path, content digest and backends to ``h`` (its mtime and size stand in
    for the content of a file that could not be read)."""
    extractor.prepare(root, entries)
    for e in entries:
        k = extractor.key(e)
        content = k.digest or f"unread:{k.mtime_ns}:{k.size}"
        h.update(f"\0{k.path}\0{content}\0{k.fingerprint}".encode("utf-8", "surrogateescape"))


def replay(cache: TagCache, digest: str) -> MapResult | None:
    """The stored map for ``digest``, or None (none stored, or unreadable)."""
    memo = cache.get_shared_map(digest)
    if memo is None:
        return None
    try:
        return MapResult.from_dict(json.loads(memo))
    except (ValueError, KeyError, TypeError) as exc:
        log.debug("memoised map unreadable: %s", exc)
        return None


#: A map reporting one of these is not stored: the next run may not have the problem.
NOT_REMEMBERED = frozenset({"cache_unavailable", "cache_rebuilt", *UNSETTLED})


def replayable(result: MapResult) -> bool:
    """Whether ``result`` may answer the same inputs again: not when it reports a cache problem
    or an unsettled extraction (a plugin crash, a time-out, a disabled plugin)."""
    return not any(d.code in NOT_REMEMBERED for d in result.diagnostics)


def remember(cache: TagCache, digest: str, result: MapResult, root: Path | None = None) -> None:
    """Store ``result`` under ``digest``, unless it is not :func:`replayable`, or names
    ``root``: the digest leaves the repository's location out, so a clone elsewhere replays
    what is stored."""
    if not replayable(result):
        return
    if root is not None and any(str(root) in d.message for d in result.diagnostics):
        return
    stored = result.to_dict()
    cache.put_shared_map(digest, json.dumps(stored, ensure_ascii=False))
