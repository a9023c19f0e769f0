"""repomapper: ranked, token-budgeted repository maps for LLM coding agents."""

from typing import TYPE_CHECKING

from .hookspecs import hookimpl
from .model import (
    BackendInfo,
    Capability,
    Diagnostic,
    FileExtraction,
    Import,
    MapResult,
    SourceFile,
    SymbolKind,
    Tag,
)

if TYPE_CHECKING:
    from .pack import RepoMapper
    from .repomap import RepoMap

__version__ = "0.1.0"

__all__ = [
    "BackendInfo",
    "Capability",
    "Diagnostic",
    "FileExtraction",
    "Import",
    "MapResult",
    "RepoMap",
    "RepoMapper",
    "SourceFile",
    "SymbolKind",
    "Tag",
    "__version__",
    "hookimpl",
]


def __getattr__(name: str) -> type:  # lazy: importing repomapper must stay cheap for plugins
    if name == "RepoMap":
        from .repomap import RepoMap

        return RepoMap
    if name == "RepoMapper":
        from .pack import RepoMapper

        return RepoMapper
    raise AttributeError(name)
