"""JSON Schemas (draft 2020-12) of the repo.map request and response.

The schemas in ``docs/schemas/`` are written from these (``python -m repomapper.contract.schema
docs/schemas``); a test checks they are the same, and validates real envelopes against them. The
MCP tool ``repo_map`` publishes :func:`request_schema` as its input schema.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any

from .envelope import COUNT_KEYS, EMPTY_REASONS, ENVELOPE_KEYS, ERROR_CODES, OUTCOMES, SCHEMA
from .request import (
    DEFAULT_MAX_RANKED,
    DEFAULT_TOKEN_BUDGET,
    GLOB_ALPHABET,
    MAX_GLOB_LENGTH,
    MAX_GLOBS,
    MAX_LIST_ITEMS,
    MAX_RANKED_LIMIT,
    MAX_TASK_LENGTH,
    MAX_TOKEN_BUDGET,
)

_STRINGS = {
    "type": "array",
    "items": {"type": "string", "maxLength": 4096},
    "maxItems": MAX_LIST_ITEMS,
}

#: the schema of a list of globs (include_globs, exclude_globs)
_GLOB_LIST: dict[str, Any] = {
    "type": "array",
    "maxItems": MAX_GLOBS,
    "default": [],
    "items": {
        "type": "string",
        "minLength": 1,
        "maxLength": MAX_GLOB_LENGTH,
        "pattern": f"^[{GLOB_ALPHABET}]+$",
    },
}

REQUEST_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://repomapper.invalid/schemas/repo_map.request.json",
    "title": "repo.map request",
    "description": "Ask for a ranked, token-budgeted map of a repository. Unknown keys are rejected "
    "(invalid_input, naming the nearest valid key).",
    "type": "object",
    "additionalProperties": False,
    "required": ["clone_path"],
    "properties": {
        "clone_path": {
            "type": "string",
            "minLength": 1,
            "maxLength": 4096,
            "description": "Absolute path of an existing, readable directory: the repository to map.",
        },
        "token_budget": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_TOKEN_BUDGET,
            "default": DEFAULT_TOKEN_BUDGET,
            "description": "Hard cap on the map's size in tokens (tokenizer named in the answer).",
        },
        "include_globs": {
            **_GLOB_LIST,
            "description": "Only map files matching any of these gitignore-style globs: '*.go' (any depth), "
            "'**/*.go', 'src/**/*.py', '[ab]*.py'. Safe alphabet: letters, digits and "
            "* ? [ ] ! . , - _ / + @ = ~ ('!' only in '[!...]').",
        },
        "exclude_globs": {
            **_GLOB_LIST,
            "description": "Leave out files matching any of these globs (same syntax as include_globs), "
            "even when include_globs matches them: 'tests/**', '*_test.go', 'vendor/'.",
        },
        "languages": {
            "type": "array",
            "maxItems": 64,
            "default": [],
            "items": {"type": "string", "pattern": "^[A-Za-z0-9+#_.\\-]{1,64}$"},
            "description": "Only map files of these languages (python, go, typescript, rust, ...; "
            "`repomapper plugins` lists them). Combines with include_globs (both apply).",
        },
        "task": {
            # one type, not ["string", "null"]: single-type function-calling dialects cannot say
            # a union; leave the key out for no task (null is still accepted as none)
            "type": "string",
            "maxLength": MAX_TASK_LENGTH,
            "description": "The task in words (an issue, a traceback): the files and identifiers it names "
            "steer the ranking. Leave it out for a task-free map.",
        },
        "chat_files": {
            **_STRINGS,
            "default": [],
            "description": "Files already in the agent's context (relative to clone_path): they boost "
            "what they reference and are left out of the map.",
        },
        "mentioned_files": {
            **_STRINGS,
            "default": [],
            "description": "Files the user mentioned (relative).",
        },
        "mentioned_idents": {
            **_STRINGS,
            "default": [],
            "description": "Identifiers the user mentioned.",
        },
        "max_ranked": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_RANKED_LIMIT,
            "default": DEFAULT_MAX_RANKED,
            "description": "How many ranked_files and ranked_symbols to list.",
        },
    },
}

_REASON = {
    "type": "object",
    "additionalProperties": False,
    "required": ["code", "message"],
    "properties": {
        "code": {"enum": sorted([*EMPTY_REASONS, *ERROR_CODES])},
        "message": {"type": "string", "minLength": 1},
        "field": {"type": "string"},
        "value": {},
        "suggestion": {"type": "string"},
        "install": {"type": "string"},
    },
}
_WHY = {
    "type": "object",
    "required": ["signal", "detail", "weight"],
    "additionalProperties": False,
    "properties": {
        "signal": {"type": "string"},
        "detail": {"type": "string"},
        "weight": {"type": "number"},
    },
}
_DIAGNOSTIC = {
    "type": "object",
    "required": ["code", "severity", "message"],
    "additionalProperties": False,
    "properties": {
        "code": {"type": "string"},
        "severity": {"enum": ["info", "warning", "error"]},
        "message": {"type": "string"},
        "path": {"type": "string"},
        "paths": {"type": "array", "items": {"type": "string"}},
    },
}
_COUNT = {"type": "integer", "minimum": 0}
#: a string or null, said with one type per branch: single-type function-calling dialects (and
#: the MCP Inspector's strict mode) do not read a list of types
_STRING_OR_NULL = {"anyOf": [{"type": "string"}, {"type": "null"}]}

RESPONSE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://repomapper.invalid/schemas/repo_map.response.json",
    "title": "repo.map response envelope",
    "description": "outcome ok: a map; empty: reason.code says why (with counts); error: reason.code is "
    "invalid_input, backend_missing (reason.install) or internal.",
    "type": "object",
    "additionalProperties": False,
    "required": list(ENVELOPE_KEYS),
    "properties": {
        "schema": {"const": SCHEMA},
        "outcome": {"enum": list(OUTCOMES)},
        "reason": {"oneOf": [{"type": "null"}, _REASON]},
        "map": {"type": "string"},
        "tokens_estimated": _COUNT,
        "tokens_exact": {"type": "boolean"},
        "tokenizer": {"type": "string"},
        "token_budget": _COUNT,
        "files_covered": _COUNT,
        "files_total": _COUNT,
        "counts": {
            "type": "object",
            "additionalProperties": False,
            "required": list(COUNT_KEYS),
            "properties": {k: _COUNT for k in COUNT_KEYS},
        },
        "ranked_files": {
            "type": "array",
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["path", "score", "why"],
                "properties": {
                    "path": {"type": "string"},
                    "score": {"type": "number"},
                    "why": {"type": "array", "items": _WHY},
                },
            },
        },
        "ranked_files_total": _COUNT,
        "ranked_symbols": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["path", "name", "score", "line"],
                "properties": {
                    "path": {"type": "string"},
                    "name": {"type": "string"},
                    "score": {"type": "number"},
                    "line": {"type": "integer"},
                    "end_line": {"type": "integer"},
                    "symbol_kind": {"type": "string"},
                    "scope": {"type": "string"},
                    "signature": _STRING_OR_NULL,
                },
            },
        },
        "diagnostics": {"type": "array", "items": _DIAGNOSTIC},
        "next": {
            **_STRING_OR_NULL,
            "description": "How to ask for more, when there is more.",
        },
    },
    "allOf": [
        {
            "if": {"properties": {"outcome": {"const": "ok"}}},
            "then": {"properties": {"reason": {"type": "null"}, "map": {"minLength": 1}}},
        },
        {
            "if": {"properties": {"outcome": {"const": "empty"}}},
            "then": {
                "properties": {
                    "reason": {
                        "type": "object",
                        "properties": {"code": {"enum": sorted(EMPTY_REASONS)}},
                    }
                }
            },
        },
        {
            "if": {"properties": {"outcome": {"const": "error"}}},
            "then": {
                "properties": {
                    "map": {"const": ""},
                    "reason": {
                        "type": "object",
                        "properties": {"code": {"enum": sorted(ERROR_CODES)}},
                    },
                }
            },
        },
    ],
}


def request_schema(clone_path_required: bool = True) -> dict[str, Any]:
    """The request schema; with ``clone_path_required=False`` (a server started with a ROOT) the
    path may be left out."""
    schema = copy.deepcopy(REQUEST_SCHEMA)
    if not clone_path_required:
        schema["required"] = []
        schema["properties"]["clone_path"]["description"] += (
            " Optional: defaults to the server's ROOT, and must lie inside it."
        )
    return schema


def write(directory: Path) -> list[Path]:
    """Write both schemas into ``directory`` (sorted keys, two-space indent, final newline)."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for name, schema in (
        ("repo_map.request.json", REQUEST_SCHEMA),
        ("repo_map.response.json", RESPONSE_SCHEMA),
    ):
        path = directory / name
        path.write_text(render(schema), encoding="utf-8")
        out.append(path)
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # pragma: no cover
    for p in write(Path(sys.argv[1] if len(sys.argv) > 1 else "docs/schemas")):
        print(p)
