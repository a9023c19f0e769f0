"""Context packs: the code a task needs, under a token budget, as a file an agent loads.

:class:`RepoMapper` selects (on :meth:`RepoMap.rank` and the :class:`DependencyGraph` built from
our extraction), trims to the budget, and writes ``context/packs/<task_id>.json``. See
``docs/packs.md``.
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
