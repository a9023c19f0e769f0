"""See the repository: the ranked file graph as DOT, GraphML, node-link JSON or an explorer page.

``repomapper graph`` and :func:`render_graph` read the same extracted repository, graph and
ranking as ``repomapper map`` (:mod:`.build`), shape it for the output (:mod:`.export`: every
file, the top-ranked files, or directory groups) and write it (:mod:`.export`, :mod:`.page`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..isolation.supervisor import UNSETTLED
from . import memo
from .build import DEFAULT_BUDGETS, build_repo_graph
from .export import DEFAULT_MAX_NODES, FORMATS, GROUP_BY, render_export, shape
from .model import Definition, Edge, FileNode, RepoGraph
from .page import GraphLibraryMissing, render_page

if TYPE_CHECKING:
    from ..repomap import RepoMap

__all__ = [
    "DEFAULT_BUDGETS",
    "DEFAULT_MAX_NODES",
    "FORMATS",
    "GROUP_BY",
    "Definition",
    "Edge",
    "FileNode",
    "GraphLibraryMissing",
    "GraphOutput",
    "RepoGraph",
    "build_repo_graph",
    "render_graph",
    "write_graph",
]


@dataclass(frozen=True, slots=True)
class GraphOutput:
    text: str
    #: what the user must be told (on stderr): the output was grouped or cut, and why
    note: str | None
    files: int
    edges: int
    #: the map's warnings and errors, one line each
    diagnostics: tuple[str, ...] = ()
    #: the view model (None when the output was replayed from the cache)
    graph: RepoGraph | None = None
    replayed: bool = False


def render_graph(
    rg: RepoGraph, fmt: str = "html", *, group_by: str = "file", max_nodes: int = DEFAULT_MAX_NODES
) -> tuple[str, str | None]:
    """(text, note) of ``rg`` in ``fmt``."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {FORMATS} (got {fmt!r})")
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY} (got {group_by!r})")
    if fmt == "html":
        return render_page(rg, group_by, max_nodes)
    shaped = shape(rg, group_by, max_nodes)
    return render_export(shaped, fmt), shaped.note


def write_graph(
    rm: RepoMap,
    fmt: str = "html",
    *,
    task: str | None = None,
    chat_files: Sequence[str] = (),
    budgets: Sequence[int] = DEFAULT_BUDGETS,
    group_by: str = "file",
    max_nodes: int = DEFAULT_MAX_NODES,
) -> GraphOutput:
    """Rank and link the repository of ``rm`` and render it in ``fmt``; replayed from the cache
    when nothing it depends on changed (see :mod:`.memo`)."""
    if fmt == "html":
        from .page import graph_library

        graph_library()  # fail before the work when the library is missing
    budgets = tuple(budgets) or DEFAULT_BUDGETS
    args = {
        "task": task or "",
        "budgets": list(budgets),
        "group_by": group_by,
        "max_nodes": max_nodes,
    }
    key, entries = memo.memo_key(rm, fmt, args, chat_files) if rm.use_cache else (None, None)
    if key is not None:
        found = memo.replay(rm, key)
        if found is not None:
            return GraphOutput(
                found["text"],
                found.get("note"),
                int(found.get("files", 0)),
                int(found.get("edges", 0)),
                tuple(found.get("diagnostics", ())),
                None,
                True,
            )
    rg = build_repo_graph(rm, task=task, chat_files=chat_files, budgets=budgets, entries=entries)
    text, note = render_graph(rg, fmt, group_by=group_by, max_nodes=max_nodes)
    out = GraphOutput(text, note, len(rg.files), len(rg.edges), rg.diagnostics, rg)
    # a graph touched by a plugin crash or time-out is not memoised: the next run tries again
    unsettled = any(f"[{code}]" in d for code in UNSETTLED for d in rg.diagnostics)
    if key is not None and rg.files and not unsettled:
        memo.remember(
            rm,
            key,
            {
                "text": text,
                "note": note,
                "files": out.files,
                "edges": out.edges,
                "diagnostics": list(out.diagnostics),
            },
        )
    return out
