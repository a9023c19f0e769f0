"""The repository graph as a networkx graph, and its DOT, GraphML and node-link JSON texts.

One edge per ordered pair of nodes (references and imports merged, with their counts and the
strongest identifiers), every attribute a plain string or number so Graphviz, Gephi and
notebooks read the files as they are. Nodes and edges are added in sorted order, so the same
repository and arguments give the same bytes.
"""

from __future__ import annotations

import io
import json
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import networkx as nx

from .model import TOP_IDENTS, Edge, FileNode, RepoGraph

FORMATS = ("html", "dot", "graphml", "json")
GROUP_BY = ("file", "directory")
DEFAULT_MAX_NODES = 2000
ROOT_GROUP = "."


@dataclass(frozen=True, slots=True)
class Shaped:
    """What an export shows: file nodes, or directory groups, and a note when it is not every file."""

    graph: nx.DiGraph[str]
    note: str | None


def parent_dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ROOT_GROUP


def group_at(path: str, depth: int | None) -> str:
    """The directory group of ``path``: its directory, cut to ``depth`` parts (None: not cut)."""
    parts = path.split("/")[:-1]
    if depth is not None:
        parts = parts[:depth]
    return "/".join(parts) or ROOT_GROUP


def group_depth(paths: Sequence[str], max_nodes: int) -> int | None:
    """The deepest cut of the directory tree that gives at most ``max_nodes`` groups (None: no cut
    needed; at least depth 1, which may still exceed ``max_nodes`` on a very flat repository)."""
    if max_nodes <= 0 or len({parent_dir(p) for p in paths}) <= max_nodes:
        return None
    deepest = max((p.count("/") for p in paths), default=0)
    for depth in range(deepest, 0, -1):
        if len({group_at(p, depth) for p in paths}) <= max_nodes:
            return depth
    return 1


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")


def text_attr(value: str) -> str:
    """An attribute every format can carry: characters XML 1.0 forbids (an identifier from a
    garbled file may hold one) become U+FFFD."""
    return _NOT_XML.sub("\ufffd", value)


def _most_common(values: Sequence[str]) -> str:
    counts = Counter(v for v in values if v)
    return min(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0] if counts else ""


def _file_attrs(f: FileNode) -> dict[str, Any]:
    return {
        "kind": "file",
        "rank": f.rank,
        "language": text_attr(f.language),
        "backend": text_attr(f.backend),
        "definitions": len(f.definitions),
        "in_map": int(0 in f.in_maps),
        "chat": int(f.chat),
    }


def _edge_attrs(e: Edge) -> dict[str, Any]:
    return {
        "references": e.references,
        "identifiers": e.identifiers,
        "weight": e.weight,
        "imports": e.imports,
        "idents": text_attr(" ".join(e.top_idents)),
    }


def shape(rg: RepoGraph, group_by: str = "file", max_nodes: int = DEFAULT_MAX_NODES) -> Shaped:
    """The graph an export writes: every file; or, above ``max_nodes`` files, the top-ranked
    ``max_nodes``; or with ``group_by="directory"``, directory groups (cut to a depth that fits)."""
    if group_by not in GROUP_BY:
        raise ValueError(f"group_by must be one of {GROUP_BY} (got {group_by!r})")
    g: nx.DiGraph[str] = nx.DiGraph(name=rg.root_name, budget=rg.budgets[0] if rg.budgets else 0)
    note = None
    if group_by == "file":
        files = list(rg.files)
        if max_nodes > 0 and len(files) > max_nodes:
            files = sorted(
                sorted(files, key=lambda f: (-f.rank, f.path))[:max_nodes], key=lambda f: f.path
            )
            note = (
                f"{len(rg.files)} files is more than --max-nodes {max_nodes}: "
                f"showing the {max_nodes} top-ranked files (use --group-by directory to see every file grouped)"
            )
        keep = {f.path for f in files}
        for f in files:
            g.add_node(f.path, **_file_attrs(f))
        for e in rg.edges:
            if e.src in keep and e.dst in keep:
                g.add_edge(e.src, e.dst, **_edge_attrs(e))
    else:
        depth = group_depth([f.path for f in rg.files], max_nodes)
        of = {f.path: group_at(f.path, depth) for f in rg.files}
        members: dict[str, list[FileNode]] = {}
        for f in rg.files:
            members.setdefault(of[f.path], []).append(f)
        if depth is not None:
            note = (
                f"{len({parent_dir(p) for p in of})} directories is more than --max-nodes {max_nodes}: "
                f"directories grouped at depth {depth} ({len(members)} groups)"
            )
        for name in sorted(members):
            fs = members[name]
            g.add_node(
                name,
                kind="directory",
                files=len(fs),
                rank=sum(f.rank for f in fs),
                language=text_attr(_most_common([f.language for f in fs])),
                backend=text_attr(_most_common([f.backend for f in fs])),
                definitions=sum(len(f.definitions) for f in fs),
                in_map=sum(1 for f in fs if 0 in f.in_maps),
                chat=sum(1 for f in fs if f.chat),
            )
        merged: dict[tuple[str, str], dict[str, Any]] = {}
        idents: dict[tuple[str, str], Counter[str]] = {}
        for e in rg.edges:
            pair = (of[e.src], of[e.dst])
            if pair[0] == pair[1]:
                continue
            slot = merged.setdefault(
                pair, {"references": 0, "identifiers": 0, "weight": 0.0, "imports": 0}
            )
            slot["references"] += e.references
            slot["identifiers"] += e.identifiers
            slot["weight"] += e.weight
            slot["imports"] += e.imports
            idents.setdefault(pair, Counter()).update(e.top_idents)
        for pair in sorted(merged):
            best = sorted(idents[pair].items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_IDENTS]
            g.add_edge(*pair, **merged[pair], idents=text_attr(" ".join(i for i, _ in best)))
    if note:
        g.graph["note"] = note
    return Shaped(g, note)


def to_graphml(g: nx.DiGraph[str]) -> str:
    buf = io.BytesIO()
    nx.write_graphml(g, buf, encoding="utf-8", prettyprint=True, named_key_ids=True)
    return buf.getvalue().decode("utf-8")


def to_json(g: nx.DiGraph[str]) -> str:
    try:
        data = nx.node_link_data(g, edges="edges")
    except TypeError:  # networkx before 3.4 names the list "links"
        data = nx.node_link_data(g)
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=1) + "\n"


def dot_id(value: object) -> str:
    """A DOT quoted string. Every ID is quoted (``node``, ``edge`` and ``a:b`` would otherwise be a
    keyword or a port), a double quote is escaped, and a backslash that would escape the closing
    quote is doubled (DOT has no other escapes in quoted IDs)."""
    text = str(value).replace('"', '\\"')
    if text.endswith("\\") and not text.endswith('\\"'):
        text += "\\"
    return f'"{text}"'


def _dot_attrs(attrs: dict[str, Any]) -> str:
    return ", ".join(f"{k}={dot_id(v)}" for k, v in attrs.items())


def to_dot(g: nx.DiGraph[str]) -> str:
    """DOT text, written here: pydot 4 leaves names such as ``node`` or ``a:b.py`` unquoted, which
    Graphviz reads as a keyword or a port. pydot (and Graphviz) parse what this writes."""
    lines = [f"digraph {dot_id(g.graph.get('name', 'repository'))} {{"]
    graph_attrs = {k: v for k, v in g.graph.items() if k != "name"}
    if graph_attrs:
        lines.append(f"  graph [{_dot_attrs(graph_attrs)}];")
    for node, attrs in g.nodes(data=True):
        lines.append(f"  {dot_id(node)} [{_dot_attrs(attrs)}];")
    for src, dst, attrs in g.edges(data=True):
        lines.append(f"  {dot_id(src)} -> {dot_id(dst)} [{_dot_attrs(attrs)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_export(shaped: Shaped, fmt: str) -> str:
    if fmt == "graphml":
        return to_graphml(shaped.graph)
    if fmt == "json":
        return to_json(shaped.graph)
    if fmt == "dot":
        return to_dot(shaped.graph)
    raise ValueError(f"unknown export format {fmt!r}")
