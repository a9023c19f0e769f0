"""The plugin under test: one named plugin of a :class:`~repomapper.registry.PluginSet`, called
directly (no routing, no fallback to other backends)."""

from __future__ import annotations

import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from repomapper.index import RepoIndex
from repomapper.model import BackendInfo, Import, SourceFile
from repomapper.registry import PluginSet


def describe_exception(exc: BaseException) -> str:
    """``Type: message (at file:line in function)`` for the innermost frame of a plugin crash."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = ""
    if frames:
        f = frames[-1]
        where = f" (at {f.filename.rsplit('/', 1)[-1]}:{f.lineno} in {f.name})"
    text = str(exc).strip().splitlines()
    message = f": {text[0][:200]}" if text else ""
    return f"{type(exc).__name__}{message}{where}"


def describe_input(data: bytes) -> str:
    """A short human description of an input for failure messages."""
    if not data:
        return "empty input"
    if not data.strip():
        return f"whitespace-only input {data[:20]!r}"
    shown = data[:60]
    more = f"... ({len(data)} bytes)" if len(data) > 60 else ""
    return f"input {shown!r}{more}"


@dataclass(frozen=True)
class Subject:
    """Calls the hooks of one plugin, through pluggy, alone: its own wrappers apply, other
    plugins' wrappers do not (the suite judges the plugin, not what is installed beside it).
    Exceptions from the plugin propagate."""

    plugin_set: PluginSet
    name: str

    @property
    def info(self) -> BackendInfo:
        return self.plugin_set.infos[self.name]

    @cached_property
    def _others(self) -> frozenset[str]:
        return frozenset(n for n, _ in self.plugin_set.pm.list_name_plugin() if n != self.name)

    def implements(self, hook_name: str) -> bool:
        return self.plugin_set.implements(self.name, hook_name)

    def prepare(self, sources: Sequence[SourceFile]) -> None:
        self.plugin_set.call_each(
            "prepare_batch", [self.name], skip=self._others, sources=list(sources)
        )

    def tags(self, source: SourceFile) -> Any:
        """Whatever ``extract_tags`` returned (``None`` when not implemented)."""
        return self.plugin_set.call_first(
            "extract_tags", [self.name], skip=self._others, source=source
        )[1]

    def imports(self, source: SourceFile) -> Any:
        return self.plugin_set.call_first(
            "extract_imports", [self.name], skip=self._others, source=source
        )[1]

    def resolve(self, imp: Import, index: RepoIndex) -> Any:
        """Whatever ``resolve_import`` returned (``None`` when it declined or is absent)."""
        return self.plugin_set.call_first(
            "resolve_import", [self.name], skip=self._others, imp=imp, index=index
        )[1]
