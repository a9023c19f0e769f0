"""Shared helpers: build small repositories in tmp_path, and isolate every test from the
user's cache directory and installed third-party plugins."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

FIXTURES = Path(__file__).parent / "fixtures"

settings.register_profile(
    "repomapper", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=60
)
settings.load_profile("repomapper")


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory, monkeypatch):
    cache_home = tmp_path_factory.mktemp("cache-home")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache_home))
    monkeypatch.setenv("REPOMAPPER_NO_ENTRY_POINTS", "1")


def write_tree(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.invalid", "-c", "user.name=t", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def pyrepo(tmp_path) -> Path:
    """A copy of the shop fixture repository (not a git work tree)."""
    dest = tmp_path / "pyrepo"
    shutil.copytree(FIXTURES / "pyrepo", dest)
    return dest


@pytest.fixture
def make_tree(tmp_path):
    def make(files: dict[str, str | bytes], name: str = "repo") -> Path:
        return write_tree(tmp_path / name, files)

    return make
