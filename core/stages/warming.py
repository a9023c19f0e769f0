"""Build now what the first call after an edit would otherwise build: a map replayed from the
cache extracts and ranks nothing, so a long-lived owner (the MCP server) warms its state while
the agent reads the answer."""

from __future__ import annotations

from ..settings import ALL_FILES, MapSettings, Selection
from ..state import RepositoryState
from ..tablearrays import NamesAt
from .ranking import rank


def warm_up(state: RepositoryState, selection: Selection = ALL_FILES) -> None:
    """Extract and rank the selection, start the kept extraction worker (warmed on a file of the
    backend that maps most), load the tokenizer, build the backends' import lookup tables, and
    gather the names of a stored definition index (the first edit that adds or removes a
    definition splices them all), and rehearse an edit (see
    :meth:`RepositoryState.rehearse_edit`)."""
    ranked = rank(MapSettings(selection=selection), state)
    state.start_worker(ranked.mapped, ranked.entries)
    state.counter.count("warm")
    graph = state.graphs.get(selection)
    if graph is not None:
        state.prime_imports(graph)
        names = graph.definitions.arrays.idents
        if isinstance(names, NamesAt):
            names.gathered()
    state.rehearse_edit(selection)
