import json
import os

import pytest
from click.testing import CliRunner

from repomapper.cli import main


@pytest.fixture
def run():
    runner = CliRunner()

    def invoke(*args):
        return runner.invoke(main, [str(a) for a in args], catch_exceptions=False)

    return invoke


def test_map_text(run, pyrepo):
    r = run("map", pyrepo, "--tokens", "512")
    assert r.exit_code == 0
    assert "shop/catalog.py:" in r.stdout and "class Catalog:" in r.stdout


def test_map_json_envelope(run, pyrepo):
    r = run("map", pyrepo, "--tokens", "512", "--format", "json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    for key in ("map", "tokens_estimated", "tokenizer", "files_covered", "files_total", "ranked_files", "diagnostics"):
        assert key in d
    assert d["tokenizer"] == "cl100k_base" and 0 < d["tokens_estimated"] <= 512
    assert d["files_total"] == 7 and d["files_covered"] >= 4
    assert d["ranked_files"][0]["path"].startswith("shop/")


def test_chat_and_mentions_change_the_map(run, pyrepo):
    plain = json.loads(run("map", pyrepo, "--format", "json").stdout)
    chat = json.loads(run("map", pyrepo, "--format", "json", "--chat", pyrepo / "shop/cli.py").stdout)
    assert "shop/cli.py:" in plain["map"] or "shop/cli.py" in plain["map"]
    assert "shop/cli.py" not in chat["map"]
    ident = json.loads(run("map", pyrepo, "--format", "json", "--mention-ident", "apply_discount").stdout)
    assert ident["ranked_symbols"][0]["name"] == "apply_discount"


def test_task_from_option_and_stdin(run, pyrepo):
    d = json.loads(run("map", pyrepo, "--format", "json", "--task", "fix apply_discount rounding").stdout)
    assert d["ranked_symbols"][0]["name"] == "apply_discount"
    r = CliRunner().invoke(main, ["map", str(pyrepo), "--format", "json", "--task-file", "-"],
                           input="fix apply_discount rounding")
    assert json.loads(r.stdout)["ranked_symbols"][0]["name"] == "apply_discount"


@pytest.mark.parametrize("args,message", [
    (["map", "/definitely/not/here"], "no such directory"),
    (["map", ".", "--tokens", "0"], "--tokens must be at least 1"),
    (["map", ".", "--include", "x" * 5000], "too long"),
])
def test_bad_input_one_line_no_traceback(run, args, message):
    r = run(*args)
    assert r.exit_code == 2
    assert message in r.stderr
    assert "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_unreadable_root(run, tmp_path):
    d = tmp_path / "locked"
    d.mkdir()
    d.chmod(0)
    try:
        r = run("map", d)
        assert r.exit_code == 2 and "permission denied" in r.stderr
    finally:
        d.chmod(0o700)


def test_empty_map_says_why(run, tmp_path, make_tree):
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run("map", empty)
    assert r.exit_code == 1 and "no_files_matched" in r.stderr
    root = make_tree({"a.py": "x = 1\n"})
    r = run("map", root, "--include", "*.go", "--format", "json")
    assert r.exit_code == 1
    d = json.loads(r.stdout)
    assert d["map"] == "" and d["diagnostics"][0]["code"] == "no_files_matched"
    assert "*.go" in d["diagnostics"][0]["message"]
    root2 = make_tree({"notes.unknownext": "hello\n"}, name="repo2")
    r = run("map", root2, "--format", "json")
    codes = [x["code"] for x in json.loads(r.stdout)["diagnostics"]]
    assert r.exit_code == 1 and "nothing_to_map" in codes and "no_backend" in codes


def test_tags_json_records(run, pyrepo):
    r = run("tags", pyrepo / "shop" / "money.py", "--format", "json")
    assert r.exit_code == 0
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    fmt = next(x for x in recs if x["name"] == "format_price" and x["kind"] == "def")
    assert fmt["line"] == 6 and fmt["end_line"] == 7 and fmt["symbol_kind"] == "function"
    assert fmt["plugin"] == "python_ast" and fmt["path"].endswith("shop/money.py")
    assert {"path", "line", "end_line", "name", "kind", "symbol_kind", "plugin"} <= set(fmt)


def test_imports_json_records_for_a_directory(run, pyrepo):
    r = run("imports", pyrepo / "shop", "--format", "json")
    assert r.exit_code == 0
    recs = [json.loads(line) for line in r.stdout.splitlines()]
    orders = [x for x in recs if x["path"].endswith("shop/orders.py")]
    assert [(x["source"], x["names"], x["is_relative"], x["level"]) for x in orders] == [
        ("catalog", ["Catalog", "Product"], True, 1),
        ("money", ["apply_discount", "format_price"], True, 1),
    ]


def test_tags_of_missing_path_fails_cleanly(run, tmp_path):
    r = run("tags", tmp_path / "nope.py")
    assert r.exit_code == 2 and "no such file" in r.stderr


def test_plugins_lists_backends(run):
    r = run("plugins")
    assert r.exit_code == 0 and "python_ast" in r.stdout and "capabilities" in r.stdout
    d = json.loads(run("plugins", "--format", "json").stdout)
    selected = {p["name"]: p["selected"] for p in d["plugins"]}
    assert selected["python_ast"] is True and selected["python_libcst"] is False
    assert {"treesitter", "ctags"} <= set(selected)
    assert "python_libcst" in r.stdout and "--python-backend libcst" in r.stdout
