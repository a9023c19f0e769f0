"""The repository state: one per root, long-lived, updated per changed file; every output
reads it (see :mod:`repomapper.state.repository` and ``docs/architecture.md``)."""

from .repository import Prepared, RepositoryState, StateOptions

__all__ = ["Prepared", "RepositoryState", "StateOptions"]
