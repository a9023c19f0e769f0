"""The graph states of a repository (symbol table, import edges, factored graph, PageRank), one
per selection of files, each brought up to date per changed file; and the stored state a new
process starts from (see :mod:`repomapper.snapshot`)."""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Callable, Hashable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

from .. import snapshot
from ..cache import CacheKey, TagCache
from ..graph import TargetResolver
from ..graphstate import GraphState, ImportMemo, ImportResolver, StateInputs, update_state
from ..index import RepoIndex
from ..model import FileSymbols

if TYPE_CHECKING:
    from ..extract import Extractor
    from ..fileentry import FileEntry

log = logging.getLogger(__name__)

#: graph states kept per repository (one per selection of files a caller asked for)
MAX_GRAPHS = 4


class GraphStates:
    """The graph state of each selection, most recently used last."""

    def __init__(
        self,
        root: Path,
        cache: Callable[[], TagCache],
        use_cache: bool,
        resolve_imports: ImportResolver,
        target_resolver: Callable[[RepoIndex], TargetResolver],
    ):
        self.root = root
        self._cache = cache
        self._use_cache = use_cache
        self._resolve_imports = resolve_imports
        self._target_resolver = target_resolver
        self._states: OrderedDict[Hashable, GraphState] = OrderedDict()
        #: set by ``force_refresh``: the next state is built, not loaded from the stored one
        self.rebuild = False
        #: a built state not stored yet (an owner that stores later): stored by :meth:`save`
        #: a built state not stored yet: its keys, context and every file's summary
        self._unsaved: (
            tuple[
                GraphState,
                dict[str, CacheKey],
                frozenset[CacheKey],
                Mapping[str, FileSymbols] | None,
            ]
            | None
        ) = None

    def get(self, selection: Hashable) -> GraphState | None:
        return self._states.get(selection)

    def put(self, selection: Hashable, state: GraphState) -> None:
        self._states[selection] = state
        self._states.move_to_end(selection)
        while len(self._states) > MAX_GRAPHS:
            self._states.popitem(last=False)

    def drop(self, selection: Hashable) -> None:
        self._states.pop(selection, None)

    @property
    def any(self) -> bool:
        return bool(self._states)

    def inputs(
        self,
        chat: frozenset[str],
        mentioned_files: frozenset[str],
        mentioned_idents: frozenset[str],
        context: object = None,
        memo: ImportMemo | None = None,
        asked: frozenset[str] = frozenset(),
    ) -> StateInputs:
        return StateInputs(
            self.root,
            self._resolve_imports,
            self._target_resolver,
            chat,
            mentioned_files,
            mentioned_idents,
            context,
            memo,
            asked,
        )

    def current(
        self,
        selection: Hashable,
        mapped: Mapping[str, FileSymbols],
        inputs: StateInputs,
        keys: Mapping[str, CacheKey],
        stored: snapshot.Stored | None,
        keep: bool,
        later: bool,
        summaries: Mapping[str, FileSymbols] | None = None,
    ) -> tuple[GraphState, bool]:
        """The selection's state over ``mapped``: its kept state updated, or the stored state
        loaded and updated (on a selection's first call), or built (and stored when ``keep``:
        the extraction was settled; ``summaries``: every file's, which it stores the heads of
        the files that are not mapped from). Returns the state and whether it came from the
        stored one."""
        state = self._states.get(selection)
        if state is None and stored is not None and isinstance(inputs.context, frozenset):
            state = self._loaded(stored, mapped, inputs, keys, inputs.context)
        loaded = state is not None and state.how == "stored"
        state = update_state(state, mapped, inputs)
        self.put(selection, state)
        self.rebuild = False
        context = inputs.context
        if state.how == "built" and keep and self._use_cache and isinstance(context, frozenset):
            if later:
                self._unsaved = (state, dict(keys), context, summaries)
            else:
                self._store(state, keys, context, summaries)
        return state, loaded and state.how != "built"

    def peek(
        self,
        selection: Hashable,
        extractor: Extractor,
        entries: list[FileEntry],
    ) -> snapshot.Stored | None:
        """The repository's stored state when this selection has none in memory and the stored
        one can be updated to these files: the same files with the same backends, at most
        ``snapshot.max_changed`` of them changed, the files that are not mapped unchanged. Read
        before extraction: a call that will update it reads only the summaries it needs."""
        if selection in self._states or not self._use_cache or self.rebuild:
            return None
        cache = self._cache()
        found = cache.read_state()
        if found is None:
            return None
        with found:
            identity = _identity(found)
            stored = snapshot.decode(found, own=True)
        if stored is None:
            return None
        keys = extractor.keyed(entries)
        mapped = set(stored.files)
        if frozenset(k.content for p, k in keys.items() if p not in mapped) != stored.context:
            return None
        changed = snapshot.changed_files(stored, keys)
        if changed is None or len(changed) > snapshot.max_changed(len(stored.files)):
            return None
        if changed and identity is not None:
            drift = cache.add_state_drift(identity, len(changed))
            if drift > snapshot.drift_limit(len(stored.files)):
                log.info(
                    "the stored ranking state is built again: the calls since it was stored "
                    "updated %d file(s) of its %d",
                    drift,
                    len(stored.files),
                )
                cache.reset_state_drift()
                return None
        return stored

    def _loaded(
        self,
        stored: snapshot.Stored,
        mapped: Mapping[str, FileSymbols],
        inputs: StateInputs,
        keys: Mapping[str, CacheKey],
        context: frozenset[CacheKey],
    ) -> GraphState | None:
        """The stored state over these files, with the files changed since it was stored
        entering by their old summaries (read from the cache by their old content keys); None
        when it cannot be used."""
        if len(mapped) != len(stored.files) or not all(map(mapped.__contains__, stored.files)):
            return None
        changed = snapshot.changed_files(stored, keys)
        if changed is None or len(changed) > snapshot.max_changed(len(stored.files)):
            return None
        wanted = []
        for path in changed:
            _, digest, fingerprint = stored.content(stored.position[path])
            wanted.append(CacheKey(path, 0, 0, fingerprint, digest))
        old = self._cache().lookup(wanted) if wanted else {}
        if len(old) != len(changed):
            return None
        return snapshot.load(stored, mapped, old, inputs, context)  # type: ignore[arg-type]

    def save(self) -> None:
        """Store the state kept for later (see ``later`` in :meth:`current`)."""
        if self._unsaved is not None:
            state, keys, context, summaries = self._unsaved
            self._unsaved = None
            self._store(state, keys, context, summaries)

    def _store(
        self,
        state: GraphState,
        keys: Mapping[str, CacheKey],
        context: frozenset[CacheKey],
        summaries: Mapping[str, FileSymbols] | None = None,
    ) -> None:
        if any(not keys[p].digest for p in state.files):
            return  # a file whose content could not be read: no content key to check it by
        if state.asked:
            return  # ranked for its include globs, which the stored state does not record
        cache = self._cache()
        try:
            cache.write_state(
                lambda out: snapshot.write(out, state, keys, context, summaries),
                cache.generation,
            )
        except ValueError as exc:  # a name the format cannot hold: later processes rebuild
            log.debug("ranking state not stored: %s", exc)


def _identity(found: BinaryIO) -> str | None:
    """The stored state file's identity (written whole under a new name and renamed: a new
    inode and mtime each time); None for a state held in memory."""
    try:
        st = os.fstat(found.fileno())
    except (OSError, ValueError):  # (io.UnsupportedOperation is both)
        return None
    return f"{st.st_dev}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}"
