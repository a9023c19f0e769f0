"""Which files and symbols a task needs: the relevance model (see :mod:`.model`).

The names below are loaded when first asked for: a map without a task (every warm replay)
reads only :mod:`.symbols` and :mod:`.lexical`, and the rest of the model is a noticeable
share of such a call's start-up.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .lexical import LexicalIndex
    from .model import SIGNALS, TaskRanking, rank_task
    from .query import TaskQuery, parse_task

__all__ = ["SIGNALS", "LexicalIndex", "TaskQuery", "TaskRanking", "parse_task", "rank_task"]

_HOME = {
    "LexicalIndex": ".lexical",
    "SIGNALS": ".model",
    "TaskRanking": ".model",
    "rank_task": ".model",
    "TaskQuery": ".query",
    "parse_task": ".query",
}


def __getattr__(name: str) -> Any:
    home = _HOME.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value
