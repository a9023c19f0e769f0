"""Documentation that runs: the plugin package of docs/plugins.md and the README's commands.

docs/plugins.md marks the files of its example package with a first line ``# file: PATH``; they
are written into a fresh directory (with the parser and the corpus the guide does not show, from
docs/examples/repomapper-graphql) and run as a plugin (``REPOMAPPER_PLUGINS``, no installation):
the conformance suite and a map over a small GraphQL tree. The README's first screen is run in a
copy of a small repository, and every option its command-line summary names must exist.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from repomapper.cli import main

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "plugins.md"
README = ROOT / "README.md"
EXAMPLE = ROOT / "docs" / "examples" / "repomapper-graphql"
FIXTURES = Path(__file__).parent / "fixtures"
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.MULTILINE | re.DOTALL)
MARK = re.compile(r"# file: (\S+)\n")
#: first-screen commands not run here, and why
NOT_RUN = {
    "pip install": "installing is what this suite runs in",
    "python -m pip install": "installing is what this suite runs in",
    "python -m venv": "the environment this suite runs in",
    "python3 -m venv": "the environment this suite runs in",
    ". ": "activating the environment this suite runs in",
    "source ": "activating the environment this suite runs in",
    "sudo ": "system packages",
    "apt": "system packages",
    "python -m pytest": "the command that runs this test",
    "pytest": "the command that runs this test",
}


def blocks(text: str) -> list[tuple[str, str]]:
    """Fenced code blocks: (info string, body)."""
    return [(m.group(1).strip(), m.group(2)) for m in FENCE.finditer(text)]


def guide_files() -> dict[str, str]:
    """The files docs/plugins.md shows whole, by path."""
    found = {}
    for _, body in blocks(GUIDE.read_text(encoding="utf-8")):
        m = MARK.match(body)
        if m:
            assert m.group(1) not in found, f"{m.group(1)} is shown twice"
            found[m.group(1)] = body[m.end() :]
    return found


def repomapper_command() -> list[str]:
    script = Path(sys.executable).parent / "repomapper"
    return [str(script)] if script.exists() else [sys.executable, "-m", "repomapper.cli"]


@pytest.fixture(scope="module")
def guide_package(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("guide-plugin")
    for rel, text in guide_files().items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    # what the guide describes without showing it: the parser and the conformance corpus
    package = root / "src" / "repomapper_graphql"
    shutil.copy(EXAMPLE / "src" / "repomapper_graphql" / "parser.py", package / "parser.py")
    shutil.copytree(EXAMPLE / "src" / "repomapper_graphql" / "conformance", package / "conformance")
    return root


@pytest.fixture
def plugin_env(guide_package, tmp_path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        filter(None, [str(guide_package / "src"), env.get("PYTHONPATH")])
    )
    env["REPOMAPPER_PLUGINS"] = "graphql=repomapper_graphql.plugin"
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache-home")
    return env


def test_the_guide_shows_a_whole_package():
    assert set(guide_files()) == {
        "pyproject.toml",
        "src/repomapper_graphql/__init__.py",
        "src/repomapper_graphql/plugin.py",
    }


@pytest.mark.filterwarnings("ignore:Support for `\\[tool.setuptools\\]`")
def test_the_guides_pyproject_is_one_setuptools_accepts(guide_package):
    from setuptools.config.pyprojecttoml import read_configuration

    config = read_configuration(guide_package / "pyproject.toml")  # validates, as a build does
    project = config["project"]
    assert project["name"] == "repomapper-graphql" and project["version"] == "0.1.0"
    [(name, module)] = project["entry-points"]["repomapper"].items()
    assert (name, module) == ("graphql", "repomapper_graphql.plugin")
    assert (guide_package / "src" / (module.replace(".", "/") + ".py")).is_file()
    init = (guide_package / "src/repomapper_graphql/__init__.py").read_text()
    assert f'__version__ = "{project["version"]}"' in init


def test_the_guides_plugin_passes_the_conformance_suite(plugin_env, tmp_path):
    proc = subprocess.run(
        [*repomapper_command(), "conformance", "--plugin", "graphql", "--examples", "5"]
        + ["--format", "json"],
        env=plugin_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True
    assert [(r["plugin"], r["language"]) for r in report["results"]] == [("graphql", "graphql")]
    assert any("repomapper_graphql/conformance" in c for c in report["corpora"])


def test_the_guides_plugin_maps_a_graphql_tree(plugin_env, tmp_path):
    tree = tmp_path / "api"
    (tree / "ops").mkdir(parents=True)
    (tree / "schema.graphql").write_text(
        '"""A person."""\ntype User {\n  id: ID!\n  posts: [Post!]!\n}\n\n'
        "type Post {\n  title: String\n  author: User\n}\n"
    )
    (tree / "ops" / "feed.graphql").write_text(
        '#import "../schema.graphql"\nquery Feed {\n  posts { title author { id } }\n}\n'
    )
    proc = subprocess.run(
        [*repomapper_command(), "map", str(tree), "--tokens", "1024", "--format", "json"],
        env=plugin_env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    envelope = json.loads(proc.stdout)
    assert envelope["outcome"] == "ok", envelope
    assert {f["path"] for f in envelope["ranked_files"]} == {"schema.graphql", "ops/feed.graphql"}
    assert "type User {" in envelope["map"] and "query Feed {" in envelope["map"]


def first_screen_commands() -> list[str]:
    """The shell commands of the README before its first section, one per ``&&`` or line."""
    screen = README.read_text(encoding="utf-8").split("\n## ", 1)[0]
    out = []
    for info, body in blocks(screen):
        if info not in ("sh", "shell", "bash", "console"):
            continue
        for line in body.replace("\\\n", " ").splitlines():
            if info == "console":  # a session: its commands follow a prompt, the rest is output
                if not line.startswith("$ "):
                    continue
                line = line[2:]
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith("#"):
                out += [c.strip() for c in line.split("&&") if c.strip()]
    return out


def test_the_readme_first_screen_runs(tmp_path):
    commands = first_screen_commands()
    ran = []
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "pyrepo", repo)
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path / "cache-home"))
    for command in commands:
        if any(command.startswith(prefix) for prefix in NOT_RUN):
            continue
        argv = shlex.split(command)
        assert argv[0] == "repomapper", f"the README's first screen runs {command!r}: add it here"
        proc = subprocess.run(
            [*repomapper_command(), *argv[1:]],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert proc.returncode == 0, f"{command}: {proc.stdout}{proc.stderr}"
        assert proc.stdout.strip(), f"{command} printed nothing"
        ran.append(command)
    assert ran, f"no command of the README's first screen was run: {commands}"
    assert "repomapper map . --tokens 1024" in ran


def summary_lines() -> list[str]:
    """The command lines of the README's "Command line" block."""
    section = README.read_text(encoding="utf-8").split("\n## Command line", 1)[1]
    [(_, body)] = blocks(section)[:1]
    return [
        line.split("#", 1)[0]
        for line in body.replace("\\\n", " ").splitlines()
        if line.startswith("repomapper ")
    ]


def test_every_option_the_readme_names_exists():
    from repomapper.conformance.cli import conformance_command

    lines = summary_lines()
    assert len(lines) >= 5
    for line in lines:
        name = line.split()[1]
        assert name in main.commands, f"README names `repomapper {name}`, which does not exist"
        command: click.Command = main.commands[name]
        if name == "conformance":  # the suite's own command behind a pass-through
            command = conformance_command
        if isinstance(command, click.Group):  # `repomapper cache prune ...`: the subcommand's
            sub = line.split()[2]
            assert sub in command.commands, f"README names `repomapper {name} {sub}`, not there"
            command = command.commands[sub]
        known = {o for p in command.params for o in (*p.opts, *p.secondary_opts)}
        for option in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", line):
            assert option in known, f"README: `repomapper {name} {option}` is not an option"


LINK = re.compile(r"\]\(([^)\s]+)\)")


@pytest.mark.parametrize(
    "doc",
    [README, *sorted((ROOT / "docs").rglob("*.md"))],
    ids=lambda p: str(p.relative_to(ROOT)),
)
def test_relative_links_point_at_files_in_the_repository(doc):
    text = FENCE.sub("", doc.read_text(encoding="utf-8"))
    for link in LINK.findall(text):
        if re.match(r"[a-z]+:", link) or link.startswith("#"):
            continue
        target = (doc.parent / link.split("#", 1)[0]).resolve()
        assert target.exists(), f"{doc.relative_to(ROOT)} links to {link}, which is not there"
