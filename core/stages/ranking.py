"""Rank the repository for a call's settings: every mapped file and its symbols, with scores
and evidence (a :class:`~repomapper.ranked.RankedRepository`).

Without a task this is Aider's ranking (PageRank personalized by chat files, mentioned files and
identifiers). With one, the relevance model (:mod:`repomapper.relevance`) ranks for its text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from .. import snapshot
from ..graphstate import GraphState
from ..importmemo import CachedImports
from ..installable import installable_diagnostics
from ..model import Diagnostic, FileSymbols, RankedFile
from ..rank import asked_by_include, pagerank
from ..ranked import PageRankedFiles, RankedRepository
from ..settings import MapSettings, Selection
from ..state import Prepared, RepositoryState
from ..summaryview import all_diagnostics, mapped_files

if TYPE_CHECKING:
    from ..relevance.model import rank_task
    from ..relevance.query import TaskQuery
else:

    def rank_task(*args: Any, **kwargs: Any) -> Any:
        """The relevance model's :func:`~repomapper.relevance.model.rank_task`, loaded with the
        first task: a call without one (every warm replay) never pays for importing the model.
        The type checker sees the model's own signature (above)."""
        from ..relevance.model import rank_task as model_rank_task

        return model_rank_task(*args, **kwargs)


def rank(settings: MapSettings, state: RepositoryState) -> RankedRepository:
    """Bring ``state`` up to date for ``settings`` and rank it."""
    diags: list[Diagnostic] = []
    state.timer.reset()
    with state.timer.stage("discover"):
        files = state.prepare(settings.selection, settings.chat_files, diags)
    stored, summaries = state.summarised(files, settings.selection)
    with state.timer.stage("rank"):
        return rank_prepared(settings, state, files, summaries, diags, stored)


def rank_prepared(
    settings: MapSettings,
    state: RepositoryState,
    files: Prepared,
    summaries: Mapping[str, FileSymbols],
    diags: list[Diagnostic],
    stored: snapshot.Stored | None = None,
) -> RankedRepository:
    """Rank files already prepared and summarised: the graph state brought up to date, then
    the task-free ranking, or the relevance model's for the task."""
    diags.extend(state.cache.diagnostics)
    diags.extend(files.extractor.diagnostics or state.plugins.load_diagnostics())
    diags.extend(all_diagnostics(summaries))
    diags.extend(installable_diagnostics(summaries, state.plugins.infos))
    mapped = mapped_files(summaries)
    mentioned = _mentioned_files(settings, state, diags)
    graph = graph_state(
        state,
        files,
        mapped,
        mentioned,
        frozenset(settings.mentioned_idents),
        settings.selection,
        stored,
        asked_by_include(settings.selection.include, mapped),
        summaries,
    )
    query = _task_query(settings.task, diags)
    task_free = RankedRepository(
        files=ranked_files(graph),
        definitions=graph.ranking.definitions,
        by_file=graph.by_file,
        symbol_scores={},
        symbol_reasons={},
        named=frozenset(),
        chat=files.chat,
        mapped=mapped,
        table=graph.table,
        entries=files.entries,
        all_entries=files.all_entries,
        seen=files.seen,
        diagnostics=tuple(diags),
        task=False,
        imports=graph.imports,
    )
    if query is None:
        return task_free
    lexical = state.lexical_index(files.extractor, files.all_entries, mapped)
    task_ranking = rank_task(
        query,
        mapped,
        graph.table,
        lexical,
        walk=lambda pers: pagerank(graph.graph, pers),
        prior=graph.prior,
        chat=files.chat,
        mentioned_files=mentioned,
        disabled=settings.disabled_signals,
    )
    return replace(
        task_free,
        files=tuple(
            RankedFile(f, s, task_ranking.reasons.get(f, ())) for f, s in task_ranking.files
        ),
        symbol_scores=task_ranking.symbols,
        symbol_reasons=task_ranking.symbol_reasons,
        named=task_ranking.named,
        task=True,
    )


def ranked_files(graph: GraphState) -> PageRankedFiles:
    """The task-free ranking's files, best first: made once per ranking and kept by the
    state's rankings (an edit inside a body keeps them); an edit that adds or removes a name
    nothing references leaves every file's rank as it was, and the files made for the state
    before serve again."""
    rankings = graph.rankings
    found = rankings.files
    if not isinstance(found, PageRankedFiles):
        ranks = graph.ranking.file_ranks
        before = rankings.files_before()
        found = (
            before
            if isinstance(before, PageRankedFiles) and before.ranks == ranks
            else PageRankedFiles(ranks)
        )
        rankings.files = found
    return found


def _mentioned_files(
    settings: MapSettings, state: RepositoryState, diags: list[Diagnostic]
) -> frozenset[str]:
    """The mentioned files as root-relative paths; one outside the root is a diagnostic."""
    found = set()
    for f in settings.mentioned_files:
        rel = state.relative(f)
        if rel is None:
            diags.append(
                Diagnostic(
                    "outside_root",
                    f"mentioned file is not inside the repository {state.root}; ignored",
                    str(f),
                )
            )
        else:
            found.add(rel)
    return frozenset(found)


def graph_state(
    state: RepositoryState,
    files: Prepared,
    mapped: Mapping[str, FileSymbols],
    mentioned_files: frozenset[str],
    mentioned_idents: frozenset[str],
    selection: Selection,
    stored: snapshot.Stored | None,
    asked: frozenset[str] = frozenset(),
    summaries: Mapping[str, FileSymbols] | None = None,
) -> GraphState:
    """The selection's graph state for these boosts, loaded, updated or built; ``asked``: the
    files the include globs ask for whatever their role (see :func:`~repomapper.rank.role_weights`);
    ``summaries``: every file's (a stored state keeps what those not mapped say)."""
    # what resolution may read besides the mapped files (tsconfig.json, go.mod, ...): the
    # versions of every other file, so that a change to one builds the state again
    keys = files.extractor.keyed(files.all_entries)
    context = frozenset(k for p, k in keys.items() if p not in mapped)
    memo = CachedImports(state.cache, mapped, context, files.extractor)
    inputs = state.graphs.inputs(
        files.chat, mentioned_files, mentioned_idents, context, memo, asked
    )
    with state.timer.stage("graph"):
        graph, loaded = state.graphs.current(
            selection,
            mapped,
            inputs,
            keys,
            stored=stored,
            keep=state.summaries.settled,
            later=state.memo_later,
            summaries=summaries,
        )
    if loaded:
        state.last_stats = {**state.last_stats, "stored_state": 1}
    return graph


def _task_query(task: str | None, diags: list[Diagnostic]) -> TaskQuery | None:
    """The parsed task, or None when there is none or it has no words to search for (each
    said in a diagnostic)."""
    if not task:
        return None
    from ..relevance.query import MAX_TASK_CHARS, parse_task

    query = parse_task(task)
    if query.truncated:
        diags.append(
            Diagnostic(
                "task_truncated",
                f"the task text is longer than {MAX_TASK_CHARS} characters; the rest was not read",
                severity="info",
            )
        )
    if query.empty:
        diags.append(
            Diagnostic(
                "task_without_terms",
                "the task text has no words to search for; ranked as without a task",
                severity="info",
            )
        )
        return None
    return query
