"""Paths from a tool call: a repository root and files inside it, never a way out of it."""

from __future__ import annotations

import os
import posixpath
from pathlib import Path
from typing import Any

from ..contract.request import ContractError, check_clone_path

MAX_PATH_LENGTH = 4096


class ToolError(Exception):
    """A tool call that cannot be answered: a stable code and an actionable message."""

    def __init__(self, code: str, message: str, **detail: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = {k: v for k, v in detail.items() if v is not None}

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.detail}

    @classmethod
    def from_contract(cls, exc: ContractError) -> ToolError:
        return cls(
            exc.code,
            exc.message,
            field=exc.field,
            value=exc.value,
            suggestion=exc.suggestion,
            install=exc.install,
        )


def inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def resolve_root(clone_path: object, server_root: Path | None) -> Path:
    """The repository a call is about: ``clone_path`` (absolute, existing, readable), or the
    server's ROOT when left out; with a ROOT, anything outside it is refused."""
    if clone_path is None:
        if server_root is None:
            raise ToolError(
                "invalid_input",
                "clone_path is required: this server was started without a ROOT; "
                "pass the absolute path of the repository",
                field="clone_path",
            )
        return server_root
    try:
        check_clone_path(clone_path)
    except ContractError as exc:
        raise ToolError.from_contract(exc) from None
    real = Path(os.path.realpath(str(clone_path)))
    if server_root is not None and not inside(real, server_root):
        raise ToolError(
            "invalid_input",
            f"clone_path {clone_path!r} is outside this server's root {str(server_root)!r}; "
            "leave clone_path out to use the root",
            field="clone_path",
            value=clone_path,
        )
    return real


def safe_relative(root: Path, path: object, field: str = "path") -> str:
    """``path`` relative to ``root``, normalised with forward slashes; refused when absolute,
    when it climbs (``..``), or when a symlink on the way leads out of ``root``."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError(
            "invalid_input",
            f"{field} is required: a file path relative to the repository root",
            field=field,
        )
    if len(path) > MAX_PATH_LENGTH or any(ord(c) < 32 for c in path):
        raise ToolError(
            "invalid_input",
            f"{field} is too long or contains control characters",
            field=field,
            value=path[:80],
        )
    p = path.replace("\\", "/")
    if p.startswith("/") or os.path.isabs(path) or (len(p) > 1 and p[1] == ":"):
        raise ToolError(
            "invalid_input",
            f"{field} {path!r} is absolute; give it relative to the repository root",
            field=field,
            value=path,
        )
    parts = [x for x in p.split("/") if x not in ("", ".")]
    if ".." in parts:
        raise ToolError(
            "invalid_input",
            f"{field} {path!r} climbs out with '..'; paths stay inside the repository",
            field=field,
            value=path,
        )
    if not parts:
        raise ToolError(
            "invalid_input", f"{field} {path!r} names the root, not a file", field=field, value=path
        )
    rel = posixpath.join(*parts)
    real = Path(os.path.realpath(os.path.join(str(root), rel)))
    if not inside(real, root):
        raise ToolError(
            "invalid_input",
            f"{field} {path!r} leads outside the repository through a symlink",
            field=field,
            value=path,
        )
    return rel
