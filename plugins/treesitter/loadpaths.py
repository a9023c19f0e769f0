"""Ruby ``require`` and ``require_relative`` resolved as Ruby's load path finds them.

* ``require_relative 'x'`` (and ``require './x'``): relative to the requiring file's folder.
* ``require 'foo/bar'``: ``foo/bar.rb`` below a load-path root of the repository: every folder
  named ``lib`` (a gem's default ``require_paths``; each gem of a monorepo has its own), and
  ``test`` and ``spec``, which Rake's test task and RSpec put on the load path. The roots nearest
  the requiring file win (a monorepo's gems may each have a ``lib/foo.rb``). A name below no root
  (``require 'json'`` beside an ``app/json.rb``) is a library outside the repository: nothing.
"""

from __future__ import annotations

import posixpath

from repomapper.index import RepoIndex
from repomapper.model import Import

LOAD_ROOT_NAMES = frozenset({"lib", "test", "spec"})


def load_roots(index: RepoIndex) -> tuple[str, ...]:
    """Folders of ``index`` that are on a Ruby load path by convention, computed once."""
    return index.derived(("treesitter", "ruby_load_roots"), _load_roots)


def _load_roots(index: RepoIndex) -> tuple[str, ...]:
    roots: set[str] = set()
    for directory in index.by_dir:
        parts = directory.split("/") if directory else []
        for i, part in enumerate(parts):
            if part in LOAD_ROOT_NAMES:
                roots.add("/".join(parts[: i + 1]))
    return tuple(sorted(roots))


def _shared(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a.split("/"), b.split("/"), strict=False):
        if x != y:
            break
        n += 1
    return n


def resolve_ruby(imp: Import, index: RepoIndex) -> list[str]:
    source = imp.source.strip()
    if not source or "#{" in source:
        return []
    spec = source if source.endswith(".rb") else f"{source}.rb"
    if imp.is_relative:
        hit = index.resolve_relative_path(imp.file_path, spec, (), ())
        return [hit] if hit else []
    if spec.startswith("/"):
        return []
    hits = [f"{root}/{spec}" for root in load_roots(index) if f"{root}/{spec}" in index.files]
    if not hits:
        return []
    folder = posixpath.dirname(imp.file_path)
    best = max(_shared(folder, posixpath.dirname(h)) for h in hits)
    return sorted(h for h in hits if _shared(folder, posixpath.dirname(h)) == best)
