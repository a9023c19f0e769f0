"""The repo.map contract: one request model and one response envelope for the CLI
(``repomapper map --format json``), the library (:func:`run_map`) and the MCP tool ``repo_map``.

>>> from repomapper.contract import run_map
>>> answer = run_map({"clone_path": "/abs/path/to/repo", "token_budget": 1500, "task": "fix the login"})
>>> answer.outcome, answer.reason, answer.map    # "ok" | "empty" | "error"
"""

from .envelope import (
    EMPTY_REASONS,
    ENVELOPE_KEYS,
    ERROR_CODES,
    SCHEMA,
    Envelope,
    Reason,
)
from .request import DEFAULT_TOKEN_BUDGET, REQUEST_KEYS, ContractError, MapRequest, parse_request
from .run import MapOptions, map_with, run_map

__all__ = [
    "DEFAULT_TOKEN_BUDGET",
    "EMPTY_REASONS",
    "ENVELOPE_KEYS",
    "ERROR_CODES",
    "REQUEST_KEYS",
    "SCHEMA",
    "ContractError",
    "Envelope",
    "MapOptions",
    "MapRequest",
    "Reason",
    "map_with",
    "parse_request",
    "run_map",
]
