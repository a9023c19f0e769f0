"""``repomapper conformance`` as a click command (the lead attaches it to the main group)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from repomapper.conformance.cli import conformance_command
from repomapper.conformance.corpus import BUILTIN_ROOT
from repomapper.conformance.goldens import Golden, GoldenDef


def run(*args: str):
    return CliRunner().invoke(conformance_command, list(args), catch_exceptions=False)


def test_text_table_for_one_plugin():
    result = run("--plugin", "python_ast", "--examples", "3")
    assert result.exit_code == 0, result.output
    assert "python_ast" in result.output and "python" in result.output
    assert "8/8" in result.output  # properties passed/total
    assert "conformance OK: 1 plugin/language pair(s) passed, 0 failed" in result.output


def test_json_output_is_one_object():
    result = run("--plugin", "python_ast", "--examples", "0", "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.output)
    assert data["ok"] is True
    assert [(r["plugin"], r["language"]) for r in data["results"]] == [("python_ast", "python")]


def test_unknown_plugin_exits_non_zero():
    result = run("--plugin", "no_such_plugin", "--examples", "0")
    assert result.exit_code == 1
    assert "no_such_plugin: no such plugin; registered:" in result.output


def test_regenerating_needs_a_plugin():
    result = run("--regenerate-goldens")
    assert result.exit_code == 2
    assert "--regenerate-goldens needs --plugin NAME" in result.output


FUNCTIONS = 40


@pytest.fixture
def corpus(tmp_path):
    """An extra corpus whose golden was written for a version of the file one line shorter."""
    root = tmp_path / "corpus"
    source = "# header\n" + "".join(f"def f{i}():\n    return {i}\n" for i in range(FUNCTIONS))
    (root / "fixtures" / "python").mkdir(parents=True)
    (root / "fixtures" / "python" / "many.py").write_text(source)
    stale = Golden(
        definitions=tuple(
            GoldenDef(f"f{i}", 1 + 2 * i, 2 + 2 * i, ("function",), "") for i in range(FUNCTIONS)
        ),
        references=(),
    )
    (root / "goldens" / "python").mkdir(parents=True)
    (root / "goldens" / "python" / "many.py.json").write_text(stale.dumps())
    return root


def test_extra_fixtures_are_checked_and_failures_explained(corpus):
    result = run("--plugin", "python_ast", "--fixtures", str(corpus), "--examples", "0")
    assert result.exit_code == 1
    assert "many.py: definition 'f0' expected at line 1, found at line 2 (off by one?)" in (
        result.output
    )
    assert "40 of 40 missing definitions are reported one line below" in result.output


def test_regenerate_shows_the_diff_and_rewrites_only_that_corpus(corpus):
    golden = corpus / "goldens" / "python" / "many.py.json"
    builtin = {p: p.read_text() for p in (BUILTIN_ROOT / "goldens").rglob("*.json")}
    before = golden.read_text()

    dry = run(
        "--plugin", "python_ast", "--fixtures", str(corpus), "--regenerate-goldens", "--dry-run"
    )
    assert dry.exit_code == 0, dry.output
    assert '-    {"name": "f0", "symbol_kind": "function", "start_line": 1,' in dry.output
    assert '+    {"name": "f0", "symbol_kind": "function", "start_line": 2,' in dry.output
    assert "1 of 1 golden(s) would change from python_ast's output" in dry.output
    assert golden.read_text() == before

    wet = run("--plugin", "python_ast", "--fixtures", str(corpus), "--regenerate-goldens")
    assert wet.exit_code == 0
    assert '"start_line": 2,' in golden.read_text()
    assert {p: p.read_text() for p in builtin} == builtin  # ours untouched
    again = run("--plugin", "python_ast", "--fixtures", str(corpus), "--examples", "0")
    assert again.exit_code == 0, again.output
