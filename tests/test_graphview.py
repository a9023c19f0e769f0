"""repomapper graph: the view reads the same graph and ranking as the map, every export parses
back with the graph's counts, output is deterministic and names stay text."""

from __future__ import annotations

import io
import json
import math
import os
import re

import networkx as nx
import pytest
from click.testing import CliRunner

from repomapper.cli import main
from repomapper.graphview import build_repo_graph, render_graph, write_graph
from repomapper.graphview.build import files_in_map, why_of
from repomapper.graphview.export import group_depth, shape
from repomapper.graphview.page import initial_collapsed, page_data, safe_json
from repomapper.repomap import RepoMap
from tests.graph_fixtures import HOSTILE, QUOTED, graph_repo


@pytest.fixture
def repo(tmp_path):
    return graph_repo(tmp_path)


@pytest.fixture
def rm(repo, tmp_path):
    m = RepoMap(repo, 1024, cache_dir=tmp_path / "cache")
    yield m
    m.close()


@pytest.fixture
def rg(rm):
    return build_repo_graph(rm, budgets=(256, 4096))


def _pairs(g):
    return {(u, v) for u, v in g.edges()}


def test_the_graph_is_repomaps_graph(rm, rg):
    theirs = rm.graph()
    assert [f.path for f in rg.files] == list(theirs.nodes)
    weights = {(e.src, e.dst): e.weight for e in rg.edges if e.references}
    assert weights == {
        (u, v): d["weight"] for u, v, k, d in theirs.edges(keys=True, data=True) if k == "refs"
    }
    imports = {(e.src, e.dst) for e in rg.edges if e.imports}
    assert imports == {(u, v) for u, v, k in theirs.edges(keys=True) if k == "imports"}


def test_ranks_come_from_the_map(rm, rg):
    result = rm.map()
    scores = {f.path: f.score for f in result.ranked_files}
    assert {f.path: f.rank for f in rg.files} == {p: scores[p] for p in (f.path for f in rg.files)}
    assert HOSTILE in {f.path for f in rg.files} and QUOTED in {f.path for f in rg.files}


def test_edges_carry_counts_and_identifiers(rm, rg):
    explicit = rm.graph()
    assert {(e.src, e.dst) for e in rg.edges} == _pairs(explicit)
    hostile = {e.dst: e for e in rg.edges if e.src == HOSTILE}
    edge = hostile["shop/catalog.py"]
    assert edge.imports >= 1 and edge.references >= 1 and "Catalog" in edge.top_idents
    for e in rg.edges:
        assert e.references or e.imports
        assert e.identifiers == len(
            explicit.get_edge_data(e.src, e.dst).get("refs", {}).get("idents", {})
        )


def test_files_in_each_budgets_map(rm, rg):
    for k, budget in enumerate(rg.budgets):
        rm.map_tokens = budget
        text = rm.map().map
        shown = {f.path for f in rg.files if k in f.in_maps}
        assert shown and all(f"{p}:" in text.splitlines() or p in text.splitlines() for p in shown)
    small = {f.path for f in rg.files if 0 in f.in_maps}
    large = {f.path for f in rg.files if 1 in f.in_maps}
    assert small < large


def test_files_in_map_ignores_lines_that_are_not_repository_paths(rm):
    result = rm.map()
    fake = type(result)(
        **{**{s: getattr(result, s) for s in result.__slots__}, "map": "else:\nshop/money.py:\nx\n"}
    )
    assert files_in_map(fake, {"shop/money.py", "else"}) == {"shop/money.py", "else"}
    assert files_in_map(fake, {"shop/money.py"}) == {"shop/money.py"}


def test_evidence_is_read_generically_when_the_ranking_gives_it():
    class Ranked:
        def to_dict(self):
            return {
                "path": "a.py",
                "score": 0.1,
                "why": [{"signal": "mention", "detail": "named in the task", "weight": 2}],
            }

    class Plain:
        def to_dict(self):
            return {"path": "a.py", "score": 0.1}

    assert why_of(Ranked()) == (
        {"signal": "mention", "detail": "named in the task", "weight": 2.0},
    )
    assert why_of(Plain()) == ()


@pytest.mark.parametrize("group_by", ["file", "directory"])
def test_every_format_parses_back_with_the_graphs_counts(rg, group_by):
    expected = shape(rg, group_by, 2000).graph
    n, m = expected.number_of_nodes(), expected.number_of_edges()
    if group_by == "file":
        assert (n, m) == (len(rg.files), len(rg.edges))
    graphml = nx.read_graphml(
        io.BytesIO(render_graph(rg, "graphml", group_by=group_by)[0].encode())
    )
    assert (graphml.number_of_nodes(), graphml.number_of_edges()) == (n, m)
    assert set(graphml.nodes) == set(expected.nodes)
    data = json.loads(render_graph(rg, "json", group_by=group_by)[0])
    try:
        linked = nx.node_link_graph(data, edges="edges")
    except TypeError:
        linked = nx.node_link_graph(data)
    assert (linked.number_of_nodes(), linked.number_of_edges()) == (n, m)
    assert set(linked.nodes) == set(expected.nodes)
    pydot = pytest.importorskip("pydot", reason="pydot (the dev extra) parses the DOT export back")
    (dot,) = pydot.graph_from_dot_data(render_graph(rg, "dot", group_by=group_by)[0])
    parsed = nx.nx_pydot.from_pydot(dot)
    assert (parsed.number_of_nodes(), parsed.number_of_edges()) == (n, m)
    if group_by == "file":
        attrs = parsed.nodes["shop/catalog.py"]
        assert attrs["kind"] == '"file"' and attrs["language"] == '"python"'


def test_output_is_deterministic(repo, tmp_path):
    outputs = []
    for run in range(2):
        m = RepoMap(repo, 1024, cache_dir=tmp_path / f"cache{run}")
        rg = build_repo_graph(m, budgets=(512,))
        outputs.append([render_graph(rg, fmt)[0] for fmt in ("html", "dot", "graphml", "json")])
        m.close()
    assert outputs[0] == outputs[1]


def test_above_max_nodes_exports_cut_to_the_top_ranked_or_group(rg):
    cut = shape(rg, "file", 3)
    top = sorted(rg.files, key=lambda f: (-f.rank, f.path))[:3]
    assert set(cut.graph.nodes) == {f.path for f in top}
    assert cut.note and "top-ranked" in cut.note
    grouped = shape(rg, "directory", 3)
    assert grouped.graph.number_of_nodes() <= 3 and grouped.note and "depth" in grouped.note
    assert sum(d["files"] for _, d in grouped.graph.nodes(data=True)) == len(rg.files)
    every = shape(rg, "directory", 0)
    assert "shop/util/deep" in every.graph and every.note is None


def test_group_depth_and_initial_collapse():
    paths = ["a/b/c/1.py", "a/b/c/2.py", "a/b/d/3.py", "a/e/4.py", "f/5.py", "6.py"]
    assert group_depth(paths, 10) is None
    assert group_depth(paths, 3) == 1
    assert initial_collapsed(paths, {}, "file", 10) == []
    ranks = {p: 1.0 for p in paths}
    collapsed = initial_collapsed(paths, ranks, "file", 4)
    visible = set()
    for p in paths:
        parts = p.split("/")
        reps = [
            "/".join(parts[:i]) for i in range(1, len(parts)) if "/".join(parts[:i]) in collapsed
        ]
        visible.add(reps[0] if reps else p)
    assert len(visible) <= 4 and collapsed
    assert initial_collapsed(paths, ranks, "directory", 2000) == ["a", "f"]
    # below the directories every file shares, as the page's Collapse all does
    shared = ["pkg/a/1.py", "pkg/a/x/2.py", "pkg/b/3.py", "pkg/4.py"]
    assert initial_collapsed(shared, {}, "directory", 2000) == ["pkg/a", "pkg/b"]
    assert initial_collapsed(["src/pkg/a/1.py", "src/pkg/b/2.py"], {}, "directory", 0) == [
        "src/pkg/a",
        "src/pkg/b",
    ]


def test_the_page_carries_the_rankings_evidence(rg):
    from dataclasses import replace

    why = ({"signal": "task_mention", "detail": "the task names Catalog", "weight": 3.0},)
    files = tuple(replace(f, why=why) if f.path == "shop/catalog.py" else f for f in rg.files)
    data = page_data(replace(rg, files=files), "file", 2000)[0]
    by_path = {f["p"]: f for f in data["files"]}
    assert by_path["shop/catalog.py"]["w"] == list(why)
    for f in data["files"]:  # whatever the ranking says, in one shape
        assert all(set(w) == {"signal", "detail", "weight"} for w in f["w"])


def test_embedded_json_cannot_close_the_script(rg):
    text = safe_json(page_data(rg, "file", 2000)[0])
    assert "<" not in text and ">" not in text and "&" not in text
    assert json.loads(text)["files"]
    page = render_graph(rg, "html")[0]
    assert HOSTILE not in page and "</script>.py" not in page
    data = re.search(
        r'<script type="application/json" id="repomapper-data">(.*?)</script>', page, re.S
    ).group(1)
    assert HOSTILE in {f["p"] for f in json.loads(data)["files"]}
    assert "http://" not in data and "https://" not in page.split("<script>")[0]


def test_the_page_needs_no_graph_library(rm, monkeypatch):
    import importlib.util
    import sys

    import repomapper.graphview.page as page

    real = importlib.util.find_spec

    def without(name, *args, **kwargs):
        return None if name.split(".")[0] in {"pyvis", "IPython"} else real(name, *args, **kwargs)

    page.graph_library.cache_clear()
    monkeypatch.setattr(importlib.util, "find_spec", without)
    monkeypatch.setitem(sys.modules, "pyvis", None)  # an import of it fails
    try:
        text = write_graph(rm, "html").text
        assert "vis.Network" not in text and "<script src" not in text
        assert re.search(
            r'<meta name="generator" content="repomapper graph repomapper-canvas-[0-9a-f]{12}">',
            text,
        )
        result = CliRunner().invoke(main, ["graph", str(rm.root), "--no-cache"])
        assert result.exit_code == 0, result.stderr
    finally:
        page.graph_library.cache_clear()


def test_a_page_asset_missing_is_said_before_any_work(rm, monkeypatch):
    import repomapper.graphview.page as page

    def missing(name):
        raise FileNotFoundError(f"no such asset: {name}")

    page.graph_library.cache_clear()
    monkeypatch.setattr(page, "_asset", missing)
    try:
        with pytest.raises(page.GraphLibraryMissing, match="reinstall"):
            write_graph(rm, "html")
        result = CliRunner().invoke(main, ["graph", str(rm.root), "--no-cache"])
        assert result.exit_code == 1 and "reinstall" in result.stderr
        assert write_graph(rm, "json").graph.files  # the exports need nothing more
    finally:
        page.graph_library.cache_clear()


def test_the_page_carries_each_files_place(rg):
    data = page_data(rg, "file", 2000)[0]
    dirs = data["dirs"]
    assert "" in dirs and "shop/util/deep" in dirs
    for f in data["files"]:
        x, y, r = f["xy"]
        parent = f["p"].rsplit("/", 1)[0] if "/" in f["p"] else ""
        px, py, pr = dirs[parent]
        assert r > 0 and math.hypot(x - px, y - py) + r <= pr + 0.2
    assert data == page_data(rg, "file", 2000)[0]


def test_cli_writes_each_format_and_says_when_it_cuts(repo, tmp_path):
    runner = CliRunner()
    out = tmp_path / "g.json"
    r = runner.invoke(
        main, ["graph", str(repo), "--format", "json", "-o", str(out), "--max-nodes", "3"]
    )
    assert r.exit_code == 0, r.output
    assert "note:" in r.stderr and "top-ranked" in r.stderr
    assert len(json.loads(out.read_text())["nodes"]) == 3
    r = runner.invoke(
        main, ["graph", str(repo), "--format", "dot", "--task", "fix Catalog pricing"]
    )
    assert r.exit_code == 0 and r.stdout.startswith('digraph "graphrepo"')
    r = runner.invoke(main, ["graph", str(repo), "--max-nodes", "-1"])
    assert r.exit_code == 2 and "--max-nodes" in r.stderr


def test_cli_with_nothing_to_map_fails_clearly(make_tree):
    root = make_tree({"notes.unknownext": "hello"})
    r = CliRunner().invoke(main, ["graph", str(root), "--format", "json", "--no-cache"])
    assert r.exit_code == 1 and "no file could be mapped" in r.stderr


def test_a_second_write_is_replayed_and_a_change_is_not(repo, tmp_path):
    rm = RepoMap(repo, 1024, cache_dir=tmp_path / "cache")
    try:
        first = write_graph(rm, "json")
        again = write_graph(rm, "json")
        assert not first.replayed and again.replayed and again.text == first.text
        assert (again.files, again.edges) == (first.files, first.edges)
        assert not write_graph(rm, "json", max_nodes=3).replayed  # other arguments, other output
        assert not write_graph(rm, "dot").replayed
        (repo / "shop/new_module.py").write_text(
            "from shop.catalog import Catalog\n", encoding="utf-8"
        )
        changed = write_graph(rm, "json")
        assert not changed.replayed and "shop/new_module.py" in changed.text
        assert write_graph(rm, "json").replayed
        # same size and mtime, other content (a coarse-clock file system): not replayed
        module = repo / "shop/new_module.py"
        st = module.stat()
        module.write_text("from shop.catalog import Catalo_\n", encoding="utf-8")
        os.utime(module, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert not write_graph(rm, "json").replayed
    finally:
        rm.close()
    rm = RepoMap(repo, 1024, use_cache=False)
    assert not write_graph(rm, "json").replayed and not write_graph(rm, "json").replayed


def test_identifiers_xml_cannot_carry_still_export(rg):
    from dataclasses import replace

    edges = tuple(replace(e, top_idents=("bad\x0bname", "ok")) for e in rg.edges)
    bad = replace(rg, edges=edges)
    for group_by in ("file", "directory"):
        parsed = nx.read_graphml(
            io.BytesIO(render_graph(bad, "graphml", group_by=group_by)[0].encode())
        )
        assert parsed.number_of_edges() == shape(bad, group_by).graph.number_of_edges()
        assert any("bad\ufffdname" in d["idents"] for _, _, d in parsed.edges(data=True))


def test_cli_task_file_and_chat_rank_as_map_does(repo, monkeypatch):
    monkeypatch.chdir(repo)  # --chat is relative to the current directory
    runner = CliRunner()
    task = "Order totals are wrong: fix make_order_helper"
    r = runner.invoke(
        main,
        ["graph", str(repo), "--format", "json", "--task-file", "-", "--chat", "shop/cli.py"],
        input=task,
    )
    assert r.exit_code == 0, r.output
    nodes = {n["id"]: n for n in json.loads(r.stdout)["nodes"]}
    m = json.loads(
        runner.invoke(
            main, ["map", str(repo), "--format", "json", "--task", task, "--chat", "shop/cli.py"]
        ).stdout
    )
    assert {f["path"]: f["score"] for f in m["ranked_files"]} == {
        p: n["rank"] for p, n in nodes.items()
    }
    assert nodes["shop/cli.py"]["chat"] == 1
