"""The explorer page in a real browser: Debian's headless Chromium driven by Playwright, the page
opened from a file URL with every other request refused.

Skips (with the reason) when Playwright or Chromium is absent; CI installs both (.ci/run installs
Debian's ``chromium``, the ``dev`` extra installs ``playwright``; ``playwright install`` is never
run: the browser is Debian's). Set REPOMAPPER_GRAPH_SCREENSHOT=path.png to keep the screenshot.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest

from repomapper.graphview import build_repo_graph, render_graph
from repomapper.repomap import RepoMap
from tests.graph_fixtures import HOSTILE, QUOTED, graph_repo

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')"
)
CHROMIUM = next(
    (p for p in ("/usr/bin/chromium", shutil.which("chromium") or "") if p and os.path.exists(p)),
    None,
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (apt-get install chromium)"
)
WHY = ({"signal": "task_mention", "detail": "the task names <b>Catalog</b>", "weight": 3.0},)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def pages(tmp_path):
    repo = graph_repo(tmp_path)
    rm = RepoMap(repo, 1024, cache_dir=tmp_path / "cache")
    rg = build_repo_graph(rm, budgets=(256, 2048))
    rm.close()
    # the ranking's evidence, as RankedFile.to_dict()["why"] will carry it, for one file
    files = tuple(replace(f, why=WHY) if f.path == "shop/catalog.py" else f for f in rg.files)
    rg = replace(rg, files=files)
    out = {}
    for name, max_nodes in (("full", 2000), ("grouped", 3)):
        path = tmp_path / f"{name}.html"
        path.write_text(render_graph(rg, "html", max_nodes=max_nodes)[0], encoding="utf-8")
        out[name] = path
    return rg, out


class Watched:
    """A page whose console errors, uncaught errors, dialogs and outside requests are recorded."""

    def __init__(self, browser, path: Path):
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.context = browser.new_context(viewport={"width": 1280, "height": 800})
        self.context.route("**/*", self._route)
        self.page = self.context.new_page()
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready='1']", timeout=10_000)

    def _route(self, route):
        url = route.request.url
        if url.startswith("file:"):
            route.continue_()
        else:
            self.requests.append(url)
            route.abort()

    def search_and_open(self, query: str, path: str) -> None:
        self.page.fill("#search", query)
        item = self.page.locator("#results li .link", has_text=path).first
        assert item.text_content() == path
        item.click()
        self.page.wait_for_function(
            "p => document.querySelector('#details').dataset.path === p", arg=path
        )

    def close(self) -> None:
        self.context.close()


def test_the_page_renders_offline_and_answers(browser, pages, tmp_path):
    rg, paths = pages
    w = Watched(browser, paths["full"])
    try:
        page = w.page
        assert int(page.get_attribute("body", "data-nodes")) == len(rg.files)
        drawn = page.evaluate("window.repomapperGraph.visibleNodeIds().length")
        assert drawn == len(rg.files)
        assert page.evaluate("document.querySelector('#graph canvas').width") > 0

        w.search_and_open("catalog", "shop/catalog.py")
        details = page.text_content("#details")
        assert "Catalog" in details and "Definitions" in details and "Imported by" in details
        assert "rank #" in details and "in the 2048-token map" in details
        assert (
            page.text_content("#details ul.why")
            == "task_mention the task names <b>Catalog</b> (3.00)"
        )

        w.search_and_open("alert", HOSTILE)
        assert page.text_content("#details h2") == HOSTILE
        assert (
            page.evaluate(
                "document.querySelectorAll('#details script, #results script, #details i').length"
            )
            == 0
        )
        assert "hostile_helper" in page.text_content("#details")
        w.search_and_open("quoted", QUOTED)
        assert page.text_content("#details h2") == QUOTED
        assert page.evaluate("document.querySelectorAll('script').length") == 2  # data, app

        shot = tmp_path / "graph.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 10_000
        if os.environ.get("REPOMAPPER_GRAPH_SCREENSHOT"):
            shutil.copy(shot, os.environ["REPOMAPPER_GRAPH_SCREENSHOT"])
        assert w.errors == [] and w.dialogs == [] and w.requests == []
    finally:
        w.close()


def test_a_large_repository_opens_grouped_and_expands(browser, pages):
    rg, paths = pages
    w = Watched(browser, paths["grouped"])
    try:
        page = w.page
        shown = int(page.get_attribute("body", "data-nodes"))
        assert shown <= 3 and page.is_visible("#notice")
        assert "collapsed" in page.text_content("#notice")
        ids = page.evaluate("window.repomapperGraph.visibleNodeIds()")
        assert any(i.startswith("d:") for i in ids)
        page.evaluate("window.repomapperGraph.expand('shop')")
        assert int(page.get_attribute("body", "data-nodes")) > shown
        w.search_and_open(
            "helpers", "shop/util/deep/helpers.py"
        )  # reveals a file inside collapsed directories
        assert "f:" + str(
            [f.path for f in rg.files].index("shop/util/deep/helpers.py")
        ) in page.evaluate("window.repomapperGraph.visibleNodeIds()")
        assert w.errors == [] and w.dialogs == [] and w.requests == []
    finally:
        w.close()


# -- a page of django's size: 2,800 files in nested packages ------------------------------------

WORDS = [
    "models",
    "fields",
    "query",
    "base",
    "utils",
    "checks",
    "forms",
    "widgets",
    "views",
    "urls",
    "admin",
    "options",
    "related",
    "serializers",
    "signals",
    "middleware",
    "cache",
    "sessions",
    "messages",
    "templatetags",
    "management",
    "commands",
    "backends",
    "postgresql",
    "sqlite3",
    "operations",
    "schema",
    "introspection",
    "creation",
    "features",
    "validation",
    "storage",
    "handlers",
    "exceptions",
    "translation",
    "formats",
    "timezone",
    "dateformat",
    "functional",
    "encoding",
    "html",
    "text",
    "http",
    "request",
    "response",
    "cookie",
    "csrf",
    "loader",
    "engine",
    "context",
    "defaulttags",
    "filters",
]


def django_sized(n: int = 2800):
    """A deterministic view shaped like django's: nested packages of uneven size, long and short
    names, a few heavily ranked files and many barely ranked ones, import and name edges."""
    import random

    from repomapper.graphview.model import Definition, Edge, FileNode, RepoGraph

    rnd = random.Random(11)
    paths: set[str] = set()
    while len(paths) < n:
        depth = rnd.choice((2, 3, 3, 4, 4, 5, 6))
        parts = ["django"] + [rnd.choice(WORDS[: 8 + 6 * k]) for k in range(depth - 2)]
        stem = rnd.choice(WORDS)
        name = rnd.choice((stem, stem, f"{stem}_{rnd.choice(WORDS)}", "__init__"))
        paths.add("/".join([*parts, name + ".py"]))
    ordered = sorted(paths)
    files = tuple(
        FileNode(
            p,
            rnd.random() ** 6,
            "python",
            "python_ast",
            (Definition(f"thing_{i}", "function", 1),),
            (0,) if rnd.random() < 0.01 else (),
        )
        for i, p in enumerate(ordered)
    )
    hubs = [p for p in ordered if p.endswith(("models/base.py", "query.py", "utils/html.py"))]
    edges = {}
    for p in ordered:
        for _ in range(3):
            q = rnd.choice(hubs) if hubs and rnd.random() < 0.3 else rnd.choice(ordered)
            if q != p:
                edges[(p, q)] = Edge(p, q, 2, 1, rnd.random(), rnd.randint(0, 1), ("name",))
    return RepoGraph(
        "django-sized", files, tuple(edges[k] for k in sorted(edges)), (1024,), (1000,)
    )


def _meets(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["w"]
        and b["x"] < a["x"] + a["w"]
        and (a["y"] < b["y"] + b["h"] and b["y"] < a["y"] + a["h"])
    )


def assert_readable(page) -> list[dict]:
    """No two labels overlap; labels and discs lie in the drawing, beside the side panel, with
    nothing over them."""
    g = "window.repomapperGraph"
    labels = page.evaluate(f"{g}.labelBoxes()")
    canvas = page.evaluate(f"{g}.canvasRect()")
    side = page.evaluate(
        "(() => { const r = document.querySelector('#side').getBoundingClientRect();"
        " return {x: r.left, y: r.top, w: r.width, h: r.height}; })()"
    )
    assert canvas["x"] + canvas["w"] <= side["x"] + 0.5  # the panel is beside the drawing
    assert len(labels) >= 25
    for k, a in enumerate(labels):
        assert not _meets(a, side), a
        assert canvas["x"] <= a["x"] and a["x"] + a["w"] <= canvas["x"] + canvas["w"] + 0.5
        assert canvas["y"] <= a["y"] and a["y"] + a["h"] <= canvas["y"] + canvas["h"] + 0.5
        for b in labels[:k]:
            assert not _meets(a, b), (a, b)
    # what is drawn at a disc's centre is the canvas: no panel, banner or control over a node
    covered = page.evaluate(
        f"""(() => {{
            const c = {g}.canvasRect();
            return {g}.nodeDiscs().filter((d) => d.x >= c.x && d.y >= c.y && d.x < c.x + c.w
                && d.y < c.y + c.h && document.elementFromPoint(d.x, d.y).id !== 'canvas').length;
        }})()"""
    )
    assert covered == 0
    return labels


@pytest.fixture(scope="module")
def django_page(tmp_path_factory):
    rg = django_sized()
    path = tmp_path_factory.mktemp("django-sized") / "page.html"
    path.write_text(render_graph(rg, "html")[0], encoding="utf-8")
    return rg, path


def test_a_django_sized_page_reads_well(browser, django_page, tmp_path):
    rg, path = django_page
    w = Watched(browser, path)
    try:
        page = w.page
        g = "window.repomapperGraph"
        shown = int(page.get_attribute("body", "data-nodes"))
        assert 0 < shown <= 2000  # opens grouped, as above --max-nodes
        # the whole drawing is in view at first: every disc inside the canvas, none under the panel
        canvas = page.evaluate(f"{g}.canvasRect()")
        discs = page.evaluate(f"{g}.nodeDiscs()")
        assert len(discs) == shown
        assert all(
            canvas["x"] <= d["x"] <= canvas["x"] + canvas["w"]
            and canvas["y"] <= d["y"] <= canvas["y"] + canvas["h"]
            for d in discs
        )
        assert_readable(page)

        page.click("#expand-all")  # every one of the 2,800 files
        page.wait_for_function(f"n => {g}.visibleNodeIds().length === n", arg=len(rg.files))
        page.wait_for_timeout(100)
        labels = assert_readable(page)
        shot = tmp_path / "django-sized.png"
        page.screenshot(path=str(shot))
        assert shot.stat().st_size > 20_000
        if os.environ.get("REPOMAPPER_GRAPH_SCREENSHOT"):
            shutil.copy(shot, os.environ["REPOMAPPER_GRAPH_SCREENSHOT"])

        # a file without a label shows its label on hover
        labelled = {b["id"] for b in labels}
        side_x = page.evaluate("document.querySelector('#side').getBoundingClientRect().left")
        quiet = next(
            d
            for d in page.evaluate(f"{g}.nodeDiscs()")
            if d["id"] not in labelled and d["r"] >= 2 and d["x"] < side_x - 200
        )
        page.mouse.move(quiet["x"], quiet["y"])
        page.wait_for_function(f"id => {g}.labelBoxes().some((b) => b.id === id)", arg=quiet["id"])
        assert_readable(page)

        # zooming in names files that had no label, still none over another
        box = page.evaluate(f"{g}.canvasRect()")
        page.mouse.move(box["x"] + box["w"] / 2, box["y"] + box["h"] / 2)
        scale = page.evaluate(f"{g}.view().scale")
        page.mouse.wheel(0, -300)
        page.wait_for_function(f"s => {g}.view().scale > s * 1.3", arg=scale)
        page.wait_for_timeout(100)
        assert {b["id"] for b in assert_readable(page)} - labelled

        # the search box finds a file by a part of its path, Enter centres and selects it
        # (the least-ranked file whose path ends in a way no other does: a small disc, no label)
        paths = [f.path for f in rg.files]
        target = next(
            f.path
            for f in sorted(rg.files, key=lambda f: (f.rank, f.path))
            if sum(p.endswith(f.path[-24:]) for p in paths) == 1
        )
        index = paths.index(target)
        assert f"f:{index}" not in labelled
        page.fill("#search", target[-24:])
        assert page.text_content("#results li .link") == target
        page.press("#search", "Enter")
        page.wait_for_function(
            "p => document.querySelector('#details').dataset.path === p", arg=target
        )
        assert page.evaluate(f"{g}.selected()") == f"f:{index}"
        page.wait_for_timeout(100)
        disc = next(d for d in page.evaluate(f"{g}.nodeDiscs()") if d["id"] == f"f:{index}")
        canvas = page.evaluate(f"{g}.canvasRect()")
        assert abs(disc["x"] - (canvas["x"] + canvas["w"] / 2)) < 2
        assert abs(disc["y"] - (canvas["y"] + canvas["h"] / 2)) < 2
        assert f"f:{index}" in {b["id"] for b in assert_readable(page)}
        assert w.errors == [] and w.dialogs == [] and w.requests == []
    finally:
        w.close()
