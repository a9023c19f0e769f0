"""The MCP tools: names, descriptions and input schemas (types, defaults, limits), and the
checks every call's arguments go through before a handler sees them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..contract.request import check_keys, invalid, nearest
from ..contract.schema import request_schema
from .paths import ToolError

MAX_NAME_LENGTH = 200
DEFAULT_PACK_BUDGET = 32_000
MAX_PACK_BUDGET = 1_000_000


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    input_schema: dict[str, Any]


def _clone_path(required: bool) -> dict[str, Any]:
    desc = "Absolute path of the repository (an existing, readable directory)."
    if not required:
        desc += " Optional: defaults to the server's ROOT; paths outside it are refused."
    return {"type": "string", "minLength": 1, "maxLength": 4096, "description": desc}


def _paging(default: int, maximum: int, what: str) -> dict[str, Any]:
    return {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": maximum,
            "default": default,
            "description": f"At most this many {what} (the answer says when there are more).",
        },
        "offset": {
            "type": "integer",
            "minimum": 0,
            "default": 0,
            "description": f"Skip this many {what} (to page: pass the 'next_offset' of the last answer).",
        },
    }


def _schema(required_root: bool, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "object",
        "additionalProperties": False,
        "properties": {"clone_path": _clone_path(required_root), **props},
        "required": (["clone_path"] if required_root else []) + required,
    }


_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_NAME_LENGTH,
    "description": "A symbol name (`Session`) or a qualified one (`Session.request`).",
}
_PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": 4096,
    "description": "A file path relative to the repository root (forward slashes; no '..', not absolute).",
}


def _without_ids(schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema is embedded in the tool list: no ``$schema`` / ``$id`` of its own."""
    return {k: v for k, v in schema.items() if k not in ("$schema", "$id")}


def _repo_map_spec(req: bool) -> ToolSpec:
    """The map itself (the repo.map request schema)."""
    return ToolSpec(
        "repo_map",
        "Ranked, token-budgeted map of a repository: the files and definitions that matter most for the "
        "task, as source lines under a hard token budget. Call it first, with `task` set to what you are "
        "doing. Answers the repo.map envelope (schema repomapper.map/1): outcome ok | empty (reason.code "
        "says why: no_files_matched, no_backend, all_backends_missing, no_symbols, ...) | error.",
        _without_ids(request_schema(clone_path_required=req)),
    )


def _find_symbol_spec(req: bool) -> ToolSpec:
    """Where a name is defined."""
    return ToolSpec(
        "find_symbol",
        "Where NAME is defined: file, line range, kind, signature and docstring. Exact matches first "
        "(qualified `Class.method` narrows by scope); when there is none, the closest names (fuzzy).",
        _schema(
            req,
            {
                "name": _NAME,
                "kind": {
                    "type": "string",
                    "maxLength": 40,
                    "description": "Only definitions of this kind (class, function, method, ...).",
                },
                **_paging(20, 200, "definitions"),
            },
            ["name"],
        ),
    )


def _find_references_spec(req: bool) -> ToolSpec:
    """Where a name is used."""
    return ToolSpec(
        "find_references",
        "Where NAME is used: the files that reference it (most uses first) with the lines, and where it is "
        "defined. Name-based: every use of the name counts, whatever it resolves to.",
        _schema(
            req,
            {
                "name": _NAME,
                "max_lines_per_file": {
                    "type": "integer",
                    "minimum": 0,
                    "maximum": 100,
                    "default": 10,
                    "description": "Lines listed per file (0: counts only).",
                },
                **_paging(20, 200, "files"),
            },
            ["name"],
        ),
    )


def _file_outline_spec(req: bool) -> ToolSpec:
    """One file's definitions and imports."""
    return ToolSpec(
        "file_outline",
        "The definitions of one file, in order, with line ranges, kinds, scopes and signatures; plus its "
        "imports. Cheaper than reading the file.",
        _schema(req, {"path": _PATH, **_paging(200, 2000, "definitions")}, ["path"]),
    )


def _related_files_spec(req: bool) -> ToolSpec:
    """A file's neighbourhood."""
    return ToolSpec(
        "related_files",
        "A file's neighbourhood: the files it imports, the files importing it, and its nearest neighbours "
        "in the reference graph (files whose names it uses, files using its names), strongest first.",
        _schema(
            req,
            {
                "path": _PATH,
                "limit": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 100,
                    "default": 10,
                    "description": "At most this many files in each list.",
                },
            },
            ["path"],
        ),
    )


def _context_pack_spec(req: bool) -> ToolSpec:
    """The code a task needs, as a pack."""
    return ToolSpec(
        "context_pack",
        "The code a task needs under a token budget: target files in full, the symbols they use and "
        "that use them, base classes and tests, each file with why it is there and its code (full, outline "
        "or signatures), never over the budget (schema repomapper.context_pack/1, see docs/packs.md). "
        "The role changes the selection (reviewing: dependents and tests; planning: signatures across more "
        "files). Writes nothing into the repository: the pack is the answer.",
        _schema(
            req,
            {
                "task_id": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 128,
                    "description": "A plain name (letters, digits, '.', '_', '-').",
                },
                "task": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 100_000,
                    "description": "What the task is, in words.",
                },
                "targets": {
                    "type": "array",
                    "items": _PATH,
                    "maxItems": 100,
                    "default": [],
                    "description": "Files the task is about, relative to the repository root.",
                },
                "role": {
                    "type": "string",
                    "enum": ["coding", "reviewing", "planning", "testing", "debugging"],
                    "default": "coding",
                    "description": "Who the pack is for.",
                },
                "token_budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_PACK_BUDGET,
                    "default": DEFAULT_PACK_BUDGET,
                    "description": "Token budget of the code in the pack (named as repo_map's).",
                },
                "budget": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_PACK_BUDGET,
                    "deprecated": True,
                    "description": "Deprecated: the old name of token_budget (still accepted).",
                },
            },
            ["task_id", "task"],
        ),
    )


_SPECS: tuple[Callable[[bool], ToolSpec], ...] = (
    _repo_map_spec,
    _find_symbol_spec,
    _find_references_spec,
    _file_outline_spec,
    _related_files_spec,
    _context_pack_spec,
)


def tool_specs(root_given: bool) -> list[ToolSpec]:
    """The tools, with ``clone_path`` optional when the server has a ROOT."""
    return [make(not root_given) for make in _SPECS]


TOOL_NAMES = (
    "repo_map",
    "find_symbol",
    "find_references",
    "file_outline",
    "related_files",
    "context_pack",
)


def unknown_tool(name: str) -> ToolError:
    near = nearest(name, TOOL_NAMES)
    hint = f"; did you mean {near!r}?" if near else ""
    return ToolError(
        "invalid_input",
        f"unknown tool {name!r}{hint} tools: {', '.join(TOOL_NAMES)}",
        suggestion=near,
    )


def check_arguments(spec: ToolSpec, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """Unknown keys (with the nearest valid one), types, limits, defaults filled in. The
    repo_map tool's own request validation lives in the contract."""
    if args is None:
        args = {}
    if not isinstance(args, Mapping):
        raise ToolError("invalid_input", "arguments must be a JSON object")
    props = spec.input_schema["properties"]
    try:
        check_keys(args, tuple(props))
    except Exception as exc:
        raise ToolError(
            "invalid_input",
            str(exc),
            field=getattr(exc, "field", None),
            suggestion=getattr(exc, "suggestion", None),
        ) from None
    if spec.name == "repo_map":
        return dict(args)
    out: dict[str, Any] = {}
    for key, schema in props.items():
        value = args.get(key)
        if value is None:
            if key in spec.input_schema["required"]:
                raise ToolError(
                    "invalid_input",
                    f"{key} is required: {schema.get('description', '')}",
                    field=key,
                )
            value = schema.get("default")
            out[key] = value
            continue
        kind = schema["type"]
        if kind == "string":
            if not isinstance(value, str) or not value:
                raise ToolError(
                    "invalid_input",
                    f"{key} must be a non-empty string (got {value!r:.80})",
                    field=key,
                )
            if len(value) > schema.get("maxLength", 4096):
                raise ToolError(
                    "invalid_input", f"{key} is over {schema['maxLength']} characters", field=key
                )
            if "enum" in schema and value not in schema["enum"]:
                raise ToolError(
                    "invalid_input",
                    f"{key} must be one of {', '.join(schema['enum'])} (got {value!r:.80})",
                    field=key,
                    suggestion=nearest(value, tuple(schema["enum"])),
                )
        elif kind == "array":
            if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
                raise ToolError(
                    "invalid_input", f"{key} must be a list of non-empty strings", field=key
                )
            if len(value) > schema.get("maxItems", 100):
                raise ToolError(
                    "invalid_input", f"{key} has more than {schema['maxItems']} items", field=key
                )
        elif kind == "integer":
            if isinstance(value, bool) or not isinstance(value, int):
                raise ToolError(
                    "invalid_input", f"{key} must be an integer (got {value!r:.80})", field=key
                )
            low, high = schema.get("minimum"), schema.get("maximum")
            if (low is not None and value < low) or (high is not None and value > high):
                raise ToolError(
                    "invalid_input",
                    f"{key} must be between {low} and {high} (got {value})",
                    field=key,
                    value=value,
                )
        out[key] = value
    if spec.name == "context_pack":
        _pack_budget(args, out)
    return out


def _pack_budget(args: Mapping[str, Any], out: dict[str, Any]) -> None:
    """``context_pack`` calls its budget ``token_budget``, as ``repo_map`` does; ``budget``, its
    old name, is still accepted (the same value, or alone). The handler gets ``budget``."""
    new, old = args.get("token_budget"), out.pop("budget", None)
    if new is not None and old is not None and new != old:
        raise ToolError(
            "invalid_input",
            f"token_budget ({new}) and budget ({old}) disagree: pass token_budget only "
            "(budget is its deprecated old name)",
            field="budget",
            value=old,
        )
    budget = out.pop("token_budget")
    out["budget"] = old if new is None and old is not None else budget


__all__ = ["TOOL_NAMES", "ToolSpec", "check_arguments", "invalid", "tool_specs", "unknown_tool"]
