"""Every surface says what it does (issue 25, "Surfaces that say one thing and do another"):
the CLI (text and json), the library and the MCP tools refuse the same bad input the same way,
and say the same things about a run."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from repomapper.cli import main
from repomapper.contract import run_map
from repomapper.discover import GlobError
from repomapper.repomap import RepoMap
from repomapper.serve.service import Service, ServiceOptions
from tests.conftest import write_tree

TREE = {
    "pkg/a.py": "def alpha():\n    return 1\n",
    "pkg/b.py": "from pkg.a import alpha\n\n\ndef beta():\n    return alpha()\n",
    "tests/test_a.py": "from pkg.a import alpha\n\n\ndef test_alpha():\n    assert alpha()\n",
}


@pytest.fixture
def repo(tmp_path):
    return write_tree(tmp_path / "repo", TREE)


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


@pytest.fixture
def service():
    s = Service(None, ServiceOptions(use_cache=False, watch=False, warm_up=False))
    yield s
    s.close()


# -- 1. an invalid glob is refused on every surface ------------------------------------------

BAD_GLOBS = ["[", "src/[ab", "[]"]


@pytest.mark.parametrize("glob", BAD_GLOBS)
@pytest.mark.parametrize("option", ["--include", "--exclude"])
def test_cli_text_refuses_an_invalid_glob(run, repo, option, glob):
    r = run("map", repo, "--include", "**/*.py", option, glob)
    assert r.exit_code == 2, r.stderr
    assert r.stdout == ""
    [line] = r.stderr.splitlines()
    assert line.startswith(f"repomapper: error: invalid {option} pattern {glob!r}")


@pytest.mark.parametrize("option", ["--include", "--exclude"])
def test_graph_refuses_an_invalid_glob(run, repo, option):
    r = run("graph", repo, "--format", "json", option, "[")
    assert r.exit_code == 2 and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"repomapper: error: invalid {option} pattern '[': it has an unclosed '['"
    ]


@pytest.mark.parametrize("glob", BAD_GLOBS)
@pytest.mark.parametrize("option", ["--include", "--exclude"])
def test_cli_json_refuses_an_invalid_glob(run, repo, option, glob):
    r = run("map", repo, option, glob, "--format", "json")
    assert r.exit_code == 2, r.stderr
    env = json.loads(r.stdout)
    assert env["outcome"] == "error"
    assert env["reason"]["code"] == "invalid_input"
    assert (
        env["reason"]["field"]
        == {"--include": "include_globs", "--exclude": "exclude_globs"}[option]
    )
    assert env["reason"]["value"] == glob


@pytest.mark.parametrize("glob", BAD_GLOBS)
@pytest.mark.parametrize("key", ["include", "exclude"])
def test_library_refuses_an_invalid_glob(repo, key, glob):
    rm = RepoMap(repo, use_cache=False, **{key: [glob]})
    try:
        with pytest.raises(GlobError, match=f"invalid --{key} pattern"):
            rm.map()
    finally:
        rm.close()
    env = run_map({"clone_path": str(repo), f"{key}_globs": [glob]})
    assert env.outcome == "error" and env.reason.code == "invalid_input"
    assert env.reason.field == f"{key}_globs"


@pytest.mark.parametrize("glob", BAD_GLOBS)
@pytest.mark.parametrize("key", ["include_globs", "exclude_globs"])
def test_mcp_refuses_an_invalid_glob(service, repo, key, glob):
    result = service.call("repo_map", {"clone_path": str(repo), key: [glob]})
    assert result.is_error
    assert result.data["reason"]["code"] == "invalid_input"
    assert result.data["reason"]["field"] == key


def test_a_valid_exclude_still_excludes(run, repo):
    r = run("map", repo, "--include", "**/*.py", "--exclude", "tests/", "--format", "json")
    assert r.exit_code == 0, r.stderr
    paths = {f["path"] for f in json.loads(r.stdout)["ranked_files"]}
    assert paths == {"pkg/a.py", "pkg/b.py"}


# -- 2. "-v for the list": -v after the command name too --------------------------------------


def test_v_after_the_command_is_the_groups_v(run, repo):
    (repo / "README.md").write_text("# read me\n")
    quiet = run("map", repo)
    assert quiet.exit_code == 0 and quiet.stderr.rstrip().endswith("-v for the list")
    after = run("map", repo, "-v")
    before = run("-v", "map", repo)
    assert after.exit_code == 0, after.stderr
    assert after.stderr == before.stderr and after.stdout == before.stdout
    assert "[no_backend]" in after.stderr and "  README.md" in after.stderr
    assert "-v for the list" not in after.stderr


@pytest.mark.parametrize(
    "args",
    [
        ("tags", "{repo}/pkg"),
        ("imports", "{repo}/pkg"),
        ("graph", "{repo}", "--format", "json"),
        ("pack", "{repo}", "--task-id", "t1", "--task", "alpha"),
        ("plugins",),
    ],
)
def test_every_command_takes_v(run, repo, args):
    r = run(*(a.format(repo=repo) for a in args), "--verbose", "-v")
    assert r.exit_code == 0, r.stderr
    assert "No such option" not in r.stderr


# -- 3. the CLI's own words, one line, an envelope for every refused input, Ctrl-C is 130 ------


@pytest.mark.parametrize(
    ("args", "field", "words"),
    [
        (("--tokens", "0"), "token_budget", "--tokens must be"),
        (("--tokens", "many"), "token_budget", "'many' is not a valid integer"),
        (("--jobs", "0"), None, "--jobs must be at least 1"),
        (("--max-file-size", "0"), None, "--max-file-size must be at least 1"),
    ],
)
def test_json_usage_errors_print_the_envelope(run, repo, args, field, words):
    r = run("map", repo, "--format", "json", *args)
    assert r.exit_code == 2
    env = json.loads(r.stdout)
    assert env["outcome"] == "error" and env["reason"]["code"] == "invalid_input"
    assert env["reason"].get("field") == field
    assert words in env["reason"]["message"]


def test_json_errors_name_the_arguments_as_the_cli_does(run, tmp_path):
    missing = tmp_path / "nowhere"
    r = run("map", missing, "--format", "json")
    assert r.exit_code == 2
    reason = json.loads(r.stdout)["reason"]
    assert reason["field"] == "clone_path"  # the contract's field, for programs
    assert reason["message"] == f"ROOT {str(missing)!r} does not exist"  # the CLI's words
    assert r.stderr.splitlines() == [
        f"repomapper: error: [invalid_input] ROOT {str(missing)!r} does not exist"
    ]


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_empty_directory_is_one_line(run, tmp_path, fmt):
    (tmp_path / "empty").mkdir()
    r = run("map", tmp_path / "empty", "--format", fmt)
    assert r.exit_code == 1
    [line] = r.stderr.splitlines()
    assert "[no_files_matched]" in line and "-v for the list" not in line


def _interrupt(*args, **kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize(
    ("patched", "args"),
    [
        ("repomapper.cli._plugin_set", ("map", "{repo}")),
        ("repomapper.cli._plugin_set", ("map", "{repo}", "--format", "json")),
        ("repomapper.cli._plugin_set", ("graph", "{repo}", "--format", "json")),
        ("repomapper.cli._plugin_set", ("tags", "{repo}")),
        ("repomapper.cli._plugin_set", ("imports", "{repo}")),
        ("repomapper.cli._plugin_set", ("plugins",)),
        (
            "repomapper.pack.RepoMapper.generate_context_pack_sync",
            ("pack", "{repo}", "--task-id", "t", "--task", "x"),
        ),
        ("repomapper.conformance.cli.run_all", ("conformance", "--plugin", "python_ast")),
    ],
)
def test_ctrl_c_exits_130_with_one_line(run, repo, monkeypatch, patched, args):
    monkeypatch.setattr(patched, _interrupt)
    r = run(*(a.format(repo=repo) for a in args))
    assert r.exit_code == 130
    assert r.stderr.splitlines() == ["repomapper: interrupted"]


# -- 4. exclude_globs, one default budget, token_budget in context_pack ------------------------


def test_repo_map_excludes(service, repo):
    spec = service.specs["repo_map"].input_schema["properties"]
    assert spec["exclude_globs"]["type"] == "array"
    result = service.call("repo_map", {"clone_path": str(repo), "exclude_globs": ["tests/**"]})
    assert not result.is_error, result.data
    assert {f["path"] for f in result.data["ranked_files"]} == {"pkg/a.py", "pkg/b.py"}
    both = service.call(
        "repo_map",
        {"clone_path": str(repo), "include_globs": ["*.py"], "exclude_globs": ["b.py"]},
    )
    assert {f["path"] for f in both.data["ranked_files"]} == {"pkg/a.py", "tests/test_a.py"}


def test_one_default_budget_everywhere(service, repo, run):
    from repomapper.settings import DEFAULT_MAP_TOKENS

    spec = service.specs["repo_map"].input_schema["properties"]["token_budget"]
    assert spec["default"] == DEFAULT_MAP_TOKENS
    assert service.call("repo_map", {"clone_path": str(repo)}).data["token_budget"] == (
        DEFAULT_MAP_TOKENS
    )
    assert run_map({"clone_path": str(repo)}).token_budget == DEFAULT_MAP_TOKENS
    cli = json.loads(run("map", repo, "--format", "json").stdout)
    assert cli["token_budget"] == DEFAULT_MAP_TOKENS
    rm = RepoMap(repo, use_cache=False)
    try:
        assert rm.map().budget == DEFAULT_MAP_TOKENS
    finally:
        rm.close()


def _pack(service, repo, **budget):
    args = {"clone_path": str(repo), "task_id": "t1", "task": "alpha", **budget}
    return service.call("context_pack", args)


def test_context_pack_takes_token_budget(service, repo):
    props = service.specs["context_pack"].input_schema["properties"]
    assert props["token_budget"]["default"] == 32_000
    assert props["budget"]["deprecated"] is True and "default" not in props["budget"]
    new = _pack(service, repo, token_budget=40)
    assert not new.is_error, new.data
    assert new.data["metadata"]["budget"] == 40
    old = _pack(service, repo, budget=40)  # the deprecated name still works
    assert not old.is_error and old.data["metadata"]["budget"] == 40
    assert old.data == new.data
    assert _pack(service, repo, budget=40, token_budget=40).data == new.data
    assert _pack(service, repo).data["metadata"]["budget"] == 32_000
    clash = _pack(service, repo, budget=40, token_budget=50)
    assert clash.is_error and clash.data["error"]["code"] == "invalid_input"
    assert clash.data["error"]["field"] == "budget"


# -- 5. a plugin left out is said by map, even when the map is replayed from the cache --------

LEFT_OUT = {
    "misspelled": "tests.misbehaving_plugin.misspelled",
    "exits_on_import": "tests.misbehaving_plugin.exits_on_import",
}


@pytest.mark.parametrize("mode", sorted(LEFT_OUT))
def test_map_says_a_plugin_was_left_out(run, repo, monkeypatch, tmp_path, mode):
    cache = tmp_path / "cache"
    # first a map without the plugin: stored in the cache, with nothing to say about plugins
    clean = run("map", repo, "--cache-dir", cache)
    assert clean.exit_code == 0 and "plugin_load_error" not in clean.stderr
    monkeypatch.setenv("REPOMAPPER_PLUGINS", f"foo={LEFT_OUT[mode]}")
    for _ in range(2):  # computed, then replayed: both say it
        text = run("map", repo, "--cache-dir", cache)
        assert text.exit_code == 0, text.stderr
        assert "repomapper: warning: [plugin_load_error] plugin foo left out" in text.stderr
        env = json.loads(run("map", repo, "--cache-dir", cache, "--format", "json").stdout)
        [diag] = [d for d in env["diagnostics"] if d["code"] == "plugin_load_error"]
        assert diag["severity"] == "warning" and "plugin foo left out" in diag["message"]
    monkeypatch.delenv("REPOMAPPER_PLUGINS")
    again = run("map", repo, "--cache-dir", cache)  # and once it is gone, nothing is said
    assert again.exit_code == 0 and "plugin_load_error" not in again.stderr


# -- 6. tool input schemas a single-type function-calling dialect can read ---------------------


def _types(schema, where="$"):
    """Every ``type`` value in a JSON schema, with where it is."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "type":
                yield where, value
            elif key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                for name, sub in value.items():
                    yield from _types(sub, f"{where}.{key}.{name}")
            else:
                yield from _types(value, f"{where}.{key}")
    elif isinstance(schema, list):
        for i, sub in enumerate(schema):
            yield from _types(sub, f"{where}[{i}]")


@pytest.mark.parametrize("root_given", [False, True])
def test_every_tool_input_schema_has_single_types(root_given):
    from repomapper.serve.tools import tool_specs

    for spec in tool_specs(root_given):
        found = list(_types(spec.input_schema))
        assert found, spec.name
        for where, kind in found:
            assert isinstance(kind, str) and kind != "null", (spec.name, where, kind)


def test_null_is_still_accepted_where_it_was(service, repo):
    with_null = service.call("repo_map", {"clone_path": str(repo), "task": None})
    left_out = service.call("repo_map", {"clone_path": str(repo)})
    assert not with_null.is_error, with_null.data
    assert with_null.data == left_out.data
    found = service.call("find_symbol", {"clone_path": str(repo), "name": "alpha", "kind": None})
    assert not found.is_error and found.data["results"]


# -- 7. a pack's trimmed code files each method under its own class ----------------------------

CONFIG_PY = '''"""Configuration."""

import os


class ConfigAttribute:
    """Forward an attribute to the config."""

    def __init__(self, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return obj.config[self.name]


class Config(dict):
    """A dict with helpers to load values."""

    def from_prefixed_env(self, prefix="APP"):
        """Load values from environment variables starting with prefix."""
        for key in sorted(os.environ):
            if key.startswith(prefix):
                self[key[len(prefix) + 1 :]] = os.environ[key]
        return True

    def from_mapping(self, mapping=None, **kwargs):
        """Load values from a mapping."""
        mappings = dict(mapping or {})
        mappings.update(kwargs)
        for key, value in mappings.items():
            self[key] = value
        return True
'''
APP_PY = """from pkg.config import ConfigAttribute


class App:
    debug = ConfigAttribute("DEBUG")

    def load(self, cfg):
        cfg.from_prefixed_env("APP")
        cfg.from_mapping(debug=True)
        return cfg
"""


def _class_of_each_method(code: str) -> dict[str, str]:
    """method name -> the class header last seen above it (indentation tells a method)."""
    found, current = {}, ""
    for line in code.splitlines():
        if line.startswith("class "):
            current = line.split("(")[0].split(":")[0].removeprefix("class ")
        elif line.startswith("    def "):
            found[line.split("(")[0].removeprefix("    def ")] = current
    return found


@pytest.mark.parametrize("budget", [100, 120])
def test_pack_files_methods_under_their_own_class(run, tmp_path, budget):
    repo = write_tree(tmp_path / "p", {"pkg/config.py": CONFIG_PY, "pkg/app.py": APP_PY})
    args = ("pack", repo, "--task-id", "t", "--target", "pkg/app.py", "--budget", budget)
    task = ("--task", "App.load reads from_prefixed_env and from_mapping")
    r = run(*args, *task)
    assert r.exit_code == 0, r.stderr
    [config] = [f for f in json.loads(r.stdout)["files"] if f["path"] == "pkg/config.py"]
    assert config["mode"] == "signatures"  # trimmed: the case where headers are picked
    methods = _class_of_each_method(config["content"])
    assert methods["from_prefixed_env"] == methods["from_mapping"] == "Config", config["content"]
    markdown = run(*args, *task, "--format", "markdown").stdout
    section = markdown[markdown.index("pkg/config.py (") :]
    assert _class_of_each_method(section)["from_mapping"] == "Config"
