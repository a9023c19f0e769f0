"""A backend that shares one "parse" between its hooks through ``SourceFile.memo``.

``extract_imports`` reports, as its one import's source, how many times this process built the
file's parse and whether the parse it found was built for the very object it was given:
``builds=1 same=True`` when the core handed both hooks the same file and the memo held.
"""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from repomapper.hookspecs import hookimpl
from repomapper.model import DEF, BackendInfo, Import, SourceFile, Tag

builds: Counter[str] = Counter()


def _parse(source: SourceFile) -> SimpleNamespace:
    builds[source.path] += 1
    return SimpleNamespace(owner=source, words=source.text().split())


@hookimpl
def backend_info() -> BackendInfo:
    return BackendInfo("probe", "1", ("probe",), (".probe",), ("definitions", "imports"))


@hookimpl
def extract_tags(source: SourceFile) -> list[Tag]:
    parsed = source.memo(("probe", "parse"), lambda: _parse(source))
    return [Tag(source.path, 1, 1, parsed.words[0], DEF, "function")]


@hookimpl
def extract_imports(source: SourceFile) -> list[Import]:
    parsed = source.memo(("probe", "parse"), lambda: _parse(source))
    found = f"builds={builds[source.path]} same={parsed.owner is source}"
    return [Import(source.path, found, line_number=1)]
