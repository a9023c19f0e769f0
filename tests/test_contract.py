"""The repo.map contract: request validation, outcomes, the envelope and its JSON Schemas."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from repomapper.contract import ENVELOPE_KEYS, SCHEMA, MapOptions, parse_request, run_map
from repomapper.contract.envelope import Reason, from_result, ranked_file_entry
from repomapper.contract.request import ContractError
from repomapper.contract.schema import REQUEST_SCHEMA, RESPONSE_SCHEMA, render
from repomapper.registry import PluginConfig, PluginSet

jsonschema = pytest.importorskip("jsonschema", reason="jsonschema comes with the dev extra")

DOCS = Path(__file__).resolve().parent.parent / "docs" / "schemas"
PINNED_KEYS = [
    "schema",
    "outcome",
    "reason",
    "map",
    "tokens_estimated",
    "tokens_exact",
    "tokenizer",
    "token_budget",
    "files_covered",
    "files_total",
    "counts",
    "ranked_files",
    "ranked_files_total",
    "ranked_symbols",
    "diagnostics",
    "next",
]


def valid(envelope: dict) -> dict:
    jsonschema.validate(envelope, RESPONSE_SCHEMA, cls=jsonschema.Draft202012Validator)
    return envelope


def answer(request: dict, **kw) -> dict:
    return valid(run_map(request, **kw).to_dict())


def test_envelope_key_set_is_pinned(pyrepo):
    assert list(ENVELOPE_KEYS) == PINNED_KEYS
    for req in ({"clone_path": str(pyrepo)}, {"clone_path": "relative"}):
        assert list(run_map(req).to_dict()) == PINNED_KEYS
    assert RESPONSE_SCHEMA["required"] == PINNED_KEYS


def test_docs_schemas_are_the_generated_ones():
    assert (DOCS / "repo_map.request.json").read_text("utf-8") == render(REQUEST_SCHEMA)
    assert (DOCS / "repo_map.response.json").read_text("utf-8") == render(RESPONSE_SCHEMA)
    for schema in (REQUEST_SCHEMA, RESPONSE_SCHEMA):
        jsonschema.Draft202012Validator.check_schema(schema)


def test_ok_answer(pyrepo):
    d = answer(
        {
            "clone_path": str(pyrepo),
            "token_budget": 300,
            "max_ranked": 2,
            "task": "fix apply_discount",
        }
    )
    assert d["schema"] == SCHEMA and d["outcome"] == "ok" and d["reason"] is None
    assert (
        0 < d["tokens_estimated"] <= 300
        and d["tokenizer"] == "cl100k_base"
        and d["token_budget"] == 300
    )
    assert d["files_total"] == 7 and 0 < d["files_covered"] <= d["counts"]["files_mapped"] == 6
    assert d["counts"]["files_no_backend"] == 1
    assert len(d["ranked_files"]) == 2 and d["ranked_files_total"] == 6
    assert all(set(f) == {"path", "score", "why"} for f in d["ranked_files"])
    assert "max_ranked" in d["next"]
    assert d["ranked_symbols"][0]["name"] == "apply_discount"


def test_request_validates_against_request_schema(pyrepo):
    req = {
        "clone_path": str(pyrepo),
        "token_budget": 800,
        "include_globs": ["**/*.py"],
        "exclude_globs": ["tests/"],
        "languages": ["python"],
        "task": "t",
        "chat_files": ["shop/cli.py"],
        "mentioned_files": [],
        "mentioned_idents": ["Catalog"],
        "max_ranked": 5,
    }
    jsonschema.validate(req, REQUEST_SCHEMA)
    assert parse_request(req).to_dict() == {**req, "task": "t"}
    assert answer(req)["outcome"] == "ok"
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**req, "session_id": "x"}, REQUEST_SCHEMA)


def test_deterministic(pyrepo):
    req = {"clone_path": str(pyrepo), "token_budget": 400}
    assert (
        run_map(req).to_json()
        == run_map(req).to_json()
        == run_map(req, MapOptions(use_cache=False)).to_json()
    )


@pytest.mark.parametrize(
    "globs,expected",
    [
        (["*.go"], {"a.go", "x/b.go", "x/y/c.go"}),
        (["**/*.go"], {"a.go", "x/b.go", "x/y/c.go"}),
        (["src/**/*.py"], {"src/a.py", "src/p/q.py"}),
        (["src/*.py"], {"src/a.py"}),
        (["./src/*.py"], {"src/a.py"}),
        (["[ab].py"], {"a.py", "b.py", "src/a.py"}),
        (["[!a].py"], {"b.py", "src/p/q.py"}),
        (["*.go", "src/**"], {"a.go", "x/b.go", "x/y/c.go", "src/a.py", "src/p/q.py"}),
    ],
)
def test_globs_work_as_users_expect(make_tree, globs, expected):
    root = make_tree(
        {
            "a.go": "package a\nfunc A() {}\n",
            "x/b.go": "package x\nfunc B() {}\n",
            "x/y/c.go": "package y\nfunc C() {}\n",
            "src/a.py": "def a(): pass\n",
            "src/p/q.py": "def q(): pass\n",
            "a.py": "def top(): pass\n",
            "b.py": "def b(): pass\n",
        }
    )
    d = answer({"clone_path": str(root), "include_globs": globs, "max_ranked": 100})
    assert d["outcome"] == "ok"
    assert {f["path"] for f in d["ranked_files"]} == expected and d["files_total"] == len(expected)


@pytest.mark.parametrize(
    "glob",
    [
        "*.py; rm -rf /",
        "$(id).py",
        "`id`",
        "a b.py",
        "#comment",
        "!*.py",
        "[abc",
        "../*.py",
        "x" * 257,
        "*.py\n",
        "a|b",
        "{a,b}.py",
        "src\\*.py",
        "a[!b",
    ],
)
def test_unsafe_globs_are_invalid_input_naming_the_value(pyrepo, glob):
    d = answer({"clone_path": str(pyrepo), "include_globs": [glob]})
    assert d["outcome"] == "error" and d["reason"]["code"] == "invalid_input"
    assert d["reason"]["field"] == "include_globs"
    assert d["reason"]["value"] == glob or glob.startswith("x" * 80)
    assert d["map"] == "" and d["files_total"] == 0


@pytest.mark.parametrize(
    "request_,field,fragment",
    [
        ({"token_budge": 10}, "token_budge", "did you mean 'token_budget'"),
        ({"include_glob": ["*.py"]}, "include_glob", "did you mean 'include_globs'"),
        ({"session_id": "abc"}, "session_id", "no sessions"),
        ({"_session_id": "abc"}, "_session_id", "no sessions"),
        ({"token_budget": 0}, "token_budget", "between 1 and"),
        ({"token_budget": "800"}, "token_budget", "integer"),
        ({"token_budget": True}, "token_budget", "integer"),
        ({"include_globs": "*.py"}, "include_globs", "not a string"),
        ({"include_globs": [3]}, "include_globs", "must be strings"),
        ({"languages": ["pyton"]}, "languages", "did you mean 'python'"),
        ({"languages": ["a;b"]}, "languages", "not a language name"),
        ({"task": 3}, "task", "string"),
        ({"max_ranked": -1}, "max_ranked", "between 0 and"),
    ],
)
def test_bad_requests(pyrepo, request_, field, fragment):
    d = answer({"clone_path": str(pyrepo), **request_})
    assert d["outcome"] == "error" and d["reason"]["code"] == "invalid_input"
    assert d["reason"]["field"] == field and fragment in d["reason"]["message"]
    if "did you mean" in fragment:
        assert d["reason"]["suggestion"] == fragment.split("'")[1]


def test_bad_clone_paths(tmp_path):
    f = tmp_path / "file.txt"
    f.write_text("x")
    for value, fragment in [
        (None, "required"),
        ("", "required"),
        ("rel/path", "absolute"),
        (str(tmp_path / "missing"), "does not exist"),
        (str(f), "not a directory"),
        (123, "required"),
    ]:
        d = answer({"clone_path": value})
        assert d["outcome"] == "error" and d["reason"]["code"] == "invalid_input"
        assert d["reason"]["field"] == "clone_path" and fragment in d["reason"]["message"], value
    assert answer([1, 2])["reason"]["code"] == "invalid_input"  # not an object


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_clone_path(tmp_path):
    d = tmp_path / "locked"
    d.mkdir()
    d.chmod(0)
    try:
        assert "not readable" in answer({"clone_path": str(d)})["reason"]["message"]
    finally:
        d.chmod(0o700)


def test_empty_outcomes_with_reason_and_counts(tmp_path, make_tree):
    empty = tmp_path / "empty"
    empty.mkdir()
    d = answer({"clone_path": str(empty)})
    assert (d["outcome"], d["reason"]["code"], d["counts"]["files_seen"]) == (
        "empty",
        "no_files_matched",
        0,
    )
    assert "include_globs" in d["next"]

    root = make_tree({"a.py": "def f(): pass\n", "b.py": "print(1)\n"})
    d = answer({"clone_path": str(root), "include_globs": ["*.go"]})
    assert d["reason"]["code"] == "no_files_matched" and d["counts"]["files_seen"] == 2
    assert "*.go" in d["reason"]["message"]

    d = answer({"clone_path": str(root), "languages": ["go"]})
    assert d["reason"]["code"] == "no_files_matched" and "go" in d["reason"]["message"]

    d = answer({"clone_path": str(root), "token_budget": 1})
    assert d["reason"]["code"] == "budget_too_small" and d["counts"]["files_mapped"] == 2

    d = answer({"clone_path": str(root), "chat_files": ["a.py", "b.py"]})
    assert d["reason"]["code"] == "all_in_chat"

    only_calls = make_tree({"main.py": "print(1)\nprint(2)\n"}, name="calls")
    d = answer({"clone_path": str(only_calls)})
    assert d["outcome"] == "empty" and d["reason"]["code"] == "no_symbols"
    assert d["map"]  # what was computed is kept: the file list

    unknown = make_tree({"notes.unknownext": "hello\n"}, name="unknown")
    d = answer({"clone_path": str(unknown)})
    assert d["reason"]["code"] == "no_backend" and d["counts"]["files_no_backend"] == 1


def test_backend_missing_for_a_language_is_an_error_with_install(make_tree):
    root = make_tree({"a.rs": "fn main() {}\n"})
    plugins = PluginSet(PluginConfig(blocked=("treesitter", "ctags")))
    d = answer(
        {"clone_path": str(root), "languages": ["rust"]}, options=MapOptions(plugins=plugins)
    )
    assert d["outcome"] == "error" and d["reason"]["code"] == "backend_missing"
    assert d["reason"]["install"] == 'pip install "repomapper[languages]"'
    d = answer({"clone_path": str(root), "languages": ["zig"]}, options=MapOptions(plugins=plugins))
    assert d["reason"]["code"] == "backend_missing" and "universal-ctags" in d["reason"]["install"]


def test_internal_failure_is_an_error_not_an_empty_success(pyrepo, monkeypatch):
    from repomapper import stages

    def boom(*a, **k):
        raise RuntimeError("kaput")

    monkeypatch.setattr(stages, "map_repository", boom)
    d = answer({"clone_path": str(pyrepo)})
    assert (
        d["outcome"] == "error"
        and d["reason"]["code"] == "internal"
        and "kaput" in d["reason"]["message"]
    )


def test_why_accepted_present_or_absent(pyrepo):
    from dataclasses import dataclass

    @dataclass(frozen=True)
    class Why:
        signal: str
        detail: str
        weight: float

    @dataclass(frozen=True)
    class WithWhy:
        path: str
        score: float
        why: tuple = ()

    class Plain:
        path, score = "a.py", 0.5

    assert ranked_file_entry(Plain()) == {"path": "a.py", "score": 0.5, "why": []}
    e = ranked_file_entry(
        WithWhy(
            "a.py",
            0.5,
            (
                Why("mentioned_ident", "Catalog", 10.0),
                {"signal": "import", "detail": "b.py", "weight": 1},
            ),
        )
    )
    assert e["why"] == [
        {"signal": "mentioned_ident", "detail": "Catalog", "weight": 10.0},
        {"signal": "import", "detail": "b.py", "weight": 1.0},
    ]
    from repomapper.repomap import RepoMap

    result = RepoMap(pyrepo, 500).map()
    result = type(result)(
        **{
            **{f: getattr(result, f) for f in result.__dataclass_fields__},
            "ranked_files": (WithWhy("shop/money.py", 0.4, (Why("s", "d", 1.0),)),),
        }
    )
    valid(from_result(result, max_ranked=5).to_dict())
    valid(from_result(result, max_ranked=5, reason=Reason("no_symbols", "m")).to_dict())


def test_parse_request_errors_are_contract_errors(pyrepo):
    with pytest.raises(ContractError) as info:
        parse_request({"clone_path": str(pyrepo), "bogus": 1})
    assert info.value.code == "invalid_input" and info.value.field == "bogus"
    assert parse_request({}, default_root=str(pyrepo)).clone_path == str(pyrepo)


def test_cli_json_is_the_envelope(pyrepo, make_tree):
    from click.testing import CliRunner

    from repomapper.cli import main

    r = CliRunner().invoke(main, ["map", str(pyrepo), "--format", "json", "--tokens", "400"])
    d = valid(json.loads(r.stdout))
    assert r.exit_code == 0 and d["outcome"] == "ok" and list(d) == PINNED_KEYS
    r = CliRunner().invoke(main, ["map", str(pyrepo), "--format", "json", "--include", "*.py;x"])
    assert r.exit_code == 2 and valid(json.loads(r.stdout))["reason"]["code"] == "invalid_input"
    assert "invalid_input" in r.stderr


def test_missing_ctags_is_explained_with_the_install_command(make_tree):
    """The helmdeck failure: ctags absent gave an empty success ten times. Now: a reason and a fix."""
    root = make_tree({"a.pl": "sub hello {\n  return 1;\n}\n"})  # a type only ctags maps
    env = {**os.environ, "REPOMAPPER_CTAGS": str(root / "no-such-ctags")}
    proc = subprocess.run(
        [sys.executable, "-m", "repomapper.cli", "map", str(root), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    d = valid(json.loads(proc.stdout))
    assert proc.returncode == 1
    assert (d["outcome"], d["reason"]["code"]) == ("empty", "all_backends_missing")
    assert (
        "universal-ctags" in d["reason"]["install"]
        and d["counts"]["files_backend_unavailable"] == 1
    )
