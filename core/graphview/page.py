"""The self-contained explorer page: one HTML file, its own drawing script, the data as JSON.

The page draws on a canvas with its own script (assets/page.js: pan, zoom, select, search, labels
placed greedily by rank so that none overlaps another); no third-party library is inlined, so a
plain install writes it. Where each file sits is computed here (:mod:`.layout`: directories as
nested circles, files packed inside), so the same graph gives the same bytes.

Nothing from the repository reaches the page as markup: the data is one JSON document in a
``<script type="application/json">`` element with ``<``, ``>`` and ``&`` escaped, and the page's
script puts every name into the DOM with ``textContent`` (or onto the canvas as text). A
Content-Security-Policy forbids any request from the page.
"""

from __future__ import annotations

import hashlib
import html
import inspect
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from . import layout
from .export import parent_dir
from .layout import circle_layout
from .model import RepoGraph

#: Definitions listed per file on the page (the count is always given in full).
MAX_DEFS_PER_FILE = 60
#: Reference edges kept per file on the page, strongest first (every import edge is kept).
MAX_REF_EDGES_PER_FILE = 5
#: Edges the page draws at once, the strongest (the panel lists every kept edge of a file).
MAX_EDGES_DRAWN = 5000
ASSETS = ("page.html", "page.css", "page.js")
CSP = (
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
    "img-src data:; connect-src 'none'; form-action 'none'; base-uri 'none'"
)


class GraphLibraryMissing(RuntimeError):
    """The page's own assets (its template, style and drawing script) are missing from the install."""


@lru_cache(maxsize=1)
def graph_library() -> tuple[str, str]:
    """(name, source) of the code that draws the page: its own script, identified by its digest.

    Nothing outside this package is needed; a broken install (an asset missing or unreadable)
    raises :class:`GraphLibraryMissing`, before any work is done.
    """
    h = hashlib.sha256()
    try:
        texts = {name: _asset(name) for name in ASSETS}
    except (OSError, UnicodeDecodeError) as exc:
        raise GraphLibraryMissing(
            f"the graph page's assets are missing from the installed repomapper ({exc}); "
            "reinstall it (pip install --force-reinstall repomapper); dot, graphml and json need nothing more"
        ) from exc
    for name in ASSETS:
        h.update(texts[name].encode("utf-8"))
    # where the files sit is part of the drawing: the layout's code keys it too
    h.update(inspect.getsource(layout).encode("utf-8"))
    return f"repomapper-canvas-{h.hexdigest()[:12]}", texts["page.js"]


def _asset(name: str) -> str:
    return resources.files(__package__).joinpath("assets", name).read_text("utf-8")


def safe_json(data: Any) -> str:
    """JSON that can sit inside a <script> element: no ``<``, ``>`` or ``&`` survive as such."""
    text = json.dumps(data, ensure_ascii=True, sort_keys=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _common_dir(paths: list[str]) -> str:
    """The deepest directory that holds every file ("" when files differ at the top)."""
    if not paths:
        return ""
    parts = paths[0].split("/")[:-1]
    for p in paths[1:]:
        other = p.split("/")[:-1]
        k = 0
        while k < min(len(parts), len(other)) and parts[k] == other[k]:
            k += 1
        parts = parts[:k]
    return "/".join(parts)


def initial_collapsed(
    paths: list[str], ranks: dict[str, float], group_by: str, max_nodes: int
) -> list[str]:
    """The directories the page opens collapsed, so that at most ``max_nodes`` nodes show.

    By file (the default) every file shows when they fit. Otherwise the page opens at the top-level
    directories and expands the heaviest (by total rank) while the count stays within
    ``max_nodes``. By directory, the page opens with the directories just below those every file
    shares collapsed (what *Collapse all* gives), to be expanded by hand.
    """
    if group_by == "directory":
        # below the directories every file shares (pkg/ when all are in it), as Collapse all
        prefix = _common_dir(paths)
        cut = len(prefix) + 1 if prefix else 0
        return sorted(
            {
                prefix + "/" * bool(prefix) + p[cut:].split("/", 1)[0]
                for p in paths
                if "/" in p[cut:]
            }
        )
    if max_nodes <= 0 or len(paths) <= max_nodes:
        return []
    subdirs: dict[str, set[str]] = {}
    direct: dict[str, int] = {}
    weight: dict[str, float] = {}
    for p in paths:
        parts = p.split("/")
        direct[parent_dir(p)] = direct.get(parent_dir(p), 0) + 1
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            weight[d] = weight.get(d, 0.0) + ranks.get(p, 0.0)
            subdirs.setdefault("/".join(parts[: i - 1]) or "", set()).add(d)
    collapsed = set(subdirs.get("", ()))
    visible = len(collapsed) + direct.get(".", 0)
    frontier = sorted(collapsed, key=lambda d: (-weight[d], d))
    while frontier:
        d = frontier.pop(0)
        delta = len(subdirs.get(d, ())) + direct.get(d, 0) - 1
        if visible + delta > max_nodes:
            continue
        collapsed.discard(d)
        collapsed.update(subdirs.get(d, ()))
        visible += delta
        frontier = sorted([*frontier, *subdirs.get(d, ())], key=lambda x: (-weight[x], x))
    return sorted(collapsed)


def page_data(rg: RepoGraph, group_by: str, max_nodes: int) -> tuple[dict[str, Any], str | None]:
    index = {f.path: i for i, f in enumerate(rg.files)}
    placed, dirs = circle_layout([f.path for f in rg.files], [f.rank for f in rg.files])
    files = []
    for f, xy in zip(rg.files, placed, strict=True):
        files.append(
            {
                "p": f.path,
                "r": f.rank,
                "l": f.language,
                "b": f.backend,
                "n": len(f.definitions),
                "d": [[d.kind, d.name, d.line, d.scope] for d in f.definitions[:MAX_DEFS_PER_FILE]],
                "m": list(f.in_maps),
                "w": list(f.why),
                "c": int(f.chat),
                "xy": list(xy),
            }
        )
    kept = []
    per_src: dict[str, int] = {}
    for e in sorted(rg.edges, key=lambda e: (-e.weight, e.src, e.dst)):
        if e.imports == 0:
            if per_src.get(e.src, 0) >= MAX_REF_EDGES_PER_FILE:
                continue
            per_src[e.src] = per_src.get(e.src, 0) + 1
        kept.append(
            (
                index[e.src],
                index[e.dst],
                e.references,
                e.identifiers,
                e.imports,
                " ".join(e.top_idents),
            )
        )
    kept.sort()
    paths = [f.path for f in rg.files]
    collapsed = initial_collapsed(paths, {f.path: f.rank for f in rg.files}, group_by, max_nodes)
    note = None
    if collapsed:
        note = (
            f"{len(paths)} files: the page opens with {len(collapsed)} directories collapsed "
            f"(at most {max_nodes} nodes); click a directory to expand it"
        )
        if group_by == "directory":
            note = f"{len(paths)} files grouped by directory: click a directory to expand it"
    data = {
        "meta": {
            "root": rg.root_name,
            "task": rg.task,
            "budgets": list(rg.budgets),
            "map_tokens": list(rg.map_tokens),
            "chat": list(rg.chat_files),
            "max_nodes": max_nodes,
            "note": note,
            "diagnostics": list(rg.diagnostics),
            "edges_total": len(rg.edges),
            "edges_kept": len(kept),
            "ref_edges_per_file": MAX_REF_EDGES_PER_FILE,
            "defs_per_file": MAX_DEFS_PER_FILE,
            "max_edges_drawn": MAX_EDGES_DRAWN,
        },
        "files": files,
        "edges": [list(e) for e in kept],
        "collapsed": collapsed,
        "dirs": {d: list(at) for d, at in sorted(dirs.items())},
    }
    return data, note


def render_page(
    rg: RepoGraph, group_by: str = "file", max_nodes: int = 2000
) -> tuple[str, str | None]:
    """(the page, the note to print when it opens grouped)."""
    drawing, _ = graph_library()
    data, note = page_data(rg, group_by, max_nodes)
    template = _asset("page.html")
    parts = {
        "__TITLE__": html.escape(f"repomapper graph: {rg.root_name}"),
        "__CSP__": html.escape(CSP),
        "__STYLE__": _asset("page.css"),
        "__DRAWING__": html.escape(drawing),
        "__DATA__": safe_json(data),
        "__APP__": _asset("page.js"),
    }
    out = re.sub("|".join(re.escape(k) for k in parts), lambda m: parts[m.group(0)], template)
    return out, note
