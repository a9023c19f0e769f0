"""The memoised map: a digest of everything a map depends on, and the replay of a stored map
when that digest is unchanged (no graph, ranking or rendering work is then done)."""

from __future__ import annotations

import array
import functools
import hashlib
import json
import logging
import math
import operator
import time
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .cache import RACY_NS, CacheKey, TagCache
from .codedigest import made_by
from .isolation.supervisor import UNSETTLED
from .model import Diagnostic, MapResult, RankedFile, made_reason
from .ranked import GRAPH, PAGERANK, ranked_files_made

if TYPE_CHECKING:
    from .extract import Extractor
    from .fileentry import FileEntry
    from .settings import MapSettings
    from .state import RepositoryState

log = logging.getLogger(__name__)

#: Bump when maps change with no change to repomapper's own files (a dependency's behaviour
#: they rely on): the files' digest (map_code) keys every change to the code itself.
MAP_VERSION = "7"
#: the prefix of the repository database's keys of :func:`listing_key`
LISTED = "listed:"


@functools.cache
def map_code() -> str:
    """What a memoised map's key says of the code that made it: a digest of repomapper's
    files (computed once per process), so a map made by other code is never replayed."""
    return f"{MAP_VERSION}-{made_by('map')}"


def _inputs(
    settings: MapSettings,
    state: RepositoryState,
    diags: Sequence[Diagnostic],
    chat: frozenset[str],
) -> bytes:
    """What a map depends on besides its files (see :func:`map_digest`)."""
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
    return json.dumps(inputs, sort_keys=True, default=str).encode()


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
    h.update(_inputs(settings, state, diags, chat))
    hash_files(h, state.root, extractor, entries)
    return h.hexdigest()


# A warm run of a large tree spent most of its time on each file's content key (the digest the
# cache remembers for its stat, its backends), only to find the map it replays. The listing's
# stats stand in for them: the digest of the map last made over the same stats, with the same
# inputs, is remembered in the repository's own database and replayed without any key.
def listing_key(
    settings: MapSettings,
    state: RepositoryState,
    diags: Sequence[Diagnostic],
    chat: frozenset[str],
) -> str:
    """Where the repository's database remembers the map these inputs last gave over a
    listing: the map's inputs besides its files, the root, and what routes each file to its
    backends (so equal keys give every listed path the same backends)."""
    h = hashlib.sha256(_inputs(settings, state, diags, chat))
    h.update(b"\0" + str(state.root).encode("utf-8", "surrogateescape"))
    h.update(b"\0" + state.plugins.routing_key().encode("utf-8", "surrogateescape"))
    return LISTED + h.hexdigest()


def listing_digest(entries: Sequence[FileEntry]) -> str:
    """Each listed file's path, size, mtime and inode change time (a file made unreadable
    keeps its mtime: its map is not replayed): taken a column at a time (a warm run of a large
    tree asks it of every file, and a string per file cost more than the digest)."""
    h = hashlib.sha256(b"%d\0" % len(entries))
    h.update("\0".join(map(_PATH, entries)).encode("utf-8", "surrogateescape"))
    for column in _STAT:
        h.update(array.array("q", map(column, entries)).tobytes())
    return h.hexdigest()


#: FileEntry's fields: the path, then its stat (size, mtime, ctime)
_PATH, *_STAT = (operator.itemgetter(i) for i in range(4))


def listed_map(cache: TagCache, key: str, listing: str) -> str | None:
    """The digest of the map remembered under ``key`` when it was made over this ``listing``
    (:func:`listing_digest`), else None."""
    raw = cache.get_map(key)
    try:
        found = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    if isinstance(found, dict) and found.get("listing") == listing:
        digest = found.get("map")
        return digest if isinstance(digest, str) else None
    return None


def remember_listed(
    cache: TagCache, key: str, listing: str, digest: str, keys: Iterable[CacheKey]
) -> None:
    """Remember that ``listing`` gave the map ``digest``, when every file's stat vouches for
    its content: each was read (it has a digest) and last written well before now (a file
    changed twice within one timestamp tick keeps its stat: see ``RACY_NS``). The listing holds
    each file's ctime too, so a permission change since is not replayed. The caller asks only
    when :func:`listed_map` did not already give ``digest`` (a warm run writes nothing)."""
    settled = time.time_ns() - RACY_NS
    if not all(k.digest and k.mtime_ns < settled for k in keys):
        return
    cache.put_map(key, json.dumps({"listing": listing, "map": digest}), replaces=key)


def hash_files(
    h: hashlib._Hash, root: Path, extractor: Extractor, entries: Sequence[FileEntry]
) -> None:
    """Feed each file's path, content digest and backends to ``h`` (its mtime and size stand in
    for the content of a file that could not be read)."""
    extractor.prepare(root, entries)
    for k in extractor.keys_of(entries):
        content = k.digest or f"unread:{k.mtime_ns}:{k.size}"
        h.update(f"\0{k.path}\0{content}\0{k.fingerprint}".encode("utf-8", "surrogateescape"))


def replay(cache: TagCache, digest: str) -> MapResult | None:
    """The stored map for ``digest``, or None (none stored, or unreadable)."""
    memo = cache.get_shared_map(digest)
    if memo is None:
        return None
    try:
        return stored_map(memo)
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        log.debug("memoised map unreadable: %s", exc)
        return None


def stored_map(text: str) -> MapResult:
    """The map a stored memo holds (what :func:`remember` wrote); ValueError, KeyError,
    TypeError or AttributeError for a text it did not write."""
    return _decoded(json.loads(text))


# A map without a task lists every file of the repository with its one reason: stored as a list
# of objects, that list was most of the time spent storing and replaying a large repository's
# map. It is stored as one column per field, a file's reasons as null when they are that one
# reason.
def _encoded(result: MapResult) -> dict[str, Any]:
    """What is stored of ``result``: :meth:`MapResult.to_dict` with the ranked files as
    columns."""
    stored = replace(result, ranked_files=()).to_dict()
    files = result.ranked_files
    stored["ranked_files"] = {
        "path": [f.path for f in files],
        "score": [f.score for f in files],
        "why": [
            None if _plain(f) else [[r.signal, r.detail, r.weight] for r in f.why] for f in files
        ],
    }
    return stored


def _plain(f: RankedFile) -> bool:
    """Whether ``f``'s reasons are the one reason of a ranking without a task (its weight the
    very score, sign and type included, so that the replay is the same value)."""
    if len(f.why) != 1:
        return False
    r = f.why[0]
    return (
        r.signal == PAGERANK
        and r.detail == GRAPH
        and type(r.weight) is type(f.score)
        and r.weight == f.score
        and math.copysign(1.0, r.weight) == math.copysign(1.0, f.score)
    )


def _decoded(stored: dict[str, Any]) -> MapResult:
    """The inverse of :func:`_encoded`; ValueError or TypeError for what it did not write."""
    columns = stored["ranked_files"]
    paths, scores, whys = columns["path"], columns["score"], columns["why"]
    if not (
        isinstance(paths, list)
        and isinstance(scores, list)
        and isinstance(whys, list)
        and len(paths) == len(scores) == len(whys)
        and all(type(p) is str for p in paths)
        and all(type(x) in (float, int) for x in scores)
    ):
        raise ValueError("ranked files: columns of other types or lengths")
    reasons = [
        None if why is None else tuple(made_reason(a, b, c) for a, b, c in why) for why in whys
    ]
    files = ranked_files_made(paths, scores, reasons)
    return replace(MapResult.from_dict({**stored, "ranked_files": []}), ranked_files=files)


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
    cache.put_shared_map(digest, json.dumps(_encoded(result), ensure_ascii=False))
