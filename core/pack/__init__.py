"""Context packs: the code a task needs, under a token budget, as a file an agent loads.

:class:`RepoMapper` selects (on :meth:`RepoMap.rank` and the :class:`DependencyGraph` built from
our extraction) and trims to the budget; the pack is returned, and written to
``<pack_dir>/<task_id>.json`` only when a pack directory is given. See ``docs/packs.md``.
"""

from .depgraph import DependencyGraph
from .mapper import RepoMapper
from .markdown import render_markdown
from .models import (
    AgentRole,
    ASTContext,
    ContextPack,
    DependencyInfo,
    FileContent,
    ImportInfo,
    ParsedFile,
    SymbolInfo,
)
from .parser import ASTParser, PluginParser
from .settings import PackError, PackSettings
from .store import check_task_id

__all__ = [
    "ASTContext",
    "ASTParser",
    "AgentRole",
    "ContextPack",
    "DependencyGraph",
    "DependencyInfo",
    "FileContent",
    "ImportInfo",
    "PackError",
    "PackSettings",
    "ParsedFile",
    "PluginParser",
    "RepoMapper",
    "SymbolInfo",
    "check_task_id",
    "render_markdown",
]
