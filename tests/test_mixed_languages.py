"""One graph across backends: Python (ast), TypeScript and Go (tree-sitter), Perl (ctags)."""

import shutil

import pytest

from repomapper import RepoMap
from repomapper.plugins.ctags.detect import ENV_CTAGS, detect, reset_detection
from tests.conftest import FIXTURES

needs_ctags = pytest.mark.skipif(not detect().available, reason="universal-ctags is not installed")

PAIRS = {  # user -> the file whose definitions it uses, one pair per language
    "py/billing/api.py": "py/billing/invoice.py",
    "web/src/usersPage.ts": "web/src/httpClient.ts",
    "go/cmd/server/main.go": "go/internal/store/store.go",
    "scripts/deploy.pl": "scripts/deploy_tools.pm",
}


@pytest.fixture
def mixed(tmp_path):
    dest = tmp_path / "mixed"
    shutil.copytree(FIXTURES / "mixed", dest)
    return dest


@pytest.fixture
def no_ctags(monkeypatch):
    monkeypatch.setenv(ENV_CTAGS, "/nonexistent/ctags")
    reset_detection()
    yield
    monkeypatch.delenv(ENV_CTAGS)
    reset_detection()


@needs_ctags
def test_each_language_is_served_by_its_backend(mixed):
    rm = RepoMap(mixed, use_cache=False)
    entries, _, _ = rm.collect(None)
    plugins = {p: fs.plugin for p, fs in rm.extract(entries).items()}
    assert plugins["py/billing/api.py"] == "python_ast"
    assert plugins["web/src/usersPage.ts"] == "treesitter"
    assert plugins["go/cmd/server/main.go"] == "treesitter"
    assert plugins["scripts/deploy.pl"] == "ctags"


@needs_ctags
def test_edges_inside_each_language_and_the_rank_order_they_give(mixed):
    rm = RepoMap(mixed, 4000, use_cache=False)
    graph = rm.graph()
    for user, used in PAIRS.items():
        assert graph.has_edge(user, used), f"no edge {user} -> {used}"
        assert not graph.has_edge(used, user)
    # imports resolved per language join the same graph
    assert graph.has_edge("py/billing/cron.py", "py/billing/invoice.py", key="imports")
    assert graph.has_edge("web/src/ordersPage.ts", "web/src/httpClient.ts", key="imports")
    assert graph.has_edge("go/cmd/server/main.go", "go/internal/store/store.go", key="imports")
    result = rm.map()
    rank = {f.path: i for i, f in enumerate(result.ranked_files)}
    for user, used in PAIRS.items():
        assert rank[used] < rank[user], f"{used} should outrank {user}"
    for expected in (
        "class InvoiceBuilder:",
        "export class HttpClient {",
        "type OrderStore struct {",
        "sub render_manifest {",
    ):
        assert expected in result.map


def test_without_ctags_the_rest_still_maps_and_the_unmapped_files_are_listed(mixed, no_ctags):
    result = RepoMap(mixed, 4000, use_cache=False).map()
    assert "class InvoiceBuilder:" in result.map
    assert "export class HttpClient {" in result.map
    assert "type OrderStore struct {" in result.map
    unavailable = [d for d in result.diagnostics if d.code == "backend_unavailable"]
    assert len(unavailable) == 1
    assert unavailable[0].paths == ("scripts/deploy.pl", "scripts/deploy_tools.pm")
    assert "apt-get install -y universal-ctags" in unavailable[0].message
