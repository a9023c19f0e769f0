"""Context packs write nothing into the repository they map unless asked (library, CLI, MCP
tool), and a new process reads the state the last one stored (the tag cache and the stored
ranking state, outside the repository) to the same pack."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from repomapper import RepoMapper
from repomapper.cli import main
from tests.conftest import git
from tests.test_pack import make_repo

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def gitrepo(tmp_path) -> Path:
    root = make_repo(tmp_path / "repo")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "x")
    return root


def porcelain(root: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "--ignored"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_library_pack_leaves_the_work_tree_clean(gitrepo):
    with RepoMapper(gitrepo, env={}) as m:
        pack = m.generate_context_pack_sync("w1", "save records", ["app/memory.py"], "coding")
        m.links().get_dependents("app/memory.py::MemoryStore")
    assert pack.files and pack.metadata["repository_state"] == "git"
    assert porcelain(gitrepo) == ""


def test_cli_pack_leaves_the_work_tree_clean_and_prints(gitrepo):
    args = ["pack", str(gitrepo), "--task-id", "w2", "--task", "save", "--target", "app/memory.py"]
    for fmt in ("json", "markdown"):
        r = CliRunner().invoke(main, [*args, "--format", fmt])
        assert r.exit_code == 0, r.output
        assert porcelain(gitrepo) == ""
    assert json.loads(CliRunner().invoke(main, args).stdout)["task_id"] == "w2"


def test_cli_output_writes_exactly_the_pack(gitrepo, tmp_path, monkeypatch):
    out = tmp_path / "packs"
    args = ["pack", str(gitrepo), "--task-id", "w3", "--task", "save", "--target", "app/memory.py"]
    r = CliRunner().invoke(main, [*args, "--output", str(out)])
    assert r.exit_code == 0, r.output
    assert [p.name for p in out.iterdir()] == ["w3.json"]
    assert (out / "w3.json").read_text(encoding="utf-8") == r.stdout
    assert porcelain(gitrepo) == ""
    # a relative DIR is taken from the current directory, not from the repository
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, [*args, "--output", "rel"])
    assert r.exit_code == 0, r.output
    assert [p.name for p in (tmp_path / "rel").iterdir()] == ["w3.json"]
    assert porcelain(gitrepo) == ""


def test_context_pack_dir_writes_only_when_set(gitrepo, tmp_path):
    with RepoMapper(gitrepo, env={"CONTEXT_PACK_DIR": str(tmp_path / "env")}) as m:
        assert m.write
        m.generate_context_pack_sync("w4", "save", ["app/memory.py"], "coding")
    assert [p.name for p in (tmp_path / "env").iterdir()] == ["w4.json"]
    with RepoMapper(gitrepo, env={}) as m:
        assert not m.write
        with pytest.raises(ValueError, match="no pack directory"):
            m.pack_path("w5")
    with pytest.raises(ValueError, match="needs a pack directory"):
        RepoMapper(gitrepo, env={}, write=True)
    assert porcelain(gitrepo) == ""


def test_mcp_context_pack_leaves_the_work_tree_clean(gitrepo, tmp_path):
    pytest.importorskip("mcp")
    from repomapper.serve.service import Service, ServiceOptions

    svc = Service(gitrepo, ServiceOptions(cache_dir=tmp_path / "c", watch=False))
    try:
        result = svc.call(
            "context_pack", {"task_id": "w6", "task": "save", "targets": ["app/memory.py"]}
        )
    finally:
        svc.close()
    assert not result.is_error, result
    assert porcelain(gitrepo) == ""


NEW_PROCESS = """
import sys
from repomapper import RepoMapper
from repomapper.pack.store import dumps
with RepoMapper(sys.argv[1], env={}) as m:
    pack = m.generate_context_pack_sync("p", "save", ["app/memory.py"], "coding")
    print(m.repomap.last_stats.get("stored_state", 0))
    print(dumps(pack.to_dict()))
"""


def pack_in_a_new_process(root: Path) -> tuple[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", NEW_PROCESS, str(root)],
        capture_output=True,
        text=True,
        check=True,
    )
    stored, pack = out.stdout.split("\n", 1)
    return stored, pack


def test_a_new_process_reads_the_stored_state_to_the_same_pack(gitrepo):
    first = pack_in_a_new_process(gitrepo)
    second = pack_in_a_new_process(gitrepo)
    assert second[1] == first[1]
    # an edit that keeps the size: the pack follows it
    memory = gitrepo / "app/memory.py"
    memory.write_text(memory.read_text().replace("data", "dat_"))
    edited = pack_in_a_new_process(gitrepo)
    assert "self.dat_" in edited[1] and "self.data" not in edited[1]
    assert porcelain(gitrepo) == " M app/memory.py\n"
