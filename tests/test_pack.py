"""Context packs: models, the symbol dependency graph, selection by role, the budget, files and
settings, hostile input, and the CLI."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper import RepoMapper
from repomapper.cli import main
from repomapper.pack import (
    AgentRole,
    ContextPack,
    DependencyGraph,
    DependencyInfo,
    PackError,
    ParsedFile,
    SymbolInfo,
    check_task_id,
    render_markdown,
)
from repomapper.pack.models import ASTContext, FileContent, ImportInfo

FILES = {
    "app/__init__.py": "",
    "app/base.py": '''"""Storage contracts."""


class Store:
    """Where records live."""

    def save(self, record):
        """Persist one record."""
        raise NotImplementedError

    def load(self, key):
        raise NotImplementedError
''',
    "app/memory.py": '''from app.base import Store
from app.util import normalise_key


class MemoryStore(Store):
    """Keeps records in a dict."""

    def __init__(self):
        self.data = {}

    def save(self, record):
        key = normalise_key(record["id"])
        self.data[key] = record
        return key

    def load(self, key):
        return self.data[normalise_key(key)]
''',
    "app/util.py": '''def normalise_key(key):
    """Keys are lower-case strings."""
    return str(key).strip().lower()


def unrelated_helper(x):
    return x * 2
''',
    "app/service.py": '''from app.memory import MemoryStore


def register_user(name):
    """Create and store a user."""
    store = MemoryStore()
    return store.save({"id": name, "name": name})
''',
    "app/api.py": """from app.service import register_user


def post_user(request):
    return register_user(request["name"])
""",
    "tests/test_memory.py": """from app.memory import MemoryStore


def test_save_then_load():
    store = MemoryStore()
    store.save({"id": "A"})
    assert store.load("a") == {"id": "A"}
""",
}


def make_repo(root: Path, files=FILES) -> Path:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


def mapper(root: Path, **kw) -> RepoMapper:
    kw.setdefault("env", {})
    return RepoMapper(root, **kw)


def paths(pack: ContextPack) -> list[str]:
    return [f.path for f in pack.files]


# -- models ------------------------------------------------------------------------------------
def test_models_round_trip_through_json(repo):
    pack = mapper(repo).generate_context_pack_sync(
        "t-1", "store records", ["app/memory.py"], AgentRole.CODING
    )
    again = ContextPack.from_dict(json.loads(json.dumps(pack.to_dict())))
    assert again == pack
    s = SymbolInfo(
        "f", "function", "a.py", 1, 3, "def f()", "doc", ("b.py",), "", 0.5, ("x",), "body"
    )
    assert SymbolInfo.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    i = ImportInfo("a.b", ("c",), False, 3, ("a/b.py",))
    assert ImportInfo.from_dict(i.to_dict()) == i
    pf = ParsedFile("a.py", "python", (s,), (i,), ("f",), None, 3, (("g", 2, "call"),), "ab")
    assert ParsedFile.from_dict(json.loads(json.dumps(pf.to_dict()))) == pf
    d = DependencyInfo("a.py::f", "b.py::g", "call", 1, "a.py", 2)
    assert DependencyInfo.from_dict(d.to_dict()) == d
    fc = FileContent("a.py", "python", "full", "x\n", ((1, 1),), 1, 1, 1.0, ("target",))
    assert FileContent.from_dict(json.loads(json.dumps(fc.to_dict()))) == fc
    ctx = ASTContext("/r", "sha", "fs", {"a.py": pf}, "2026-01-01T00:00:00+00:00", 10)
    assert ASTContext.from_dict(json.loads(json.dumps(ctx.to_dict()))) == ctx


# -- the dependency graph ------------------------------------------------------------------------
def test_dependency_graph_links_bodies_bases_imports_and_tests(repo):
    ctx = mapper(repo).refresh_ast_context_sync()
    g = ctx.graph()
    deps = g.get_dependencies("app/memory.py::MemoryStore.save", max_depth=1)
    assert [(d.to_symbol, d.kind, d.depth) for d in deps] == [
        ("app/util.py::normalise_key", "call", 1)
    ]
    assert deps[0].file_path == "app/memory.py" and deps[0].line == 12
    bases = g.get_dependencies("app/memory.py::MemoryStore", max_depth=1)
    assert ("app/base.py::Store", "inheritance") in [(d.to_symbol, d.kind) for d in bases]
    # transitively: register_user -> MemoryStore -> Store (depth 2)
    deep = {d.to_symbol: d.depth for d in g.get_dependencies("register_user", max_depth=3)}
    assert deep["app/memory.py::MemoryStore"] == 1
    assert deep["app/base.py::Store"] == 2
    assert "app/util.py::unrelated_helper" not in deep
    assert g.get_dependencies("register_user", max_depth=1) != g.get_dependencies("register_user")
    users = g.get_dependents("app/memory.py::MemoryStore", max_depth=2)
    by = {d.from_symbol: (d.kind, d.depth) for d in users}
    assert by["app/service.py::register_user"] == ("call", 1)
    assert by["tests/test_memory.py::test_save_then_load"] == ("test", 1)
    assert by["app/api.py::post_user"][1] == 2
    modules = g.get_dependencies("app/api.py", max_depth=1)
    assert ("app/service.py::", "import") in [(d.to_symbol, d.kind) for d in modules]


def test_dependency_graph_add_file_directly():
    g = DependencyGraph()
    a = ParsedFile(
        "a.py",
        "python",
        (SymbolInfo("f", "function", "a.py", 1, 2), SymbolInfo("g", "function", "a.py", 4, 5)),
        references=(("g", 2, "call"),),
    )
    g.add_file(a)
    assert [d.to_symbol for d in g.get_dependencies("f")] == ["a.py::g"]
    assert [d.from_symbol for d in g.get_dependents("a.py::g")] == ["a.py::f"]
    assert g.get_dependencies("nothing") == []


# -- selection by role -----------------------------------------------------------------------------
def test_coder_gets_target_and_direct_dependency_bodies(repo):
    pack = mapper(repo).generate_context_pack_sync(
        "c1", "save records in memory", ["app/memory.py"], "coding", 100_000
    )
    files = {f.path: f for f in pack.files}
    assert pack.files[0].path == "app/memory.py" and pack.files[0].mode == "full"
    assert files["app/memory.py"].why[0] == "target"
    assert "app/base.py" in files and "app/util.py" in files
    util = {s.id: s for s in pack.symbols if s.file_path == "app/util.py"}
    assert util["app/util.py::normalise_key"].included == "body"
    helper = util.get("app/util.py::unrelated_helper")
    assert helper is None or helper.included == "signature"
    assert "unrelated_helper(x)" in files["app/util.py"].content  # outline: every signature
    assert "x * 2" not in files["app/util.py"].content  # but not that body
    assert all(f.why for f in pack.files) and all(s.why for s in pack.symbols)
    assert pack.relevance_scores["app/memory.py"] >= max(pack.relevance_scores.values()) - 0.1
    kinds = {d.kind for d in pack.dependencies}
    assert {"call", "inheritance"} <= kinds


def test_reviewer_gets_dependents_and_tests(repo):
    coder = mapper(repo).generate_context_pack_sync(
        "c2", "save records", ["app/memory.py"], AgentRole.CODING
    )
    reviewer = mapper(repo).generate_context_pack_sync(
        "r2", "save records", ["app/memory.py"], AgentRole.REVIEWING
    )
    rfiles = {f.path: f for f in reviewer.files}
    assert "tests/test_memory.py" in rfiles and "app/service.py" in rfiles
    assert "app/api.py" in rfiles  # two levels of dependents
    assert any("test" in w for w in rfiles["tests/test_memory.py"].why)
    assert reviewer.relevance_scores["tests/test_memory.py"] > coder.relevance_scores.get(
        "tests/test_memory.py", 0
    )
    assert rfiles["tests/test_memory.py"].mode in ("full", "outline")
    assert "store.load" in rfiles["tests/test_memory.py"].content  # the test's body


def test_planner_gets_signatures_not_bodies(repo):
    pack = mapper(repo).generate_context_pack_sync(
        "p1", "store records", ["app/memory.py"], AgentRole.PLANNING
    )
    assert all(f.mode != "full" for f in pack.files)
    target = pack.files[0]
    assert target.path == "app/memory.py" and "def save(self, record):" in target.content
    assert "self.data[key] = record" not in target.content


def test_tester_puts_tests_right_after_targets(repo):
    pack = mapper(repo).generate_context_pack_sync(
        "te1", "save records", ["app/memory.py"], AgentRole.TESTING
    )
    assert paths(pack)[:2] == ["app/memory.py", "tests/test_memory.py"]


def test_task_text_alone_finds_files(repo):
    pack = mapper(repo).generate_context_pack_sync(
        "d1", "normalise_key breaks on None keys", [], AgentRole.DEBUGGING
    )
    assert "app/util.py" in paths(pack)
    util = next(f for f in pack.files if f.path == "app/util.py")
    assert any("normalise_key" in w for w in util.why)


def test_min_relevance_score_cuts_but_never_targets(repo):
    pack = mapper(repo, min_relevance_score=1.0).generate_context_pack_sync(
        "m1", "store", ["app/api.py"], "coding"
    )
    assert paths(pack) == ["app/api.py"]
    assert all(o["reason"] == "below MIN_RELEVANCE_SCORE" for o in pack.metadata["omitted"])
    assert pack.metadata["omitted_total"] > 0


# -- the budget ------------------------------------------------------------------------------------
@pytest.mark.parametrize("budget", [1, 5, 40, 90, 200, 100_000])
def test_never_over_budget_and_exact_counts(repo, budget):
    from repomapper.tokens import as_counter

    count = as_counter(None).count
    pack = mapper(repo).generate_context_pack_sync(
        "b1", "save records", ["app/memory.py"], "coding", budget
    )
    assert pack.token_count <= budget
    assert pack.token_count == sum(count(f.content) for f in pack.files)
    assert all(f.token_count == count(f.content) for f in pack.files)
    if not pack.files:
        assert any(d.code == "budget_too_small" for d in pack.diagnostics)


def test_budget_smaller_than_one_signature_is_empty_with_reason(repo):
    pack = mapper(repo).generate_context_pack_sync(
        "b2", "save records", ["app/memory.py"], "coding", 1
    )
    assert pack.files == () and pack.token_count == 0
    d = next(d for d in pack.diagnostics if d.code == "budget_too_small")
    assert d.severity == "error"


def test_tight_budget_degrades_to_outline_then_signatures(repo):
    full = mapper(repo).generate_context_pack_sync("b3", "x", ["app/memory.py"], "coding")
    target_tokens = full.files[0].token_count
    pack = mapper(repo).generate_context_pack_sync(
        "b4", "x", ["app/memory.py"], "coding", target_tokens - 1
    )
    assert pack.files[0].path == "app/memory.py"
    assert pack.files[0].mode in ("outline", "signatures")
    assert pack.token_count <= target_tokens - 1


def test_same_input_same_bytes(repo, tmp_path):
    out = []
    for i in range(2):
        m = mapper(repo, pack_dir=tmp_path / f"out{i}")
        m.generate_context_pack_sync("same", "save records", ["app/memory.py"], "reviewing", 300)
        m.close()
        out.append((tmp_path / f"out{i}/same.json").read_bytes())
    assert out[0] == out[1]


def test_empty_repository_says_why(tmp_path):
    (tmp_path / "e").mkdir()
    pack = mapper(tmp_path / "e").generate_context_pack_sync("e1", "anything", [], "coding")
    assert pack.files == ()
    assert {d.code for d in pack.diagnostics} & {
        "nothing_to_map",
        "nothing_selected",
        "no_files_matched",
    }


# -- files, settings, git ----------------------------------------------------------------------------
def test_ast_context_reuse_memory_cache_and_rebuild(repo):
    m = mapper(repo)
    m.generate_context_pack_sync("f1", "save", ["app/memory.py"], "coding")
    assert m.last_ast_context == "built"
    m.close()
    m2 = mapper(repo)
    m2.generate_context_pack_sync("f2", "save", ["app/memory.py"], "coding")
    assert m2.last_ast_context == "cache"  # a new mapper reads it from the tag cache
    m2.generate_context_pack_sync("f3", "save", ["app/memory.py"], "coding")
    assert m2.last_ast_context == "memory"
    (repo / "app/new.py").write_text("def brand_new():\n    return 1\n")
    m2.generate_context_pack_sync("f4", "save", ["app/memory.py"], "coding")
    assert m2.last_ast_context == "built"  # the file set changed
    m2.close()
    m3 = mapper(repo, ast_cache_ttl=0)
    m3.generate_context_pack_sync("f5", "save", ["app/memory.py"], "coding")
    assert m3.last_ast_context == "built"
    m3.close()
    assert sorted(p.name for p in repo.iterdir()) == ["app", "tests"]  # nothing written here


def test_without_the_cache_the_ast_context_stays_in_memory(repo):
    for _ in range(2):
        with mapper(repo, use_cache=False) as m:
            m.generate_context_pack_sync("n1", "save", ["app/memory.py"], "coding")
            assert m.last_ast_context == "built"
            m.generate_context_pack_sync("n2", "save", ["app/memory.py"], "coding")
            assert m.last_ast_context == "memory"
    with mapper(repo) as m:  # nor was anything stored for a cached mapper to find
        m.generate_context_pack_sync("n3", "save", ["app/memory.py"], "coding")
        assert m.last_ast_context == "built"


def test_ast_context_file_only_when_asked(repo, tmp_path):
    ast = tmp_path / "kept/ast.json"
    with mapper(repo, ast_context_path=ast, use_cache=False) as m:
        m.generate_context_pack_sync("a1", "save", ["app/memory.py"], "coding")
    assert ast.is_file() and json.loads(ast.read_text())["format"] == "repomapper.ast_context/2"
    with mapper(repo, ast_context_path=ast, use_cache=False) as m:
        m.generate_context_pack_sync("a2", "save", ["app/memory.py"], "coding")
        assert m.last_ast_context == "file"


def test_no_git_uses_a_content_digest(repo):
    pack = mapper(repo).generate_context_pack_sync("g0", "save", ["app/memory.py"], "coding")
    assert pack.git_sha.startswith("digest:")
    assert pack.metadata["repository_state"] == "content_digest"
    assert pack.metadata["generated_at"] is None


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_repository_uses_the_head_sha(repo):
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo),
    }
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env)
    sha = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.strip()
    pack = mapper(repo).generate_context_pack_sync("g1", "save", ["app/memory.py"], "coding")
    assert pack.git_sha == sha and pack.metadata["repository_state"] == "git"
    assert pack.metadata["generated_at"]


def test_settings_env_and_arguments_win(repo, tmp_path):
    env = {
        "CONTEXT_PACK_DIR": str(tmp_path / "out"),
        "DEFAULT_TOKEN_BUDGET": "50",
        "MAX_DEPENDENCY_DEPTH": "1",
        "MIN_RELEVANCE_SCORE": "0.3",
        "AST_CACHE_TTL": "10",
    }
    m = RepoMapper(repo, env=env)
    assert m.settings.token_budget == 50 and m.settings.max_dependency_depth == 1
    pack = m.generate_context_pack_sync("s1", "save", ["app/memory.py"], "coding")
    assert pack.metadata["budget"] == 50 and (tmp_path / "out/s1.json").is_file()
    m = RepoMapper(repo, env=env, token_budget=70, min_relevance_score=0.1)
    assert m.settings.token_budget == 70 and m.settings.min_relevance_score == 0.1
    with pytest.raises(PackError, match="DEFAULT_TOKEN_BUDGET"):
        RepoMapper(repo, env={"DEFAULT_TOKEN_BUDGET": "lots"})
    with pytest.raises(PackError, match="MIN_RELEVANCE_SCORE"):
        RepoMapper(repo, env={"MIN_RELEVANCE_SCORE": "2"})


def test_async_api(repo):
    m = mapper(repo)
    ctx = asyncio.run(m.refresh_ast_context(str(repo)))
    assert "app/memory.py" in ctx.files and ctx.files["app/memory.py"].exports == ("MemoryStore",)
    pack = asyncio.run(
        m.generate_context_pack("a1", "save", ["app/memory.py"], AgentRole.CODING, 500)
    )
    assert pack.task_id == "a1" and pack.token_count <= 500


# -- hostile input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "task_id",
    [
        "",
        "..",
        "a/../b",
        "../escape",
        "a/b",
        "a\\b",
        "/abs",
        "x\0y",
        "tab\tid",
        "nl\nid",
        "x" * 129,
        ".hidden",
        "-flag",
        "a..b",
    ],
)
def test_hostile_task_ids_rejected_before_writing(repo, task_id):
    with pytest.raises(PackError):
        check_task_id(task_id)
    with pytest.raises(PackError):
        mapper(repo).generate_context_pack_sync(task_id, "save", ["app/memory.py"], "coding")
    assert not (repo / "context").exists()


def test_plain_task_ids_accepted():
    for ok in ("task-123", "T_1.v2", "x" * 128):
        assert check_task_id(ok) == ok


def test_hostile_targets(repo, tmp_path):
    (tmp_path / "secret.py").write_text("password = 1\n")
    (repo / "link.py").symlink_to(tmp_path / "secret.py")
    m = mapper(repo)
    for bad in [
        "../secret.py",
        str(tmp_path / "secret.py"),
        "link.py",
        "missing.py",
        "app",
        "a\0b",
    ]:
        with pytest.raises(PackError):
            m.generate_context_pack_sync("h1", "save", [bad], "coding")
    assert not (repo / "context").exists()


def test_unknown_role(repo):
    with pytest.raises(ValueError, match="unknown role"):
        mapper(repo).generate_context_pack_sync("u1", "save", [], "wizard")


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_pack_json_and_markdown(repo, tmp_path):
    r = CliRunner().invoke(
        main,
        [
            "pack",
            str(repo),
            "--task-id",
            "cli1",
            "--task",
            "save records",
            "--target",
            "app/memory.py",
            "--budget",
            "2000",
        ],
    )
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["task_id"] == "cli1" and data["files"][0]["path"] == "app/memory.py"
    assert sorted(p.name for p in repo.iterdir()) == ["app", "tests"]  # printed, not written
    task = tmp_path / "task.txt"
    task.write_text("save records")
    r = CliRunner().invoke(
        main,
        [
            "pack",
            str(repo),
            "--task-id",
            "cli2",
            "--task-file",
            str(task),
            "--target",
            "app/memory.py",
            "--role",
            "reviewing",
            "--format",
            "markdown",
            "--output",
            str(tmp_path / "o"),
        ],
    )
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("# Context pack cli2 (reviewing)")
    assert "## 1. app/memory.py (full" in r.stdout and "- target" in r.stdout
    assert [p.name for p in (tmp_path / "o").iterdir()] == ["cli2.json"]
    assert json.loads((tmp_path / "o/cli2.json").read_text())["task_id"] == "cli2"
    assert sorted(p.name for p in repo.iterdir()) == ["app", "tests"]


@pytest.mark.parametrize(
    "args",
    [
        ["--task-id", "../x", "--task", "t"],
        ["--task-id", "ok", "--task", "t", "--target", "../outside.py"],
        ["--task-id", "ok", "--task", "t", "--target", "missing.py"],
        ["--task-id", "ok"],
        ["--task-id", "ok", "--task", "t", "--budget", "0"],
    ],
)
def test_cli_pack_errors_exit_2(repo, args):
    r = CliRunner().invoke(main, ["pack", str(repo), *args])
    assert r.exit_code == 2, r.output
    assert "error" in r.stderr.lower() or "usage" in r.output.lower()
    assert not (repo / "context").exists()


def test_markdown_fences_survive_backticks(repo):
    (repo / "app/md.py").write_text('DOC = """```python\\nx\\n```"""\n')
    pack = mapper(repo).generate_context_pack_sync("md1", "DOC", ["app/md.py"], "coding")
    text = render_markdown(pack)
    assert "````" in text


def test_unmapped_and_binary_targets(repo):
    (repo / "NOTES.txt").write_text("remember the keys are lower case\n")
    (repo / "blob.py").write_bytes(b"\xff\xfe\x00binary")
    m = mapper(repo)
    pack = m.generate_context_pack_sync("u2", "keys", ["NOTES.txt"], "coding")
    assert pack.files[0].path == "NOTES.txt" and pack.files[0].mode == "full"
    assert any(d.code == "target_not_mapped" for d in pack.diagnostics)
    pack = m.generate_context_pack_sync("u3", "zzzz qqqq", ["blob.py"], "coding")
    assert "blob.py" not in paths(pack)
    assert any(o["path"] == "blob.py" for o in pack.metadata["omitted"])


def test_plugin_parser_answers_the_ast_parser_protocol(repo):
    from repomapper.pack import ASTParser, PluginParser

    parser = PluginParser(mapper(repo).repomap)
    assert isinstance(parser, ASTParser) and ".py" in parser.get_supported_extensions()
    pf = parser.parse_file("app/memory.py")
    assert pf.raw_content == (repo / "app/memory.py").read_text()
    assert [s.qualified_name for s in pf.symbols][:2] == ["MemoryStore", "MemoryStore.__init__"]
    assert ("app/base.py",) in [i.resolved for i in pf.imports]
    assert pf.line_count == 17 and pf.exports == ("MemoryStore",)
    with pytest.raises(PackError):
        parser.parse_file("../outside.py")


def test_symlinked_output_dir_leading_out_is_refused(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / "context").symlink_to(outside)
    with pytest.raises(PackError, match="symlink"):
        mapper(repo, pack_dir="context/packs")
    with pytest.raises(PackError, match="symlink"):
        mapper(repo, ast_context_path="context/ast.json")
    assert list(outside.iterdir()) == []


def test_faulty_end_lines_cost_nothing():
    g = DependencyGraph()
    g.add_file(
        ParsedFile(
            "a.py",
            "python",
            (
                SymbolInfo("f", "function", "a.py", 1, 10**12),
                SymbolInfo("g", "function", "a.py", 3, 3),
            ),
            line_count=3,
            references=(("g", 2, "call"),),
        )
    )
    assert [d.to_symbol for d in g.get_dependencies("f")] == ["a.py::g"]


def _stored_ast_keys(repo: Path) -> list[str]:
    from repomapper.cache import open_cache

    cache = open_cache(repo)
    try:
        rows = cache.conn.execute("SELECT key FROM maps WHERE key LIKE 'pack-ast:%'").fetchall()
    finally:
        cache.close()
    return [k for (k,) in rows]


def test_corrupt_ast_context_is_rebuilt(repo, tmp_path):
    from repomapper.cache import open_cache

    with mapper(repo) as m:
        m.generate_context_pack_sync("k1", "save", ["app/memory.py"], "coding")
    (key,) = _stored_ast_keys(repo)
    import zlib

    zipped = [zlib.compress(t) for t in (b"not json", b'{"version": "2", "files": []}', b"[1]")]
    for junk in ("not json", b"\xff\xfe", *zipped):
        cache = open_cache(repo)
        cache.put_map(key, junk)
        cache.close()
        with mapper(repo) as m2:
            pack = m2.generate_context_pack_sync("k2", "save", ["app/memory.py"], "coding")
            assert m2.last_ast_context == "built" and pack.files
    ast = tmp_path / "ast.json"
    for junk in ("not json", '{"version": "1", "files": []}', "[1, 2]"):
        ast.write_text(junk)
        with mapper(repo, ast_context_path=ast, use_cache=False) as m3:
            pack = m3.generate_context_pack_sync("k3", "save", ["app/memory.py"], "coding")
            assert m3.last_ast_context == "built" and pack.files


def test_one_ast_context_per_repository_in_the_cache(repo):
    with mapper(repo) as m:
        m.generate_context_pack_sync("c1", "save", ["app/memory.py"], "coding")
        first = _stored_ast_keys(repo)
        (repo / "app/new.py").write_text("def brand_new():\n    return 1\n")
        m.generate_context_pack_sync("c2", "save", ["app/memory.py"], "coding")
    second = _stored_ast_keys(repo)
    assert len(first) == len(second) == 1 and first != second


def test_ast_context_key_names_what_produced_it():
    from repomapper.pack.persist import cache_key

    key = cache_key("sha", "files", ["python@1"])
    assert key.startswith("pack-ast:")
    assert key == cache_key("sha", "files", ["python@1", "python@1"])
    assert (
        len(
            {
                key,
                cache_key("sha2", "files", ["python@1"]),
                cache_key("sha", "files2", ["python@1"]),
                cache_key("sha", "files", ["python@2"]),
            }
        )
        == 4
    )


def test_ast_context_key_follows_the_code_that_builds_it(monkeypatch):
    from repomapper.pack import persist

    same = persist.cache_key("sha", "set", ["fp"])
    assert same == persist.cache_key("sha", "set", ["fp"])
    monkeypatch.setattr(persist, "made_by", lambda what: "other code")
    persist._code_digest.cache_clear()
    try:
        assert persist.cache_key("sha", "set", ["fp"]) != same
    finally:
        monkeypatch.undo()
        persist._code_digest.cache_clear()


def test_ast_context_file_round_trip(repo, tmp_path):
    from repomapper.pack.persist import load_ast_context, save_ast_context

    ctx = mapper(repo).refresh_ast_context_sync()
    path = tmp_path / "ast.json"
    save_ast_context(path, ctx)
    data = json.loads(path.read_text())
    assert data["format"] == "repomapper.ast_context/2" and data["git_sha"] == ctx.git_sha
    assert list(data["files"]) == sorted(ctx.files)
    again = load_ast_context(path, ctx.git_sha, ctx.file_set, 3600)
    assert again is not None and again.files == ctx.files
    assert load_ast_context(path, "other", ctx.file_set, 3600) is None
    assert load_ast_context(path, ctx.git_sha, "other", 3600) is None
    assert load_ast_context(path, ctx.git_sha, ctx.file_set, 0) is None
