"""Context packs: models, the dependencies between definitions read from the repository state,
selection by role, the budget, files and settings, hostile input, and the CLI."""

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
from repomapper.model import Tag
from repomapper.pack import (
    AgentRole,
    ContextPack,
    DependencyInfo,
    FileContent,
    PackError,
    PackSymbol,
    check_task_id,
    render_markdown,
)

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
    s = PackSymbol(
        "f", "function", "a.py", 1, 3, "def f()", "doc", ("b.py",), "", 0.5, ("x",), "body"
    )
    assert PackSymbol.from_dict(json.loads(json.dumps(s.to_dict()))) == s
    tag = Tag("a.py", 1, 3, "f", "def", "function", "", "def f()", "doc")
    assert PackSymbol.of_tag(tag, ("b.py",), 0.5, ("x",), "body") == s
    d = DependencyInfo("a.py::f", "b.py::g", "call", 1, "a.py", 2)
    assert DependencyInfo.from_dict(d.to_dict()) == d
    fc = FileContent("a.py", "python", "full", "x\n", ((1, 1),), 1, 1, 1.0, ("target",))
    assert FileContent.from_dict(json.loads(json.dumps(fc.to_dict()))) == fc


# -- dependencies between definitions -------------------------------------------------------------
def test_links_join_bodies_bases_imports_and_tests(repo):
    g = mapper(repo).links()
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


def test_links_read_the_state_as_it_is_now(repo):
    with mapper(repo) as m:
        assert m.links().get_dependencies("app/util.py::unrelated_helper") == []
        (repo / "app/util.py").write_text(
            FILES["app/util.py"].replace("return x * 2", "return normalise_key(x)")
        )
        deps = m.links().get_dependencies("app/util.py::unrelated_helper")
        assert [(d.to_symbol, d.kind, d.line) for d in deps] == [
            ("app/util.py::normalise_key", "call", 7)
        ]
        assert m.links().get_dependencies("nothing") == []


def test_a_pack_reads_the_references_of_the_files_it_walks_only(repo, monkeypatch):
    with mapper(repo) as m:
        read: list[str] = []
        real = m.repomap.state.extract_full

        def spy(entries):
            read.extend(e.path for e in entries)
            return real(entries)

        monkeypatch.setattr(m.repomap.state, "extract_full", spy)
        m.generate_context_pack_sync("w1", "save", ["app/util.py"], "coding")
        # util.py's own, and those of the files that import it or may call into it
        assert "app/util.py" in read and "app/api.py" not in read
        assert len(read) == len(set(read))  # each file's references read once per pack


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
def test_packs_store_nothing_of_their_own(repo):
    from repomapper.cache import open_cache

    with mapper(repo) as m:
        m.generate_context_pack_sync("f1", "save", ["app/memory.py"], "coding")
    cache = open_cache(repo)
    try:
        rows = cache.conn.execute("SELECT key FROM maps WHERE key LIKE 'pack%'").fetchall()
    finally:
        cache.close()
    assert rows == []
    assert sorted(p.name for p in repo.iterdir()) == ["app", "tests"]  # nothing written here


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


def test_symlinked_output_dir_leading_out_is_refused(repo, tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (repo / "context").symlink_to(outside)
    with pytest.raises(PackError, match="symlink"):
        mapper(repo, pack_dir="context/packs")
    assert list(outside.iterdir()) == []


def test_faulty_end_lines_cost_nothing():
    from repomapper.pack.links import _owners

    huge = Tag("a.py", 1, 10**12, "f", "def", "function")
    inner = Tag("a.py", 3, 3, "g", "def", "function")
    owner = _owners([huge, inner], last=3)
    assert owner == {1: huge, 2: huge, 3: inner}


CONFIG = '''import typing as t

T = t.TypeVar("T")


class ConfigAttribute(t.Generic[T]):
    """Makes an attribute forward to the config"""

    def __init__(self, name: str) -> None:
        self.__name__ = name

    def __get__(self, obj, owner=None):
        return obj.config[self.__name__]


class Config(dict):
    """Works exactly like a dict but provides ways to fill it from files."""

    def __init__(self, root_path, defaults=None) -> None:
        super().__init__(defaults or {})
        self.root_path = root_path

    def from_prefixed_env(self, prefix: str = "FLASK") -> bool:
        """Load any environment variables that start with ``FLASK_``."""
        return True

    def from_mapping(self, mapping=None, **kwargs) -> bool:
        """Updates the config like update() ignoring items with non-upper keys."""
        return True
'''


def test_a_small_pack_shows_methods_under_their_own_class(tmp_path):
    # issue 25: at a small budget the text showed `class ConfigAttribute` and then two methods
    # of `Config`, as if they were ConfigAttribute's
    root = make_repo(tmp_path / "cfg", {"config.py": CONFIG})
    with mapper(root) as m:
        pack = m.generate_context_pack_sync(
            "cfg", "from_prefixed_env and from_mapping of the config", [], "coding", 100
        )
    (f,) = pack.files
    assert f.mode == "signatures"
    lines = f.content.splitlines()
    for method in ("def from_prefixed_env(", "def from_mapping("):
        at = next(i for i, line in enumerate(lines) if method in line)
        owner = [line for line in lines[:at] if line.startswith("class ")][-1]
        assert owner == "class Config(dict):", f.content
    assert {s.scope for s in pack.symbols if s.name.startswith("from_")} == {"Config"}


def test_a_pack_follows_an_edit_between_two_packs(repo):
    with mapper(repo) as m:
        before = m.generate_context_pack_sync("e1", "save", ["app/api.py"], "coding")
        assert "unrelated_helper" not in json.dumps(before.to_dict()["dependencies"])
        (repo / "app/api.py").write_text(
            FILES["app/api.py"]
            + "\n\nfrom app.util import unrelated_helper\n\n\n"
            + "def twice(request):\n    return unrelated_helper(request)\n"
        )
        after = m.generate_context_pack_sync("e1", "save", ["app/api.py"], "coding")
    assert ("app/api.py::twice", "app/util.py::unrelated_helper", "call") in [
        (d.from_symbol, d.to_symbol, d.kind) for d in after.dependencies
    ]


def test_dependents_read_only_the_files_that_could_link(repo, monkeypatch):
    from repomapper.pack.links import SymbolLinks

    # a bare call no import explains: rule 4 links it to the one module-level definition
    # and a call of a method name from a file that imports no definer of it (never linked)
    (repo / "app/loose.py").write_text(
        "def uses_it():\n    return normalise_key(1)\n\n\ndef saves(x):\n    return x.save(1)\n"
    )
    with mapper(repo) as m:
        symbols = [
            "app/util.py::normalise_key",
            "app/memory.py::MemoryStore",
            "app/memory.py::MemoryStore.save",
            "app/base.py::Store",
            "app/util.py::",
        ]
        pruned = {s: m.links().get_dependents(s, 2) for s in symbols}
        monkeypatch.setattr(
            SymbolLinks,
            "_could_refer",
            lambda self, path, qual: self.view.referrers(qual.rsplit(".", 1)[-1]),
        )
        every = {s: m.links().get_dependents(s, 2) for s in symbols}
    assert pruned == every
    assert "app/loose.py::uses_it" in {d.from_symbol for d in pruned["app/util.py::normalise_key"]}


def test_a_file_in_full_is_its_lines_as_the_map_reads_them(repo):
    (repo / "app/crlf.py").write_bytes(b"\xef\xbb\xbfdef f():\r\n    return 1\r\n\r\ndef g(): pass")
    with mapper(repo) as m:
        pack = m.generate_context_pack_sync("crlf", "f", ["app/crlf.py"], "coding")
    (f,) = [f for f in pack.files if f.path == "app/crlf.py"]
    assert f.mode == "full" and f.spans == ((1, 4),) and f.line_count == 4
    assert f.content == "def f():\n    return 1\n\ndef g(): pass\n"


def test_an_outline_too_large_keeps_the_bodies_asked_for_first():
    """An outline that does not fit is tried with the first half of its bodies, down to none,
    before the file falls to signatures: the body asked for first is the last to go."""
    from repomapper.pack.budget import _attempts

    tried = list(_attempts(("outline", "signatures"), ["a", "b", "c", "d", "e"]))
    assert [(m, sorted(b)) for m, b in tried] == [
        ("outline", ["a", "b", "c", "d", "e"]),
        ("outline", ["a", "b"]),
        ("outline", ["a"]),
        ("outline", []),
        ("signatures", ["a", "b", "c", "d", "e"]),
    ]
    assert [m for m, _ in _attempts(("full", "outline"), [])] == ["full", "outline"]


def test_a_body_or_signature_that_matters_comes_with_its_decorators():
    """Backends leave decorators and attributes out of a definition's lines; the pack shows
    them with a body or a signature that matters (a multi-line decorator call included), and
    never takes the previous definition's lines for them."""
    from repomapper.model import Tag
    from repomapper.pack.content import render
    from repomapper.pack.models import symbol_id

    lines = [
        "@dec",  # 1
        "def a(): pass",  # 2
        "@property",  # 3
        "@route(",  # 4
        '    "/x",',  # 5
        ")",  # 6
        "def b(self):",  # 7
        "    return 1",  # 8
        "",  # 9
        "#[derive(Debug)]",  # 10
        "struct C;",  # 11
        "x = f(",  # 12
        ")",  # 13
        "def d(): pass",  # 14
    ]
    defs = [
        Tag("m.py", 2, 2, "a", "def", "function"),
        Tag("m.py", 7, 8, "b", "def", "function"),
        Tag("m.py", 11, 11, "C", "def", "class"),
        Tag("m.py", 14, 14, "d", "def", "function"),
    ]
    ids = frozenset(symbol_id("m.py", n) for n in ("b", "C", "d"))
    _, spans = render("m.py", lines, defs, (), "outline", ids, frozenset())
    assert spans == ((2, 8), (10, 11), (14, 14))  # a's header; b, C and d whole
    _, spans = render("m.py", lines, defs, (), "signatures", frozenset(), ids)
    assert spans == ((3, 7), (10, 11), (14, 14))


def test_a_ranked_body_is_priced_with_its_decorators():
    """The selection prices a body it considers by the lines the pack will show: its
    decorators too (priced from its ``def`` line, a long route left the budget short)."""
    from types import SimpleNamespace

    from repomapper.model import Tag
    from repomapper.pack.select import _Selector

    lines = ["x = 1", "@route(", '    "/x",', ")", "def b(self):", "    return 1"]
    selection = SimpleNamespace(view=SimpleNamespace(content=lambda path: lines))
    shown: list[str] = []

    def count(text: str) -> int:
        shown.append(text)
        return len(text.splitlines())

    tag = Tag("m.py", 5, 6, "b", "def", "function")
    assert _Selector._tokens(selection, "m.py", count, tag) == 5  # type: ignore[arg-type]
    assert shown[-1].startswith("@route(")
    outside = Tag("m.py", 9, 9, "c", "def", "function")  # lines the file no longer has
    assert _Selector._tokens(selection, "m.py", count, outside) == 0  # type: ignore[arg-type]


def test_the_file_ranked_second_at_a_third_of_the_best_score_is_in_the_pack(tmp_path):
    """A file ranked for the task enters with the square root of its score over the best
    file's: in proportion, the file ranked second at a third of the best (a task naming the
    first outright) fell under a cut of 0.25 and the pack showed one file of its 8,000 tokens."""
    from tests.conftest import write_tree

    root = write_tree(
        tmp_path / "pg",
        {
            "privategpt.py": "from ingest import load_documents\n\nmodel_n_ctx = 1000\n\n\n"
            "def main():\n    docs = load_documents('source')\n"
            "    return gpt_answer(docs, model_n_ctx)\n\n\n"
            "def gpt_answer(docs, n_ctx):\n    return docs[:n_ctx]\n",
            "ingest.py": "def load_single_document(path):\n    with open(path) as f:\n"
            "        return f.read()\n\n\ndef load_documents(folder):\n"
            "    return [load_single_document(folder)]\n",
            "unrelated.py": "def colour_wheel(hue):\n    return hue % 360\n",
        },
    )
    task = (
        "Segfault in privategpt: not enough space in the context memory pool when answering"
        " with the gpt model while it loads. Can I configure it?"
    )
    with mapper(root, env={"MIN_RELEVANCE_SCORE": "0.25"}) as m:
        ranked = m.repomap.rank(task=task)
        scores = {f.path: f.score for f in ranked.files}
        assert [f.path for f in ranked.files][:2] == ["privategpt.py", "ingest.py"]
        assert 0.2 < scores["ingest.py"] / scores["privategpt.py"] < 0.5  # the premise
        pack = m.generate_context_pack_sync("t", task, [], "coding", 8000)
    assert paths(pack)[:2] == ["privategpt.py", "ingest.py"]
    assert "unrelated.py" not in paths(pack)


def test_what_the_budget_leaves_shows_the_bodies_of_the_functions_that_matter(
    tmp_path, monkeypatch
):
    """A pack from the task's text alone spends what is left once every file is placed on the
    bodies of the other functions that matter in its outlines, in order, never over budget;
    a pack with a target does not (what else it shows whole is what the target uses)."""
    from tests.conftest import write_tree

    root = write_tree(
        tmp_path / "pg",
        {
            "privategpt.py": "from ingest import load_documents\n\n\n"
            "def main():\n    docs = load_documents('source')\n    return answer(docs)\n\n\n"
            "def answer(docs):\n    return docs[:1]\n",
            "ingest.py": "def load_single_document(path):\n    with open(path) as f:\n"
            "        return f.read()\n\n\ndef load_documents(folder):\n"
            "    return [load_single_document(folder)]\n",
        },
    )
    task = "privategpt crashes on main while it loads the documents folder"
    body = "    return [load_single_document(folder)]"
    from repomapper.pack import budget

    widened = []
    widen = budget._Filling.widen
    monkeypatch.setattr(budget._Filling, "widen", lambda self: widened.append(widen(self)))
    with mapper(root) as m:
        roomy = m.generate_context_pack_sync("t", task, [], "coding", 8000)
        tight = m.generate_context_pack_sync("t", task, [], "coding", 60)
        assert len(widened) == 2
        m.generate_context_pack_sync("t", task, ["privategpt.py"], "coding", 8000)
        assert len(widened) == 2
    shown = {f.path: f.content for f in roomy.files}
    assert body in shown["ingest.py"]
    assert roomy.token_count <= 8000 and tight.token_count <= 60
    assert all(body not in f.content for f in tight.files)
