"""The repo.map request: one model for the CLI, the library and the MCP tool, validated here.

Bad input is expected input: every rejection is a :class:`ContractError` with the stable code
``invalid_input``, the field at fault, the offending value and, where one is close, the key or
value the caller probably meant.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..settings import DEFAULT_MAP_TOKENS

#: the map's default budget: one default on every surface (``--tokens``, ``RepoMap``, MCP)
DEFAULT_TOKEN_BUDGET = DEFAULT_MAP_TOKENS
MAX_TOKEN_BUDGET = 200_000
DEFAULT_MAX_RANKED = 50
MAX_RANKED_LIMIT = 10_000
MAX_GLOB_LENGTH = 256
MAX_GLOBS = 64
MAX_LIST_ITEMS = 1000
MAX_ITEM_LENGTH = 4096
MAX_TASK_LENGTH = 100_000
#: Glob characters allowed: letters, digits and ``* ? [ ] ! . , - _ / + @ = ~``. No spaces, quotes,
#: backslashes, ``#`` (a gitignore comment) or shell metacharacters.
GLOB_ALPHABET = r"A-Za-z0-9*?\[\]!.,\-_/+@=~"
_GLOB_RE = re.compile(f"[{GLOB_ALPHABET}]+")
_LANGUAGE_RE = re.compile(r"[A-Za-z0-9+#_.\-]{1,64}")


class ContractError(ValueError):
    """A request or an outcome that is an error: a stable code plus what the caller can do."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        field: str | None = None,
        value: Any = None,
        suggestion: str | None = None,
        install: str | None = None,
    ):
        super().__init__(message)
        self.code = code
        self.message = message
        self.field = field
        self.value = value
        self.suggestion = suggestion
        self.install = install

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.field is not None:
            d["field"] = self.field
        if self.value is not None:
            d["value"] = self.value
        if self.suggestion is not None:
            d["suggestion"] = self.suggestion
        if self.install is not None:
            d["install"] = self.install
        return d


@dataclass(frozen=True, slots=True)
class MapRequest:
    """What a caller asks of a map. Build it with :func:`parse_request` from untrusted input."""

    clone_path: str
    token_budget: int = DEFAULT_TOKEN_BUDGET
    include_globs: tuple[str, ...] = ()
    exclude_globs: tuple[str, ...] = ()
    languages: tuple[str, ...] = ()
    task: str | None = None
    chat_files: tuple[str, ...] = ()
    mentioned_files: tuple[str, ...] = ()
    mentioned_idents: tuple[str, ...] = ()
    max_ranked: int = DEFAULT_MAX_RANKED
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "clone_path": self.clone_path,
            "token_budget": self.token_budget,
            "include_globs": list(self.include_globs),
            "exclude_globs": list(self.exclude_globs),
            "languages": list(self.languages),
            "task": self.task,
            "chat_files": list(self.chat_files),
            "mentioned_files": list(self.mentioned_files),
            "mentioned_idents": list(self.mentioned_idents),
            "max_ranked": self.max_ranked,
        }


REQUEST_KEYS = (
    "clone_path",
    "token_budget",
    "include_globs",
    "exclude_globs",
    "languages",
    "task",
    "chat_files",
    "mentioned_files",
    "mentioned_idents",
    "max_ranked",
)


def invalid(
    message: str, field: str | None = None, value: Any = None, suggestion: str | None = None
) -> ContractError:
    return ContractError("invalid_input", message, field=field, value=value, suggestion=suggestion)


#: Keys other tools use, and what to do instead.
FOREIGN_KEYS = {
    "session_id": "repomapper keeps no sessions: drop it and pass clone_path",
    "_session_id": "repomapper keeps no sessions: drop it and pass clone_path",
    "path": "the repository is named by clone_path",
    "root": "the repository is named by clone_path",
    "max_tokens": "the budget is token_budget",
    "tokens": "the budget is token_budget",
    "globs": "use include_globs",
}


def nearest(word: str, choices: list[str] | tuple[str, ...], cutoff: float = 0.7) -> str | None:
    """The closest choice to ``word`` (difflib, then containment), or None when nothing is close."""
    lowered = {c.lower(): c for c in choices}
    w = word.lower().strip("_")
    found = difflib.get_close_matches(w, list(lowered), n=1, cutoff=cutoff)
    if found:
        return lowered[found[0]]
    contained = [c for c in lowered if len(w) >= 4 and (w in c or c in w)]
    return lowered[contained[0]] if len(contained) == 1 else None


def check_keys(data: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    """Reject unknown keys, naming the nearest valid one."""
    for key in data:
        if not isinstance(key, str):
            raise invalid(f"request keys must be strings (got {key!r})", value=repr(key))
        if key in allowed:
            continue
        near = nearest(key, allowed)
        hint = f"; did you mean {near!r}?" if near else ""
        if key in FOREIGN_KEYS:
            hint = f" ({FOREIGN_KEYS[key]})"
        raise invalid(f"unknown key {key!r}{hint} valid keys: {', '.join(allowed)}", key, key, near)


def check_glob(glob: Any, field: str = "include_globs") -> str:
    """A glob in the safe alphabet, under the length limit, with balanced brackets."""
    if not isinstance(glob, str):
        raise invalid(
            f"{field}: each glob must be a string (got {type(glob).__name__})", field, repr(glob)
        )
    if not glob:
        raise invalid(f"{field}: an empty glob matches nothing; leave it out", field, glob)
    if len(glob) > MAX_GLOB_LENGTH:
        raise invalid(
            f"{field}: glob of {len(glob)} characters is over the {MAX_GLOB_LENGTH}-character limit",
            field,
            glob[:80] + "...",
        )
    if not _GLOB_RE.fullmatch(glob):
        bad = sorted({c for c in glob if not _GLOB_RE.fullmatch(c)})
        raise invalid(
            f"{field}: glob {glob!r} contains characters outside the safe alphabet "
            f"(letters, digits and * ? [ ] ! . , - _ / + @ = ~): {''.join(bad)!r}",
            field,
            glob,
        )
    if glob.startswith("!"):
        raise invalid(
            f"{field}: glob {glob!r} starts with '!' (negation is not supported: "
            "use exclude_globs to leave files out)",
            field,
            glob,
        )
    depth = 0
    for i, c in enumerate(glob):
        if c == "[":
            if depth:
                raise invalid(f"{field}: glob {glob!r} nests '['", field, glob)
            depth = 1
        elif c == "]" and depth:
            depth = 0
        elif c == "!" and not (i > 0 and glob[i - 1] == "["):
            raise invalid(
                f"{field}: glob {glob!r} uses '!' outside a character class '[!...]'", field, glob
            )
    if depth:
        raise invalid(f"{field}: glob {glob!r} has an unclosed '['", field, glob)
    if ".." in glob.split("/"):
        raise invalid(f"{field}: glob {glob!r} leads out of the repository ('..')", field, glob)
    relative: str = glob
    while relative.startswith("./"):
        relative = relative[2:]
    from ..discover import GlobError, compile_globs

    try:  # what the map will compile: a glob pathspec reads as no rule at all is refused here
        compile_globs([relative], field)
    except GlobError as exc:
        raise invalid(str(exc), field, relative) from None
    return relative


def _str_list(data: Mapping[str, Any], key: str, limit: int = MAX_LIST_ITEMS) -> tuple[str, ...]:
    value = data.get(key)
    if value is None:
        return ()
    if isinstance(value, str):
        raise invalid(
            f"{key} must be a list of strings, not a string (write [{value!r}])", key, value
        )
    if not isinstance(value, list | tuple):
        raise invalid(
            f"{key} must be a list of strings (got {type(value).__name__})", key, repr(value)[:80]
        )
    if len(value) > limit:
        raise invalid(f"{key} has {len(value)} items; the limit is {limit}", key)
    out = []
    for item in value:
        if not isinstance(item, str):
            raise invalid(
                f"{key}: items must be strings (got {type(item).__name__})", key, repr(item)[:80]
            )
        if len(item) > MAX_ITEM_LENGTH or "\0" in item:
            raise invalid(f"{key}: item too long or containing NUL", key, item[:80])
        out.append(item)
    return tuple(out)


def _int(data: Mapping[str, Any], key: str, default: int, low: int, high: int) -> int:
    value = data.get(key, default)
    if value is None:
        return default
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or (isinstance(value, float) and not value.is_integer())
    ):
        raise invalid(
            f"{key} must be an integer (got {value!r})",
            key,
            value if isinstance(value, int | float | str) else repr(value),
        )
    value = int(value)
    if not low <= value <= high:
        raise invalid(f"{key} must be between {low} and {high} (got {value})", key, value)
    return value


def check_clone_path(value: Any, field: str = "clone_path") -> str:
    """An absolute path to an existing, readable directory."""
    if not isinstance(value, str) or not value:
        raise invalid(
            f"{field} is required: the absolute path of the repository to map",
            field,
            None if value is None else repr(value)[:80],
        )
    if "\0" in value or len(value) > MAX_ITEM_LENGTH:
        raise invalid(f"{field} contains NUL or is too long", field, value[:80])
    if not os.path.isabs(value):
        raise invalid(f"{field} must be an absolute path (got {value!r})", field, value)
    p = Path(value)
    if not p.exists():
        raise invalid(f"{field} {value!r} does not exist", field, value)
    if not p.is_dir():
        raise invalid(f"{field} {value!r} is not a directory", field, value)
    if not os.access(p, os.R_OK | os.X_OK):
        raise invalid(f"{field} {value!r} is not readable (permission denied)", field, value)
    return value


def parse_request(
    data: Mapping[str, Any] | MapRequest, *, default_root: str | None = None
) -> MapRequest:
    """Validate untrusted input (a JSON object) into a :class:`MapRequest`.

    ``default_root`` fills a missing ``clone_path`` (the MCP server started with a ROOT).
    Raises :class:`ContractError` (``invalid_input``) naming the field and value at fault.
    """
    if isinstance(data, MapRequest):
        data = data.to_dict()
    if not isinstance(data, Mapping):
        raise invalid(f"a request must be a JSON object (got {type(data).__name__})")
    check_keys(data, REQUEST_KEYS)
    clone_path = data.get("clone_path")
    if clone_path is None and default_root is not None:
        clone_path = default_root
    clone_path = check_clone_path(clone_path)
    globs = _str_list(data, "include_globs", MAX_GLOBS)
    excluded = _str_list(data, "exclude_globs", MAX_GLOBS)
    languages = _str_list(data, "languages", 64)
    for lang in languages:
        if not _LANGUAGE_RE.fullmatch(lang):
            raise invalid(f"languages: {lang!r} is not a language name", "languages", lang)
    task = data.get("task")
    if task is not None and not isinstance(task, str):
        raise invalid(f"task must be a string (got {type(task).__name__})", "task", repr(task)[:80])
    if task is not None and len(task) > MAX_TASK_LENGTH:
        raise invalid(
            f"task of {len(task)} characters is over the {MAX_TASK_LENGTH}-character limit", "task"
        )
    return MapRequest(
        clone_path=clone_path,
        token_budget=_int(data, "token_budget", DEFAULT_TOKEN_BUDGET, 1, MAX_TOKEN_BUDGET),
        include_globs=tuple(check_glob(g) for g in globs),
        exclude_globs=tuple(check_glob(g, "exclude_globs") for g in excluded),
        languages=languages,
        task=task or None,
        chat_files=_str_list(data, "chat_files"),
        mentioned_files=_str_list(data, "mentioned_files"),
        mentioned_idents=_str_list(data, "mentioned_idents"),
        max_ranked=_int(data, "max_ranked", DEFAULT_MAX_RANKED, 0, MAX_RANKED_LIMIT),
    )
