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

from ..fileentry import FileEntry
from ..graph import SymbolTable, import_weights, reference_pairs
from ..model import MapResult
from .model import TOP_IDENTS, Definition, Edge, FileNode, RepoGraph

if TYPE_CHECKING:
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


def build_repo_graph(
    rm: RepoMap,
    *,
    task: str | None = None,
    chat_files: Sequence[str] = (),
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    entries: Sequence[FileEntry] | None = None,
) -> RepoGraph:
    """Rank the repository once (:meth:`RepoMap.rank`, what ``map`` ranks), render the map at
    each budget from that ranking, and read the graph's edges from the same extraction and symbol
    table (:func:`repomapper.graph.reference_pairs`: the reference edges of ``RepoMap.graph()``
    without building a networkx graph). ``entries`` is accepted for callers that collected them;
    the ranking collects its own."""
    budgets = tuple(dict.fromkeys(int(b) for b in budgets)) or DEFAULT_BUDGETS
    ranked = rm.rank(chat_files=chat_files, task=task)
    results = [rm.render(ranked, budget) for budget in budgets]
    base = results[0]
    chat = ranked.chat
    mapped, table, imports = ranked.mapped, ranked.table, ranked.imports
    by_path = {rf.path: rf for rf in ranked.files}
    in_maps: dict[str, list[int]] = {}
    for i, result in enumerate(results):
        for path in files_in_map(result, mapped):
            in_maps.setdefault(path, []).append(i)
    files = []
    for path in sorted(mapped):
        fs = mapped[path]
        rf = by_path.get(path)
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
        edges=edges_of(reference_pairs(table, chat), table, imports, frozenset(mapped)),
        budgets=budgets,
        map_tokens=tuple(r.tokens for r in results),
        task=task or None,
        chat_files=tuple(sorted(chat)),
        diagnostics=diagnostics,
    )


def edges_of(
    pairs: Mapping[tuple[str, str], Mapping[str, float]],
    table: SymbolTable,
    imports: Mapping[str, Mapping[str, int]],
    files: frozenset[str],
) -> tuple[Edge, ...]:
    """One :class:`Edge` per ordered pair the graph links (reference pairs as
    :func:`~repomapper.graph.reference_pairs` gives them, import edges between ``files``), its
    reference and import edges merged."""
    external: dict[str, dict[str, int]] = {}  # identifier -> referencing file -> count
    imported: dict[tuple[str, str], int] = {}
    for importer, target, _ in import_weights(imports):
        if importer in files and target in files:
            imported[(importer, target)] = int(imports[importer][target]) or 1
    edges: list[Edge] = []
    for key in sorted(pairs.keys() | imported.keys()):
        idents = pairs.get(key)
        if not idents:
            edges.append(Edge(key[0], key[1], 0, 0, 0.0, imported[key], ()))
            continue
        src = key[0]
        count = 0
        for ident in idents:
            by_file = external.get(ident)
            if by_file is None:
                by_file = external[ident] = table.external_refs(ident)
            count += by_file.get(src, 0)
        if len(idents) == 1:
            (best,) = idents
            top: tuple[str, ...] = (best,)
            weight = idents[best]
        else:
            top = tuple(
                n for n, _ in sorted(idents.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_IDENTS]
            )
            weight = sum(idents[i] for i in sorted(idents))
        edges.append(
            Edge(src, key[1], count, len(idents), float(weight), imported.get(key, 0), top)
        )
    return tuple(edges)
