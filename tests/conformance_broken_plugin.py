"""A deliberately broken Python backend: the conformance suite must catch each of its faults.

It wraps the built-in ``python_ast`` backend and adds the faults it is built with:

``off_by_one``       every definition is reported one line too low
``missing_imports``  claims imports but never returns any
``crash_on_empty``   divides by the number of lines, so an empty file raises ZeroDivisionError
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from repomapper.hookspecs import hookimpl
from repomapper.model import BackendInfo, Capability, Import, SourceFile, Tag
from repomapper.plugins.python import ast_backend as python_ast

FAULTS = ("off_by_one", "missing_imports", "crash_on_empty")
NAME = "python_broken"


class BrokenPythonPlugin:
    """A pluggy plugin object; register it under :data:`NAME`."""

    def __init__(self, faults: Iterable[str] = ()):
        self.faults = frozenset(faults)
        unknown = self.faults - set(FAULTS)
        if unknown:
            raise ValueError(f"unknown faults: {sorted(unknown)}")

    @hookimpl
    def backend_info(self) -> BackendInfo:
        return BackendInfo(
            name=NAME,
            version="0.0-" + "-".join(sorted(self.faults)),
            languages=("python",),
            extensions=(".py",),
            capabilities=tuple(c.value for c in Capability),
            description="python_ast with injected faults (conformance suite self-test)",
        )

    @hookimpl
    def extract_tags(self, source: SourceFile) -> list[Tag] | None:
        if "crash_on_empty" in self.faults:
            average_line = len(source.data) / source.data.count(b"\n")  # the bug
            del average_line
        tags = python_ast.extract_tags(source)
        if tags is None or "off_by_one" not in self.faults:
            return tags
        return [
            dataclasses.replace(t, start_line=t.start_line + 1, end_line=t.end_line + 1)
            if t.is_def
            else t
            for t in tags
        ]

    @hookimpl
    def extract_imports(self, source: SourceFile) -> list[Import] | None:
        if "missing_imports" in self.faults:
            return []
        return python_ast.extract_imports(source)
