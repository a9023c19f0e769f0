"""The third-party path: docs/examples/repomapper-make passes from its own (installed) package.

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

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "repomapper-make"


@pytest.fixture
def example_module(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE / "src"))
    import repomapper_make.plugin

    return repomapper_make.plugin


def test_example_plugin_module_is_conformant(example_module):
    report = assert_conformant(example_module, examples=10)
    [result] = report.results
    assert (result.plugin, result.language, result.files) == (
        "make",
        "make",
        ("Makefile", "rules.mk"),
    )


@pytest.fixture
def installed(tmp_path):
    """A site directory holding the example as pip would install it; returns the env to use."""
    site = tmp_path / "site"
    shutil.copytree(
        EXAMPLE / "src" / "repomapper_make",
        site / "repomapper_make",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    info = site / "repomapper_make-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: repomapper-make\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[repomapper]\nmake = repomapper_make.plugin\n")
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
            "make",
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
    assert [(r["plugin"], r["language"]) for r in report["results"]] == [("make", "make")]
    site = installed["PYTHONPATH"].split(os.pathsep)[0]
    shipped = [c for c in report["corpora"] if c.startswith("plugin make: ")]
    assert shipped == [f"plugin make: {site}/repomapper_make/conformance"]  # the installed copy
    assert all(r["files"] == ["Makefile", "rules.mk"] for r in report["results"])


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
            "installed or parser",
            str(EXAMPLE / "tests"),
        ],
        env=installed,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "6 passed" in proc.stdout
