"""The stages every output runs on the repository state: each a function of a frozen settings
value and the :class:`~repomapper.state.RepositoryState`, returning a plain result.

- :func:`rank` (:mod:`.ranking`): the ranked repository (files and symbols with evidence);
- :func:`render` (:mod:`.rendering`): the map of a ranked repository within a budget;
- :func:`map_repository` (:mod:`.mapping`): the memoised map (rank, then render);
- :func:`current_tables` (:mod:`.tables`): the lookup tables the MCP tools read;
- :func:`warm_up` (:mod:`.warming`): build what the first call after an edit would.
"""

from .mapping import map_repository
from .ranking import rank, rank_prepared
from .rendering import MAX_RANKED_SYMBOLS, ranked_symbols, render
from .tables import RepositoryTables, current_tables
from .warming import warm_up

__all__ = [
    "MAX_RANKED_SYMBOLS",
    "RepositoryTables",
    "current_tables",
    "map_repository",
    "rank",
    "rank_prepared",
    "ranked_symbols",
    "render",
    "warm_up",
]
