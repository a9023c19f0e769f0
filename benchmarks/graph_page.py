"""Graph page benchmark: how long `repomapper graph` takes to write the explorer page of a real
repository, how long headless Chromium takes to draw it, and how large it is.

    python benchmarks/graph_page.py [--root DIR | --corpus django] [--repeats 3]
                                    [--screenshot docs/graph-django.png] [--output docs/graph.md]
    python benchmarks/graph_page.py --synthetic 20000   # the page alone, for a repository that large

Measured, in this process (the tag cache of a fresh temporary cache directory, warmed first by a
`map` of the same repository):

* compute: ranking (the map, memoised by then) + graph + view model + page, nothing replayed;
* written, warm: ``write_graph`` + writing the file, the usual case of a second run on an
  unchanged repository (the output is replayed from the cache: see core/graphview/memo.py);
* the whole command, as a separate process (interpreter start-up included), warm;
* with ``--synthetic N``: no repository, a generated view of N files in nested directories with
  3 edges per file, to see how the page opens (grouped) and draws at that size;
* render: Debian's headless Chromium (Playwright, network refused) from navigation to the
  page's first drawing (``body[data-ready]``), median of --repeats fresh pages.

Run by hand, never by CI; about a minute on 2 cores for django. Needs Debian's ``chromium``
and ``pip install playwright`` (in the ``dev`` extra).
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from repomapper.graphview import build_repo_graph, render_graph, write_graph  # noqa: E402
from repomapper.repomap import RepoMap  # noqa: E402

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def render_times(page: Path, repeats: int, screenshot: Path | None) -> dict:
    from playwright.sync_api import sync_playwright

    times, refused, errors, nodes, edges = [], [], [], None, None
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=shutil.which("chromium") or "/usr/bin/chromium", args=ARGS
        )
        for i in range(repeats):
            ctx = browser.new_context(viewport={"width": 1400, "height": 900})
            ctx.route(
                "**/*",
                lambda r: (
                    r.continue_()
                    if r.request.url.startswith("file:")
                    else (refused.append(r.request.url), r.abort())
                ),
            )
            pg = ctx.new_page()
            pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            pg.on("pageerror", lambda e: errors.append(str(e)))
            t = time.perf_counter()
            pg.goto(page.as_uri())
            pg.wait_for_selector("body[data-ready='1']", timeout=60_000)
            times.append(time.perf_counter() - t)
            nodes = int(pg.get_attribute("body", "data-nodes"))
            edges = pg.evaluate("window.repomapperGraph.edgesDrawn()")
            if screenshot is not None and i == repeats - 1:
                pg.screenshot(path=str(screenshot))
            ctx.close()
        browser.close()
    return {
        "render_s": times,
        "nodes_drawn": nodes,
        "edges_drawn": edges,
        "refused": refused,
        "errors": errors,
    }


def synthetic(n: int):
    """A deterministic view of ``n`` files in nested directories, three edges per file."""
    import random

    from repomapper.graphview.model import Definition, Edge, FileNode, RepoGraph

    rnd = random.Random(3)
    files = []
    for i in range(n):
        path = f"pkg{i % 7}/mod{(i // 7) % 40}/sub{(i // 280) % 9}/file_{i}.py"
        defs = tuple(
            Definition(f"func_{i}_{k}", "function", 1 + 5 * k) for k in range(rnd.randint(0, 12))
        )
        files.append(
            FileNode(
                path, rnd.random() ** 4, "python", "python_ast", defs, (0,) if i % 97 == 0 else ()
            )
        )
    files.sort(key=lambda f: f.path)
    paths = [f.path for f in files]
    edges = {}
    for _ in range(3 * n):
        a, b = rnd.randrange(n), rnd.randrange(n)
        if a != b:
            edges[(paths[a], paths[b])] = Edge(
                paths[a], paths[b], 3, 1, rnd.random(), rnd.randint(0, 1), ("name",)
            )
    return RepoGraph(
        f"synthetic{n}", tuple(files), tuple(edges[k] for k in sorted(edges)), (1024,), (1000,)
    )


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "--root", type=Path, help="the repository (default: the benchmark corpus --corpus)"
    )
    ap.add_argument(
        "--corpus", default="django", help="a corpus of benchmarks/corpora.py, fetched on first use"
    )
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--screenshot", type=Path)
    ap.add_argument(
        "--output", type=Path, help="append the results, as a markdown section, to this file"
    )
    ap.add_argument(
        "--synthetic", type=int, metavar="N", help="measure the page of a generated N-file view"
    )
    args = ap.parse_args()
    if args.synthetic:
        rg = synthetic(args.synthetic)
        t = time.perf_counter()
        page, note = render_graph(rg, "html")
        compute = time.perf_counter() - t
        with tempfile.TemporaryDirectory(prefix="graph-bench-") as td:
            out = Path(td) / "page.html"
            out.write_text(page, encoding="utf-8")
            browser = render_times(out, args.repeats, args.screenshot)
        text = (
            f"### synthetic: {len(rg.files)} files, {len(rg.edges)} edges\n\n"
            f"Page written from the view in {compute:.3f} s, {len(page.encode()) / 1e6:.2f} MB; headless Chromium "
            f"draws it in {statistics.median(browser['render_s']):.3f} s (median of {args.repeats}): "
            f"{browser['nodes_drawn']} nodes, {browser['edges_drawn']} edges; requests refused: "
            f"{len(browser['refused'])}; console errors: {len(browser['errors'])}. {note or ''}\n"
        )
        print(text)
        if args.output:
            with args.output.open("a", encoding="utf-8") as fh:
                fh.write("\n" + text)
        return 0
    root = args.root
    if root is None:
        sys.path.insert(0, str(HERE))
        import corpora

        root = corpora.ensure(args.corpus)
    with tempfile.TemporaryDirectory(prefix="graph-bench-") as td:
        cache = Path(td) / "cache"
        rm = RepoMap(root, 1024, cache_dir=cache)
        t = time.perf_counter()
        rm.map()
        cold_map = time.perf_counter() - t
        t = time.perf_counter()
        rg = build_repo_graph(rm)
        page, note = render_graph(rg, "html")
        compute = time.perf_counter() - t
        out = Path(td) / "page.html"
        write_graph(rm, "html")  # stores the output for replay
        written = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            result = write_graph(rm, "html")
            out.write_text(result.text, encoding="utf-8")
            written.append(time.perf_counter() - t)
        assert result.replayed and result.text == page
        rm.close()
        cli = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "repomapper.cli",
                    "graph",
                    str(root),
                    "--cache-dir",
                    str(cache),
                    "-o",
                    str(Path(td) / "cli.html"),
                ],
                check=True,
                capture_output=True,
            )
            cli.append(time.perf_counter() - t)
        browser = render_times(out, args.repeats, args.screenshot)
        results = {
            "root": str(root),
            "files": len(rg.files),
            "edges": len(rg.edges),
            "note": note,
            "page_bytes": len(page.encode("utf-8")),
            "map_cold_s": cold_map,
            "compute_s": compute,
            "written_warm_s": written,
            "cli_warm_s": cli,
            **browser,
            "machine": f"{platform.machine()}, {platform.python_version()}",
        }
    med = statistics.median
    lines = [
        f"### {root.name}: {results['files']} files, {results['edges']} edges",
        "",
        "| measure | seconds |",
        "| --- | --- |",
        f"| page written, warm (replayed; `write_graph` + file write, median of {args.repeats}) | {med(written):.3f} |",
        f"| whole `repomapper graph` command, warm (interpreter start-up included, median) | {med(cli):.3f} |",
        f"| page computed with nothing replayed (ranking memoised, graph, view, page) | {compute:.3f} |",
        f"| headless Chromium: navigation to first drawing (median of {args.repeats}) | {med(browser['render_s']):.3f} |",
        "",
        f"Page: {results['page_bytes'] / 1e6:.2f} MB; {browser['nodes_drawn']} nodes and {browser['edges_drawn']} edges "
        f"drawn; requests refused: {len(browser['refused'])}; console errors: {len(browser['errors'])}. {note or ''}",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    print(json.dumps(results, indent=1), file=sys.stderr)
    if args.output:
        with args.output.open("a", encoding="utf-8") as fh:
            fh.write("\n" + text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
