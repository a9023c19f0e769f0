"""Context packs: the code a task needs, under a token budget, as a file an agent loads.

:class:`RepoMapper` selects (on :meth:`RepoMap.rank` and the dependencies between definitions
that :class:`SymbolLinks` reads from the repository state) and trims to the budget; the pack is
returned, and written to ``<pack_dir>/<task_id>.json`` only when a pack directory is given. See
``docs/packs.md``.
"""

from .links import SymbolLinks
from .mapper import RepoMapper
from .markdown import render_markdown
from .models import AgentRole, ContextPack, DependencyInfo, FileContent, PackSymbol
from .settings import PackError, PackSettings
from .store import check_task_id

__all__ = [
    "AgentRole",
    "ContextPack",
    "DependencyInfo",
    "FileContent",
    "PackError",
    "PackSettings",
    "PackSymbol",
    "RepoMapper",
    "SymbolLinks",
    "check_task_id",
    "render_markdown",
]
