"""``repomapper conformance`` as a click command (the lead attaches it to the main group)."""

from __future__ import annotations

import json
from pathlib import Path

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


def test_regenerate_writes_to_the_named_goldens_dir_only(corpus, tmp_path):
    golden = corpus / "goldens" / "python" / "many.py.json"
    before = golden.read_text()
    out = tmp_path / "drafts"
    wet = run(
        "--plugin", "python_ast", "--fixtures", str(corpus), "--regenerate-goldens",
        "--goldens-dir", str(out),
    )  # fmt: skip
    assert wet.exit_code == 0, wet.output
    # the diff is against the corpus's golden, the draft lands in the named directory
    assert '+    {"name": "f0", "symbol_kind": "function", "start_line": 2,' in wet.output
    assert f"1 of 1 golden(s) changed in {out.resolve() / 'python'}" in wet.output
    drafted = out / "python" / "many.py.json"
    assert '"start_line": 2,' in drafted.read_text()
    assert golden.read_text() == before
    # the next draft is compared with what is already in the named directory: nothing to change
    again = run(
        "--plugin", "python_ast", "--fixtures", str(corpus), "--regenerate-goldens",
        "--goldens-dir", str(out), "--dry-run",
    )  # fmt: skip
    assert again.exit_code == 0, again.output
    assert "0 of 1 golden(s) would change from python_ast's output" in again.output


def installed_corpus(base):
    """A copy of a corpus as pip would leave it: inside a site-packages directory."""
    root = base / "venv" / "lib" / "python3.11" / "site-packages" / "my_plugin" / "conformance"
    (root / "fixtures" / "python").mkdir(parents=True)
    (root / "fixtures" / "python" / "one.py").write_text("def one():\n    return 1\n")
    return root


def test_regenerate_refuses_to_write_inside_an_installed_package(tmp_path):
    root = installed_corpus(tmp_path)
    refused = run("--plugin", "python_ast", "--fixtures", str(root), "--regenerate-goldens")
    assert refused.exit_code == 1
    assert "inside an installed package" in refused.output
    assert "--goldens-dir DIR" in refused.output
    assert not (root / "goldens").exists()
    named = root.parent / "goldens"  # naming a directory there is refused too
    refused = run(
        "--plugin", "python_ast", "--fixtures", str(root), "--regenerate-goldens",
        "--goldens-dir", str(named),
    )  # fmt: skip
    assert refused.exit_code == 1
    assert f"--goldens-dir {named.resolve()} is inside an installed package" in refused.output
    assert not named.exists()
    # a preview writes nothing and is allowed; a directory outside gets the draft
    assert (
        run(
            "--plugin", "python_ast", "--fixtures", str(root), "--regenerate-goldens", "--dry-run"
        ).exit_code
        == 0
    )
    out = tmp_path / "checkout" / "goldens"
    ok = run(
        "--plugin", "python_ast", "--fixtures", str(root), "--regenerate-goldens",
        "--goldens-dir", str(out),
    )  # fmt: skip
    assert ok.exit_code == 0, ok.output
    assert '"name": "one"' in (out / "python" / "one.py.json").read_text()


def test_installed_package_dir_knows_this_interpreters_site_packages():
    import sysconfig

    from repomapper.conformance.regenerate import installed_package_dir

    purelib = Path(sysconfig.get_paths()["purelib"])
    assert installed_package_dir(purelib / "pkg" / "goldens") == purelib.resolve()
    assert installed_package_dir(Path(__file__).parent) is None


def test_goldens_dir_needs_regenerate():
    result = run("--plugin", "python_ast", "--goldens-dir", "x")
    assert result.exit_code == 2
    assert "--goldens-dir only applies to --regenerate-goldens" in result.output
