"""benchmarks/fix_spans.py: the fixing commit of a task without a gold patch, and the functions
it changed at the lines of the task's tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"

BASE = """\
def f():
    return 1


class C:
    def a(self):
        return 2

    def b(self):
        return 3
"""


@pytest.fixture
def fs(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import fix_spans

    yield fix_spans
    for name in ("fix_spans", "locsets", "gold_spans"):
        sys.modules.pop(name, None)


def _git(repo: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
        "GIT_CONFIG_GLOBAL": os.devnull,
    }
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, env=env
    ).stdout.strip()


def _commit(repo: Path, text: str, message: str) -> str:
    (repo / "m.py").write_text(text, encoding="utf-8")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", message)
    return _git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "r"
    r.mkdir()
    _git(r, "init", "-q", "-b", "main")
    return r


def _task(fs, instance_id: str, base: str):
    return fs.locsets.SetTask(instance_id, "o/r", "Python", "d", base, "text", ("m.py",))


def test_a_child_of_the_base_commit_is_the_fix(fs, repo):
    base = _commit(repo, BASE, "base")
    _commit(repo, BASE.replace("return 3", "return 4"), "fix b")
    m = fs.Mirror(repo / ".git")
    task = _task(fs, "o__r-5", base)
    fix = fs.find_fix(m, task)
    assert fix is not None and fix.rule == "child"
    assert [
        (s["name"], s["start_line"], s["end_line"]) for s in fs.spans_of_fix(m, task, fix, False)
    ] == [("C.b", 9, 10)]


def test_a_pull_request_counts_its_own_commits_not_the_main_it_merged(fs, repo):
    base = _commit(repo, BASE, "base")
    _git(repo, "checkout", "-q", "-b", "pr")
    _commit(repo, BASE.replace("return 1", "return 10"), "fix f")
    _git(repo, "checkout", "-q", "main")
    main = _commit(repo, BASE.replace("return 2", "return 20"), "change a on main")
    _git(repo, "checkout", "-q", "pr")
    _git(repo, "merge", "-q", "--no-edit", main)
    _git(repo, "update-ref", "refs/pull/7/head", "HEAD")
    m = fs.Mirror(repo / ".git")
    task = _task(fs, "o__r-7", base)
    fix = fs.find_fix(m, task)
    assert fix is not None and fix.rule == "pull" and len(fix.steps) == 1
    assert [s["name"] for s in fs.spans_of_fix(m, task, fix, False)] == ["f"]


def test_a_fix_written_later_is_placed_at_the_base_commits_lines(fs, repo):
    (repo / "other.py").write_text("x = 1\n", encoding="utf-8")
    base = _commit(repo, BASE, "base")
    (repo / "other.py").write_text("x = 2\n", encoding="utf-8")
    moved = "import os\n\n\n" + BASE
    _commit(repo, moved, "an unrelated change")
    _commit(repo, moved.replace("return 3", "return 4"), "fix b, closes #12")
    m = fs.Mirror(repo / ".git")
    task = _task(fs, "o__r-12", base)
    fix = fs.find_fix(m, task)
    assert fix is not None and fix.rule == "message"
    # C.b is at lines 12-13 where it was fixed, 9-10 in the task's tree
    spans = fs.spans_of_fix(m, task, fix, False)
    assert [(s["name"], s["start_line"]) for s in spans] == [("C.b", 9)]


def test_no_fix_when_the_children_change_other_code_too(fs, repo):
    (repo / "other.py").write_text("x = 1\n", encoding="utf-8")
    base = _commit(repo, BASE, "base")
    (repo / "other.py").write_text("x = 2\n", encoding="utf-8")
    _commit(repo, BASE.replace("return 3", "return 4"), "fix b and more")
    m = fs.Mirror(repo / ".git")
    assert fs.find_fix(m, _task(fs, "o__r-9", base)) is None


def test_spans_of_other_languages_come_from_repomappers_definitions(fs):
    from gold_spans import definitions_of, innermost

    js = "function outer() {\n  function inner() {\n    return 1;\n  }\n  return inner();\n}\n"
    spans = definitions_of("a.js", js)
    assert [s[0] for s in spans] == ["outer"]  # a function inside a function is its outer's
    assert innermost(spans, 3) == ("outer", "function", 1, 6)
