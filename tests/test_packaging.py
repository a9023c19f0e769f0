"""The distribution lists every package of the source tree: setuptools installs only the
packages ``pyproject.toml`` names (the editable install used for development finds the rest on
its own, so a forgotten one breaks only a real install)."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: folders that hold data for tests and the conformance suite, not code to install
NOT_CODE = {"fixtures", "goldens", "__pycache__"}


def _source_packages() -> set[str]:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    found: set[str] = set()
    for name, folder in setuptools["package-dir"].items():
        base = ROOT / folder
        for init in base.rglob("__init__.py"):
            relative = init.parent.relative_to(base)
            if NOT_CODE & set(relative.parts):
                continue
            found.add(".".join((name, *relative.parts)))
    return found


def test_every_package_of_the_tree_is_installed() -> None:
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    assert _source_packages() - listed == set(), "add these to [tool.setuptools] packages"
    assert listed - _source_packages() == set(), "these packages are listed but have no folder"
