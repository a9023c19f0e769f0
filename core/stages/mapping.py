"""The map of the repository for a call's settings: replayed from the cache when nothing it
depends on changed, else ranked (:mod:`.ranking`) and rendered (:mod:`.rendering`)."""

from __future__ import annotations

from collections.abc import Callable

from ..memo import (
    listed_map,
    listing_digest,
    listing_key,
    map_digest,
    remember_listed,
    replay,
    replayable,
)
from ..model import Diagnostic, MapResult
from ..settings import MapSettings
from ..state import RepositoryState
from ..state.repository import Prepared
from .ranking import rank_prepared
from .rendering import render

#: finished maps an owner that stores later keeps before it lets the oldest go unstored
MAX_UNSAVED = 8


def map_repository(settings: MapSettings, state: RepositoryState) -> MapResult:
    """Rank and render the map within the budget; a map whose inputs are unchanged is replayed
    from the cache, unless ``settings.force_refresh`` (then the new one is stored)."""
    diags: list[Diagnostic] = []
    state.timer.reset()
    with state.timer.stage("discover"):
        files = state.prepare(settings.selection, settings.chat_files, diags, keyed=False)
    replays = state.use_cache and not settings.force_refresh
    with state.timer.stage("memo"):
        listed = _listed(settings, state, files, diags) if replays else None
        memo = _replayed(state, listed[2]) if listed is not None and listed[2] else None
        if memo is not None:
            return _memoised(state, files, memo)
    with state.timer.stage("discover"):
        files.extractor.prepare(state.root, files.all_entries)
    with state.timer.stage("memo"):
        digest = map_digest(settings, state, files.extractor, files.all_entries, diags, files.chat)
        memo = _replayed(state, digest) if replays else None
        if memo is not None:
            _remember_listed(state, files, listed, digest)
            return _memoised(state, files, memo)
    if settings.force_refresh:
        state.graphs.drop(settings.selection)
        state.graphs.rebuild = True
    stored, summaries = state.summarised(
        files,
        settings.selection,
        lambda stored: _tokenizer_preload(
            state, stored is not None and not stored.near_top(files.extractor.content_changed)
        ),
    )
    with state.timer.stage("rank"):
        ranked = rank_prepared(settings, state, files, summaries, diags, stored)
    with state.timer.stage("render"):
        result = render(settings, state, ranked)
    state.timer.counts = dict(state.last_stats)
    if state.use_cache and replayable(result):
        state.unsaved_maps[digest] = result
        state.keep_answer(digest, result)
        if state.memo_later:
            state.let_go_unsaved(keep=MAX_UNSAVED)
        else:
            state.store_maps()
        _remember_listed(state, files, listed, digest)
    return result


def _listed(
    settings: MapSettings, state: RepositoryState, files: Prepared, diags: list[Diagnostic]
) -> tuple[str, str, str | None]:
    """Where the map of this listing is remembered, the listing's digest, and the digest of
    the map remembered there for it (None: none for this listing)."""
    key = listing_key(settings, state, diags, files.chat)
    listing = listing_digest(files.all_entries)
    return key, listing, listed_map(state.cache, key, listing)


def _remember_listed(
    state: RepositoryState,
    files: Prepared,
    listed: tuple[str, str, str | None] | None,
    digest: str,
) -> None:
    """Remember that this listing gave the map ``digest`` (not by an owner that stores later:
    it keeps its keys between calls, and writes nothing while it answers)."""
    if listed is not None and listed[2] != digest and not state.memo_later:
        keys = files.extractor.keys_of(files.all_entries)
        remember_listed(state.cache, listed[0], listed[1], digest, keys)


def _memoised(state: RepositoryState, files: Prepared, memo: MapResult) -> MapResult:
    state.last_stats = {"cached": len(files.all_entries), "extracted": 0, "memoised": 1}
    state.timer.counts = dict(state.last_stats)
    return memo


def _replayed(state: RepositoryState, digest: str) -> MapResult | None:
    found = state.answered(digest)
    if found is None:
        found = replay(state.cache, digest)
        if found is not None:
            state.keep_answer(digest, found)
    return found


def _tokenizer_preload(state: RepositoryState, quiet: bool) -> Callable[[int], None] | None:
    """Told how many files are to be extracted: the tokenizer then loads on a thread while the
    call ranks (and before the summaries arrive: the memory its loading frees is reused by
    them, a lower peak). Not when counts are remembered and no file the stored ranking puts near
    the top changed since the cache last saw it: the map's sections are then likely the ones
    counted before, and no tokenizer is needed at all."""
    preload = getattr(state.counter, "preload", None)
    if preload is None or (state.use_cache and quiet):
        return None

    def misses(n: int) -> None:
        if n:
            preload()

    return misses
