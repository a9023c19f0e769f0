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
        drawn = page.evaluate("window.repomapperGraph.network.body.nodeIndices.length")
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
        assert (
            page.evaluate("document.querySelectorAll('script').length") == 3
        )  # the library, the data, the app

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
