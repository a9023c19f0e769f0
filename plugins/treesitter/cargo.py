"""Rust crates of the repository itself (a Cargo workspace), used by name: ``use other_crate::x``
from one member means the module ``x`` of the member whose ``Cargo.toml`` names its package
``other-crate`` (hyphens become underscores in Rust paths; ``[lib] name`` overrides it).

``Cargo.toml`` files are read with :mod:`tomllib` (never executed), once per index; a crate's
root is its ``[lib] path`` (default ``src/lib.rs``) when that file is in the repository.
"""

from __future__ import annotations

import logging
import posixpath
import tomllib
from typing import Any

from repomapper.index import RepoIndex

from .configfiles import read_config

log = logging.getLogger(__name__)


def workspace_crates(index: RepoIndex) -> dict[str, str]:
    """Crate name (as written in Rust paths) -> the path of its library root file."""
    return index.derived(("treesitter", "cargo_crates"), _read_crates)


def _read_crates(index: RepoIndex) -> dict[str, str]:
    found: dict[str, str] = {}
    manifests = sorted(
        (f for f in index.files if posixpath.basename(f) == "Cargo.toml"),
        key=lambda f: (f.count("/"), f),
    )
    for manifest in manifests:
        data = _read_manifest(index, manifest)
        if data is None:
            continue
        package, lib = data.get("package"), data.get("lib")
        lib = lib if isinstance(lib, dict) else {}
        name = lib.get("name") or (package.get("name") if isinstance(package, dict) else None)
        if not isinstance(name, str) or not name:
            continue
        directory = posixpath.dirname(manifest)
        raw_path = lib.get("path")
        lib_path = raw_path if isinstance(raw_path, str) else "src/lib.rs"
        root = posixpath.normpath(posixpath.join(directory, lib_path) if directory else lib_path)
        crate = name.replace("-", "_")
        if root in index.files and crate not in found:  # the shallowest of a repeated name
            found[crate] = root
    return found


def _read_manifest(index: RepoIndex, rel_path: str) -> dict[str, Any] | None:
    return read_config(index.root, rel_path, tomllib.loads, quiet=True)
