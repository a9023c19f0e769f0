"""The output of a context pack (``ContextPack``, ``FileContent``, ``PackSymbol``,
``DependencyInfo``): frozen, with a JSON round trip (``to_dict`` / ``from_dict``) whose shape
``docs/schemas/context_pack.json`` describes. What a pack is selected from is the repository
state's own data (its summaries' ``Tag``s, symbol table and import edges), not a model of its
own.

Lines are 1-based and inclusive. Symbol ids are ``"<path>::<qualified name>"``; a file's module
level is ``"<path>::"``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from ..model import Diagnostic, Tag

PACK_FORMAT = "repomapper.context_pack/1"


class AgentRole(StrEnum):
    """Who the pack is for; each role selects differently (see :mod:`repomapper.pack.roles`)."""

    CODING = "coding"
    REVIEWING = "reviewing"
    PLANNING = "planning"
    TESTING = "testing"
    DEBUGGING = "debugging"


def symbol_id(path: str, qualified_name: str) -> str:
    return f"{path}::{qualified_name}"


def split_symbol_id(sid: str) -> tuple[str, str]:
    path, _, name = sid.rpartition("::")
    return path, name


def _diag_from(d: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        d["code"],
        d["message"],
        d.get("path"),
        d.get("severity", "warning"),
        tuple(d.get("paths", ())),
    )


@dataclass(frozen=True, slots=True)
class PackSymbol:
    """A definition in a pack (made from the state's :class:`~repomapper.model.Tag` by
    :meth:`of_tag`): where, what kind, its signature and docstring, the files that reference it,
    its score, why it is there and how much of it the pack holds (``included``: ``body``,
    ``signature`` or ``listed``)."""

    name: str
    kind: str
    file_path: str
    start_line: int
    end_line: int
    signature: str | None = None
    docstring: str | None = None
    references: tuple[str, ...] = ()
    scope: str = ""
    score: float = 0.0
    why: tuple[str, ...] = ()
    included: str = ""

    @property
    def qualified_name(self) -> str:
        return f"{self.scope}.{self.name}" if self.scope else self.name

    @property
    def id(self) -> str:
        return symbol_id(self.file_path, self.qualified_name)

    @classmethod
    def of_tag(
        cls,
        tag: Tag,
        references: tuple[str, ...],
        score: float,
        why: tuple[str, ...],
        included: str,
    ) -> PackSymbol:
        return cls(
            tag.name,
            str(tag.symbol_kind),
            tag.file_path,
            tag.start_line,
            max(tag.end_line, tag.start_line),
            tag.signature,
            tag.docstring,
            references,
            tag.scope,
            score,
            why,
            included,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "file_path": self.file_path,
            "start_line": self.start_line,
            "end_line": self.end_line,
            "signature": self.signature,
            "docstring": self.docstring,
            "references": list(self.references),
            "scope": self.scope,
            "score": self.score,
            "why": list(self.why),
            "included": self.included,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PackSymbol:
        return cls(
            d["name"],
            d["kind"],
            d["file_path"],
            d["start_line"],
            d["end_line"],
            d.get("signature"),
            d.get("docstring"),
            tuple(d.get("references", ())),
            d.get("scope", ""),
            d.get("score", 0.0),
            tuple(d.get("why", ())),
            d.get("included", ""),
        )


@dataclass(frozen=True, slots=True)
class DependencyInfo:
    """``from_symbol`` depends on ``to_symbol`` (ids ``path::qualified.name``) through ``kind``
    (``import``, ``call``, ``reference``, ``inheritance`` or ``test``), ``depth`` steps from the
    symbol asked about; ``file_path`` and ``line`` locate the reference."""

    from_symbol: str
    to_symbol: str
    kind: str
    depth: int
    file_path: str
    line: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.from_symbol,
            "to": self.to_symbol,
            "kind": self.kind,
            "depth": self.depth,
            "file_path": self.file_path,
            "line": self.line,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DependencyInfo:
        return cls(d["from"], d["to"], d["kind"], d["depth"], d["file_path"], d["line"])


@dataclass(frozen=True, slots=True)
class FileContent:
    """One file of a pack: the code included (``mode``: ``full``, the whole file; ``outline``,
    every signature and docstring plus the bodies of the symbols that matter; ``signatures``,
    the signatures of the symbols that matter), the line ``spans`` it comes from, its exact
    ``token_count``, its score and why it is there."""

    path: str
    language: str
    mode: str
    content: str
    spans: tuple[tuple[int, int], ...]
    token_count: int
    line_count: int
    score: float
    why: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "language": self.language,
            "mode": self.mode,
            "content": self.content,
            "spans": [list(s) for s in self.spans],
            "token_count": self.token_count,
            "line_count": self.line_count,
            "score": self.score,
            "why": list(self.why),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> FileContent:
        return cls(
            d["path"],
            d["language"],
            d["mode"],
            d["content"],
            tuple((a, b) for a, b in d["spans"]),
            d["token_count"],
            d["line_count"],
            d["score"],
            tuple(d.get("why", ())),
        )


@dataclass(frozen=True)
class ContextPack:
    """What an agent loads for a task: files in order with their code, the symbols that matter,
    the dependencies between them, scores, and the metadata (budget, repository state, settings,
    omitted files, diagnostics)."""

    task_id: str
    role: str
    git_sha: str
    files: tuple[FileContent, ...]
    symbols: tuple[PackSymbol, ...]
    dependencies: tuple[DependencyInfo, ...]
    metadata: dict[str, Any]
    token_count: int
    relevance_scores: dict[str, float]
    diagnostics: tuple[Diagnostic, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": PACK_FORMAT,
            "task_id": self.task_id,
            "role": self.role,
            "git_sha": self.git_sha,
            "token_count": self.token_count,
            "files": [f.to_dict() for f in self.files],
            "symbols": [s.to_dict() for s in self.symbols],
            "dependencies": [d.to_dict() for d in self.dependencies],
            "relevance_scores": dict(self.relevance_scores),
            "metadata": self.metadata,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ContextPack:
        return cls(
            d["task_id"],
            d["role"],
            d["git_sha"],
            tuple(FileContent.from_dict(f) for f in d["files"]),
            tuple(PackSymbol.from_dict(s) for s in d["symbols"]),
            tuple(DependencyInfo.from_dict(x) for x in d["dependencies"]),
            d["metadata"],
            d["token_count"],
            dict(d["relevance_scores"]),
            tuple(_diag_from(x) for x in d.get("diagnostics", ())),
        )
