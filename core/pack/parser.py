"""The design's ``ASTParser`` protocol, answered by our plugins (no parser of its own):
:class:`PluginParser` parses one file with the backend that claims it and returns the same
:class:`ParsedFile` the AST context holds (with ``raw_content``)."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Protocol, runtime_checkable

from ..discover import FileEntry
from ..index import RepoIndex
from ..model import DEF
from ..repomap import RepoMap
from .context import parsed_file
from .models import ParsedFile
from .settings import PackError


@runtime_checkable
class ASTParser(Protocol):
    def parse_file(self, file_path: str) -> ParsedFile: ...

    def get_supported_extensions(self) -> list[str]: ...


class PluginParser:
    """``parse_file`` for files under ``repomap.root``; imports resolve against the files
    already discovered there."""

    def __init__(self, repomap: RepoMap):
        self.rm = repomap
        self._known: set[str] | None = None

    def get_supported_extensions(self) -> list[str]:
        exts = {
            e
            for info in self.rm.plugins.infos.values()
            if info.available
            for e in info.extensions
            if e != "*"
        }
        return sorted(exts)

    def parse_file(self, file_path: str | os.PathLike[str]) -> ParsedFile:
        p = Path(file_path)
        if not p.is_absolute():
            p = self.rm.root / p
        try:
            rel = p.resolve().relative_to(self.rm.root).as_posix()
        except ValueError:
            raise PackError(f"{file_path} is outside the repository {self.rm.root}") from None
        try:
            st = (self.rm.root / rel).stat()
            data = (self.rm.root / rel).read_bytes()
        except OSError as exc:
            raise PackError(f"{file_path}: {exc}") from None
        ex = self.rm.extract([FileEntry(rel, st.st_size, st.st_mtime_ns)], full=True)[rel]
        if ex.plugin is None:
            why = "; ".join(d.message for d in ex.diagnostics) or "no backend claims it"
            raise PackError(f"{rel}: cannot be parsed: {why}")
        if self._known is None:
            self._known = {e.path for e in self.rm.collect(None)[0]}
        referrers: dict[str, set[str]] = defaultdict(set)
        for t in ex.tags:
            if t.kind != DEF:
                referrers[t.name].add(rel)
        known = self._known | {rel}
        return parsed_file(
            self.rm, RepoIndex(self.rm.root, known), ex, data, referrers, known, keep_text=True
        )
