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
    out = r.stdout
    headers = [line for line in out.splitlines() if line.endswith(".py:")]
    # every Python file, the most referenced first; each definition under its file's header
    assert headers[0] == "shop/money.py:" and len(headers) == 6
    assert set(headers) == {
        "shop/money.py:",
        "shop/orders.py:",
        "shop/catalog.py:",
        "shop/__init__.py:",
        "shop/cli.py:",
        "tests/test_orders.py:",
    }
    catalog = out.index("shop/catalog.py:")
    assert catalog < out.index("class Catalog:") < out.index("def find_product(self, sku: str)")
    assert out.index("shop/money.py:") < out.index("def apply_discount(") < catalog
    assert "⋮" in out and "README.md" not in out
    # one summary line on stderr: what was mapped, and why the rest was not
    assert r.stderr.splitlines() == [
        "repomapper: mapped 6 of 7 files (6 shown within 512 tokens); 1 without a backend; "
        "-v for the list"
    ]


def test_map_json_envelope(run, pyrepo):
    r = run("map", pyrepo, "--tokens", "512", "--format", "json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    for key in (
        "map",
        "tokens_estimated",
        "tokenizer",
        "files_covered",
        "files_total",
        "ranked_files",
        "diagnostics",
    ):
        assert key in d
    assert d["tokenizer"] == "cl100k_base" and 0 < d["tokens_estimated"] <= 512
    assert d["files_total"] == 7 and d["files_covered"] >= 4
    assert d["ranked_files"][0]["path"].startswith("shop/")


def test_chat_and_mentions_change_the_map(run, pyrepo):
    plain = json.loads(run("map", pyrepo, "--format", "json").stdout)
    chat = json.loads(
        run("map", pyrepo, "--format", "json", "--chat", pyrepo / "shop/cli.py").stdout
    )
    assert "shop/cli.py:" in plain["map"] or "shop/cli.py" in plain["map"]
    assert "shop/cli.py" not in chat["map"]
    ident = json.loads(
        run("map", pyrepo, "--format", "json", "--mention-ident", "apply_discount").stdout
    )
    assert ident["ranked_symbols"][0]["name"] == "apply_discount"


def test_task_from_option_and_stdin(run, pyrepo):
    d = json.loads(
        run("map", pyrepo, "--format", "json", "--task", "fix apply_discount rounding").stdout
    )
    assert d["ranked_symbols"][0]["name"] == "apply_discount"
    r = CliRunner().invoke(
        main,
        ["map", str(pyrepo), "--format", "json", "--task-file", "-"],
        input="fix apply_discount rounding",
    )
    assert json.loads(r.stdout)["ranked_symbols"][0]["name"] == "apply_discount"


@pytest.mark.parametrize(
    "args,message",
    [
        (["map", "/definitely/not/here"], "no such directory"),
        (["map", ".", "--tokens", "0"], "--tokens must be at least 1"),
        (["map", ".", "--include", "x" * 5000], "too long"),
        (["map", ".", "--max-file-size", "-1"], "--max-file-size must be at least 1 (got -1)"),
        (["map", ".", "--max-file-size", "0"], "--max-file-size must be at least 1"),
        (["map", ".", "--jobs", "0"], "--jobs must be at least 1"),
        (["map", ".", "--format", "json", "--jobs", "-3"], "--jobs must be at least 1"),
        (
            ["map", ".", "--task-file", "/definitely/not/here.txt"],
            "--task-file /definitely/not/here.txt: cannot read",
        ),
        (["graph", ".", "--max-nodes", "-1"], "--max-nodes must be at least 0"),
        (["graph", ".", "--tokens", "0"], "--tokens must be at least 1"),
        (["graph", ".", "--jobs", "0"], "--jobs must be at least 1"),
    ],
)
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


def _stderr_lines(r):
    return r.stderr.splitlines()


def test_chat_and_mention_files_are_relative_to_the_current_directory(run, pyrepo, monkeypatch):
    monkeypatch.chdir(pyrepo / "shop")
    r = run("map", "..", "--format", "json", "--chat", "cli.py", "--mention-file", "money.py")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert "shop/cli.py:" not in d["map"] and d["counts"]["files_covered"] == 5  # chat: left out
    assert not [x for x in d["diagnostics"] if x["code"] in ("unreadable", "outside_root")]
    text = run("map", "..", "--chat", "cli.py")
    assert text.exit_code == 0 and "shop/cli.py" not in text.stdout
    assert "warning" not in text.stderr


def test_a_named_file_outside_the_repository_is_said_so(run, pyrepo, tmp_path, monkeypatch):
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    r = run("map", pyrepo, "--chat", "elsewhere.py", "--mention-file", "elsewhere.py")
    assert r.exit_code == 0 and "shop/money.py:" in r.stdout
    warnings = [line for line in _stderr_lines(r) if "[outside_root]" in line]
    assert len(warnings) == 2
    assert all(f"{outside}: " in w and f"not inside the repository {pyrepo}" in w for w in warnings)
    assert any("mentioned file" in w for w in warnings)


def test_tags_and_imports_exit_0_when_some_files_have_no_backend(run, pyrepo):
    for what in ("tags", "imports"):
        r = run(what, pyrepo, "--format", "json")
        assert r.exit_code == 0, r.stderr
        assert all(json.loads(line)["path"] for line in r.stdout.splitlines())
        assert _stderr_lines(r) == [
            f"repomapper: {what} from 6 of 7 files; 1 without a backend or failed; -v for the list"
        ]
    verbose = run("-v", "tags", pyrepo)
    assert verbose.exit_code == 0 and f"{pyrepo}/README.md" in verbose.stderr
    # nothing extractable at all: the command failed, and says why
    only = run("tags", pyrepo / "README.md")
    assert only.exit_code == 1 and "[no_backend]" in only.stderr and "README.md" in only.stderr


def test_an_unlistable_folder_is_a_diagnostic_with_its_path(run, make_tree, monkeypatch):
    root = make_tree({"ok.py": "def f():\n    pass\n", "locked/inner.py": "def g():\n    pass\n"})
    real = os.scandir

    def scandir(path="."):
        if os.fspath(path).endswith("locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)  # what os.walk sees for a folder it cannot read
    r = run("map", root, "--format", "json", "--no-cache")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    diag = next(x for x in d["diagnostics"] if x["code"] == "unreadable")
    assert diag["path"] == "locked/" and "Permission denied" in diag["message"]
    assert "locked/inner.py" not in d["map"] and "ok.py" in d["map"]
    # nothing listable at all: the empty map says so, not no_files_matched
    (root / "ok.py").unlink()
    r = run("map", root, "--no-cache")
    assert r.exit_code == 1
    assert "[no_files_matched]" not in r.stderr
    assert "error: [unreadable] no file could be listed" in r.stderr and "locked/" in r.stderr


def test_git_reports_folders_it_cannot_open():
    from repomapper.discover import _git_unreadable

    diags = _git_unreadable(
        b"warning: could not open directory 'a b/c/': Permission denied\nother noise\n"
    )
    assert [(d.code, d.path) for d in diags] == [("unreadable", "a b/c/")]
    assert "Permission denied" in diags[0].message


@pytest.mark.skipif(os.geteuid() == 0, reason="root can read anything")
def test_an_unreadable_folder_for_real(run, make_tree):
    root = make_tree({"ok.py": "x = 1\n", "locked/inner.py": "y = 2\n"})
    (root / "locked").chmod(0)
    try:
        r = run("map", root, "--format", "json", "--no-cache")
        assert any(
            x["code"] == "unreadable" and x["path"] == "locked/"
            for x in json.loads(r.stdout)["diagnostics"]
        )
    finally:
        (root / "locked").chmod(0o700)


def test_summary_line_counts_every_reason(run, make_tree):
    root = make_tree(
        {
            "a.py": "def f():\n    pass\n",
            "big.py": "x = 1\n" * 100,
            "notes.unknownext": "hello\n",
            "blob.py": b"\0\1\2 binary",
        }
    )
    r = run("map", root, "--max-file-size", "200", "--no-cache")
    assert r.exit_code == 0
    assert _stderr_lines(r)[-1] == (
        "repomapper: mapped 1 of 4 files (1 shown within 1024 tokens); 1 over the size limit, "
        "1 without a backend, 1 binary; -v for the list"
    )
    v = run("-v", "map", root, "--max-file-size", "200", "--no-cache")
    for listed in ("  big.py", "  notes.unknownext", "  blob.py"):
        assert f"repomapper: {listed}" in _stderr_lines(v)
    assert "-v for the list" not in v.stderr


def test_verbose_prints_a_warning_once(run, pyrepo, tmp_path):
    not_a_dir = tmp_path / "file"
    not_a_dir.write_text("")
    r = run("-v", "map", pyrepo, "--cache-dir", not_a_dir)
    assert r.exit_code == 0
    said = [line for line in _stderr_lines(r) if "unusable" in line]
    assert len(said) == 1 and "[cache_unavailable]" in said[0]


def test_a_warning_only_logged_still_shows_with_v(run, pyrepo, monkeypatch):
    import logging

    from repomapper.stages import mapping

    real = mapping.render

    def render(settings, state, ranked, budget=None):
        logging.getLogger("repomapper.test").warning("only in the log")
        return real(settings, state, ranked, budget)

    monkeypatch.setattr(mapping, "render", render)
    r = run("-v", "map", pyrepo, "--no-cache")
    assert _stderr_lines(r).count("repomapper: only in the log") == 1
    assert "only in the log" not in run("map", pyrepo, "--no-cache").stderr


def test_timings_print_every_stage_and_the_cache_hits(run, pyrepo, tmp_path):
    cache = tmp_path / "cache"
    first = _stderr_lines(run("map", pyrepo, "--timings", "--cache-dir", cache))
    timing = next(line for line in first if line.startswith("repomapper: timings: "))
    stages = [part.split()[0] for part in timing.split(": ", 2)[2].split("; ")[0].split(", ")]
    assert stages == ["discover", "memo", "extract", "graph", "rank", "render"]
    assert "repomapper: cache: 0 of 7 file(s) from the tag cache, 7 extracted" in first
    again = _stderr_lines(run("map", pyrepo, "--timings", "--cache-dir", cache, "--tokens", "300"))
    assert "repomapper: cache: 7 of 7 file(s) from the tag cache, 0 extracted" in again
    replay = _stderr_lines(run("map", pyrepo, "--timings", "--cache-dir", cache, "--tokens", "300"))
    assert any("replayed from the cache" in line for line in replay)
    js = _stderr_lines(run("map", pyrepo, "--format", "json", "--timings", "--no-cache"))
    assert any(
        line.startswith("repomapper: timings: discover ") and "render" in line for line in js
    )


def test_a_byte_order_mark_is_not_in_the_map(run, make_tree):
    root = make_tree({"bom.py": "\ufeffdef hello():\n    return 1\n"})
    r = run("map", root, "--no-cache")
    assert r.exit_code == 0
    assert r.stdout.splitlines()[:2] == ["bom.py:", "def hello():"]
    assert "\ufeff" not in r.stdout


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_unreadable_root_is_one_line(run, pyrepo, monkeypatch, fmt):
    from repomapper import discover

    monkeypatch.setattr(discover.os, "access", lambda *a, **k: False)
    r = run("map", pyrepo, "--format", fmt)
    assert r.exit_code == 2
    assert len(_stderr_lines(r)) == 1 and str(pyrepo) in r.stderr
    assert "permission denied" in r.stderr and "Usage:" not in r.stderr
    g = run("graph", pyrepo)
    assert g.exit_code == 2 and len(_stderr_lines(g)) == 1 and "permission denied" in g.stderr


def test_a_deleted_current_directory_is_one_line(run, tmp_path, monkeypatch):
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    r = run("map")
    assert r.exit_code == 2 and _stderr_lines(r) == [
        "repomapper: error: .: cannot be used: No such file or directory"
    ]


def test_python_dash_m_runs_the_command(pyrepo, tmp_path):
    """``python -m repomapper`` is the installed command (its map and its exit code)."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "repomapper", "map", str(pyrepo), "--tokens", "512"]
    done = subprocess.run(
        [*args, "--cache-dir", str(tmp_path / "c")], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert "shop/money.py:" in done.stdout
    missing = subprocess.run(
        [sys.executable, "-m", "repomapper", "map", str(tmp_path / "absent")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert missing.returncode != 0 and missing.stderr


def test_a_map_without_a_task_does_not_load_the_task_model(pyrepo, tmp_path):
    """The relevance model and the template scanner are loaded when first needed: a map
    without a task (every warm replay) does without them."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from repomapper.cli import main\n"
        f"main(['map', {str(pyrepo)!r}, '--cache-dir', {str(tmp_path / 'c')!r}],"
        " standalone_mode=False)\n"
        "late = ('repomapper.relevance.model', 'repomapper.relevance.query',"
        " 'repomapper.plugins.templates.scanner')\n"
        "print('LOADED', sorted(m for m in late if m in sys.modules))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "shop/money.py:" in done.stdout
    assert "LOADED []" in done.stdout
