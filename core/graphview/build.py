"""Build the :class:`~repomapper.graphview.model.RepoGraph` of a repository.

It reads what ``repomapper map`` reads: the ranking comes from :meth:`RepoMap.map` (one call per
budget; the ranking does not depend on the budget, the files the map includes do), the graph is
:func:`repomapper.graph.build_graph` over the same extraction, exactly what :meth:`RepoMap.graph`
returns (a test holds the two together). Nothing is ranked or linked a second way here: this
module only reads the graph's edges and the ranking's per-file results.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..discover import FileEntry
from ..graph import IMPORTS_KEY, REFS_KEY, SymbolTable, build_graph
from ..index import RepoIndex
from ..model import MapResult
from .model import TOP_IDENTS, Definition, Edge, FileNode, RepoGraph

if TYPE_CHECKING:
    import networkx as nx

    from ..repomap import RepoMap

log = logging.getLogger(__name__)

DEFAULT_BUDGETS = (1024,)


def files_in_map(result: MapResult, known: Iterable[str]) -> set[str]:
    """The files a map's text shows: a file's header line (``path:``) or a bare path line.

    Matching against the repository's own paths (never guessing from the text alone) keeps a
    source line that happens to end in a colon from counting as a file.
    """
    known = set(known)
    found: set[str] = set()
    for line in result.map.splitlines():
        if line.endswith(":") and line[:-1] in known:
            found.add(line[:-1])
        elif line in known:
            found.add(line)
    return found


def why_of(ranked: Any) -> tuple[dict[str, Any], ...]:
    """The ranking's evidence for a file, read generically: ``to_dict()["why"]`` where present."""
    try:
        why = ranked.to_dict().get("why") or ()
    except (AttributeError, TypeError):
        return ()
    out = []
    for item in why:
        if isinstance(item, Mapping):
            out.append(
                {
                    "signal": str(item.get("signal", "")),
                    "detail": str(item.get("detail", "")),
                    "weight": _num(item.get("weight", 0.0)),
                }
            )
    return tuple(out)


def _num(x: Any) -> float:
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def repository_graph(
    rm: RepoMap, chat: frozenset[str] = frozenset(), entries: Sequence[FileEntry] | None = None
):
    """(the explicit graph, the symbol table, the import edges, the extraction): the graph is
    exactly :meth:`RepoMap.graph`'s; the rest is what it was built from, kept for the view.
    ``entries`` are ``rm.collect(None)``'s when the caller has them already."""
    if entries is None:
        entries, _, _ = rm.collect(None)
    mapped = {p: fs for p, fs in rm.extract(entries).items() if fs.plugin is not None}
    table = SymbolTable.build(mapped, RepoIndex(rm.root, mapped))
    imports = rm.resolve_imports(mapped)
    graph = build_graph(mapped, table, imports, frozenset(chat) & frozenset(mapped), frozenset())
    return graph, table, imports, mapped


def build_repo_graph(
    rm: RepoMap,
    *,
    task: str | None = None,
    chat_files: Sequence[str] = (),
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    entries: Sequence[FileEntry] | None = None,
) -> RepoGraph:
    """Rank (through ``rm.map``) and link the repository, and join the two per file.
    ``entries`` are ``rm.collect(None)``'s when the caller has them already."""
    budgets = tuple(dict.fromkeys(int(b) for b in budgets)) or DEFAULT_BUDGETS
    results: list[MapResult] = []
    saved = rm.map_tokens
    try:
        for budget in budgets:
            rm.map_tokens = budget
            results.append(rm.map(chat_files=chat_files, task=task))
    finally:
        rm.map_tokens = saved
    base = results[0]
    chat = frozenset(base.chat_files)
    graph, table, imports, mapped = repository_graph(rm, chat, entries)
    ranked = {rf.path: rf for rf in base.ranked_files}
    in_maps: dict[str, list[int]] = {}
    for i, result in enumerate(results):
        for path in files_in_map(result, mapped):
            in_maps.setdefault(path, []).append(i)
    files = []
    for path in sorted(mapped):
        fs = mapped[path]
        rf = ranked.get(path)
        defs = sorted(fs.definitions, key=lambda t: (t.start_line, t.name, t.scope))
        files.append(
            FileNode(
                path=path,
                rank=float(rf.score) if rf is not None else 0.0,
                language=fs.language or "",
                backend=fs.plugin or "",
                definitions=tuple(
                    Definition(t.name, str(t.symbol_kind), t.start_line, t.scope) for t in defs
                ),
                in_maps=tuple(in_maps.get(path, ())),
                why=why_of(rf) if rf is not None else (),
                chat=path in chat,
            )
        )
    diagnostics = tuple(
        f"{d.severity}: [{d.code}] {d.path + ': ' if d.path else ''}{d.message}"
        for d in base.diagnostics
        if d.severity != "info"
    )
    return RepoGraph(
        root_name=rm.root.name or str(rm.root),
        files=tuple(files),
        edges=edges_of(graph, table, imports),
        budgets=budgets,
        map_tokens=tuple(r.tokens for r in results),
        task=task or None,
        chat_files=tuple(sorted(chat)),
        diagnostics=diagnostics,
    )


def edges_of(
    graph: nx.MultiDiGraph, table: SymbolTable, imports: Mapping[str, Mapping[str, int]]
) -> tuple[Edge, ...]:
    """One :class:`Edge` per ordered pair the graph links, its reference and import edges merged."""
    refs: dict[tuple[str, str], tuple[int, int, float, tuple[str, ...]]] = {}
    imported: dict[tuple[str, str], int] = {}
    external: dict[str, dict[str, int]] = {}  # identifier -> referencing file -> count
    for src, dst, key, data in graph.edges(keys=True, data=True):
        if key == REFS_KEY:
            idents: Mapping[str, float] = data.get("idents", {})
            count = 0
            for ident in idents:
                by_file = external.get(ident)
                if by_file is None:
                    by_file = external[ident] = table.external_refs(ident)
                count += by_file.get(src, 0)
            if len(idents) == 1:
                best: tuple[str, ...] = tuple(idents)
            else:
                ordered = sorted(idents.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_IDENTS]
                best = tuple(name for name, _ in ordered)
            refs[(src, dst)] = (count, len(idents), float(data.get("weight", 0.0)), best)
        elif key == IMPORTS_KEY:
            imported[(src, dst)] = int(imports.get(src, {}).get(dst, 0)) or 1
    none = (0, 0, 0.0, ())
    return tuple(
        Edge(
            src,
            dst,
            *refs.get((src, dst), none)[:3],
            imported.get((src, dst), 0),
            refs.get((src, dst), none)[3],
        )
        for src, dst in sorted(refs.keys() | imported.keys())
    )
