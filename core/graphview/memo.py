"""Replay a graph output when nothing it depends on has changed, as ``RepoMap.map`` replays a map.

The key covers every input: the files (path, content digest and the backends that answer for
each, as the tag cache keys them), the chat files as given and their state, every argument, and the
versions of repomapper, its extraction and ranking, this package's page assets and the graph
library. The value is stored with the memoised maps in the tag cache (plain JSON, never pickle).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__

if TYPE_CHECKING:
    from ..fileentry import FileEntry
    from ..repomap import RepoMap

log = logging.getLogger(__name__)

PREFIX = "graph:"


def _stat(root: Path, name: str) -> list[int] | None:
    p = Path(name)
    p = p if p.is_absolute() else root / p
    try:
        st = os.stat(p)
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size]


def memo_key(
    rm: RepoMap, fmt: str, args: dict[str, Any], chat_files: Sequence[str]
) -> tuple[str, list[FileEntry]]:
    """(the key, the files discovered for it: the caller builds from these when it must)."""
    from importlib import resources

    from ..memo import hash_files, map_code

    h = hashlib.sha256()
    assets = resources.files(__package__).joinpath("assets")
    for name in ("page.html", "page.js", "page.css"):
        h.update(assets.joinpath(name).read_bytes())
    library = None
    if fmt == "html":
        from .page import graph_library

        library = graph_library()[0]
    inputs = {
        "code": map_code(),  # repomapper's files: the view model, the writers, the ranking
        "repomapper": __version__,
        "library": library,
        "format": fmt,
        **args,
        "counter": rm.counter.name,
        "include": list(rm.include),
        "exclude": list(rm.exclude),
        "max_file_size": rm.max_file_size,
        "mul": rm.map_mul_no_files,
        "prefix": rm.repo_content_prefix,
        "chat": [[str(c), _stat(rm.root, str(c))] for c in chat_files],
    }
    h.update(json.dumps(inputs, sort_keys=True, default=str).encode())
    entries, diags, _ = rm.collect(None)
    hash_files(h, rm.root, rm.state.extractor(), entries)
    for d in diags:
        h.update(json.dumps(d.to_dict(), sort_keys=True).encode("utf-8", "surrogateescape"))
    return PREFIX + h.hexdigest(), entries


def replay(rm: RepoMap, key: str) -> dict[str, Any] | None:
    if not rm.use_cache:
        return None
    try:
        raw = rm.cache.get_map(key)
        if raw is None:
            return None
        value = json.loads(raw)
        if isinstance(value, dict) and isinstance(value.get("text"), str):
            return value
    except (ValueError, TypeError) as exc:
        log.debug("memoised graph unreadable: %s", exc)
    return None


def remember(rm: RepoMap, key: str, value: dict[str, Any]) -> None:
    if rm.use_cache and not any(d.code == "cache_unavailable" for d in rm.cache.diagnostics):
        rm.cache.put_map(key, json.dumps(value, ensure_ascii=False))
