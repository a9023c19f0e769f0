"""Which files and symbols a task needs: the relevance model (see :mod:`.model`)."""

from .lexical import LexicalIndex
from .model import SIGNALS, TaskRanking, rank_task
from .query import TaskQuery, parse_task

__all__ = ["SIGNALS", "LexicalIndex", "TaskQuery", "TaskRanking", "parse_task", "rank_task"]
