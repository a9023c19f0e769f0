"""The third-party path: docs/examples/repomapper-graphql passes from its own (installed) package.

CI also ``pip install``s the example and runs ``repomapper conformance`` on it; these tests
reproduce an installation without pip: the package copied into a fresh directory with a
``.dist-info`` that declares the entry point, exactly what pip leaves behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from repomapper.conformance.testing import assert_conformant

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "repomapper-graphql"
FIXTURE_FILES = ("fragments.gql", "operations.graphql", "schema.graphql")


@pytest.fixture
def example_module(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    import repomapper_graphql.plugin

    return repomapper_graphql.plugin


def test_example_plugin_module_is_conformant(example_module):
    report = assert_conformant(example_module, examples=10)
    [result] = report.results
    assert (result.plugin, result.language, result.files) == ("graphql", "graphql", FIXTURE_FILES)


@pytest.fixture
def installed(tmp_path):
    """A site directory holding the example as pip would install it; returns the env to use."""
    site = tmp_path / "site"
    shutil.copytree(
        EXAMPLE / "src" / "repomapper_graphql",
        site / "repomapper_graphql",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    info = site / "repomapper_graphql-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: repomapper-graphql\nVersion: 0.1.0\n"
    )
    (info / "entry_points.txt").write_text("[repomapper]\ngraphql = repomapper_graphql.plugin\n")
    env = {k: v for k, v in os.environ.items() if k != "REPOMAPPER_NO_ENTRY_POINTS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), env.get("PYTHONPATH")]))
    return env


def test_installed_example_passes_the_command(installed, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "repomapper.conformance",
            "--plugin",
            "graphql",
            "--examples",
            "10",
            "--format",
            "json",
        ],
        env=installed,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True
    assert [(r["plugin"], r["language"]) for r in report["results"]] == [("graphql", "graphql")]
    site = installed["PYTHONPATH"].split(os.pathsep)[0]
    shipped = [c for c in report["corpora"] if c.startswith("plugin graphql: ")]
    assert shipped == [f"plugin graphql: {site}/repomapper_graphql/conformance"]  # installed copy
    assert all(r["files"] == list(FIXTURE_FILES) for r in report["results"])


def test_installed_example_runs_its_own_tests(installed, tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            "installed or parser or hooks",
            str(EXAMPLE / "tests"),
        ],
        env=installed,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "16 passed" in proc.stdout  # the installed-plugin test ran, not skipped
