"""The view model of a repository graph: files (or directory groups) and the edges between them.

Built once from the same extracted repository, graph and ranking as ``repomapper map`` (see
:mod:`repomapper.graphview.build`); every writer (DOT, GraphML, node-link JSON, the HTML page)
reads only this.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: How many identifiers an edge names (its strongest, by the graph's weight).
TOP_IDENTS = 5


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    kind: str
    line: int
    scope: str = ""


@dataclass(frozen=True, slots=True)
class FileNode:
    """One mapped file with its rank and what the map at each budget does with it."""

    path: str
    rank: float
    language: str
    backend: str
    definitions: tuple[Definition, ...] = ()
    #: indices into :attr:`RepoGraph.budgets` of the maps that include this file
    in_maps: tuple[int, ...] = ()
    #: the ranking's evidence for this file, where the ranking gives it (``signal``, ``detail``, ``weight``)
    why: tuple[dict[str, Any], ...] = ()
    chat: bool = False


@dataclass(frozen=True, slots=True)
class Edge:
    """All that links ``src`` to ``dst``: name references and resolved imports, aggregated."""

    src: str
    dst: str
    #: occurrences in ``src`` of names ``dst`` defines
    references: int = 0
    #: distinct identifiers behind those references
    identifiers: int = 0
    #: the reference edge's weight in the graph (Aider's multipliers); 0 without references
    weight: float = 0.0
    #: resolved import statements of ``src`` that lead to ``dst``
    imports: int = 0
    #: the strongest identifiers, best first
    top_idents: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class RepoGraph:
    """The whole repository at file level (what the page embeds; exports may group or cut it)."""

    root_name: str
    files: tuple[FileNode, ...]
    edges: tuple[Edge, ...]
    budgets: tuple[int, ...] = ()
    #: the size in tokens of the map at each budget, and how many files it covers
    map_tokens: tuple[int, ...] = ()
    task: str | None = None
    chat_files: tuple[str, ...] = ()
    diagnostics: tuple[str, ...] = field(default=())
