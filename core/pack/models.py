"""The data of a context pack (the design's ``ParsedFile``, ``SymbolInfo``, ``ImportInfo``,
``ASTContext``, ``ContextPack``, ``FileContent``, ``DependencyInfo``): frozen, with a JSON round
trip (``to_dict`` / ``from_dict``) whose shape ``docs/schemas/context_pack.json`` describes.

Lines are 1-based and inclusive. Symbol ids are ``"<path>::<qualified name>"``; a file's module
level is ``"<path>::"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from ..model import Diagnostic

if TYPE_CHECKING:
    from .depgraph import DependencyGraph

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
class SymbolInfo:
    """A definition: where, what kind, its signature and docstring, the files that reference it;
    in a pack also its score, why it is there and how much of it the pack holds (``included``:
    ``body``, ``signature`` or ``listed``)."""

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
    def from_dict(cls, d: dict[str, Any]) -> SymbolInfo:
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
class ImportInfo:
    """An import statement; ``resolved`` lists the repository files it resolves to (through the
    importing file's backend), empty for a third-party or unresolvable import."""

    source: str
    names: tuple[str, ...] = ()
    is_relative: bool = False
    line_number: int = 0
    resolved: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "names": list(self.names),
            "is_relative": self.is_relative,
            "line_number": self.line_number,
            "resolved": list(self.resolved),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ImportInfo:
        return cls(
            d["source"],
            tuple(d.get("names", ())),
            d.get("is_relative", False),
            d.get("line_number", 0),
            tuple(d.get("resolved", ())),
        )


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """One file as our extraction saw it. ``references`` are (name, line, kind) triples of every
    reference (what the dependency graph links; kind is the backend's, ``call`` where known);
    ``raw_content`` is ``None`` where not loaded (the stored AST context keeps ``digest``, the
    sha256 of the bytes, instead of the text)."""

    path: str
    language: str
    symbols: tuple[SymbolInfo, ...] = ()
    imports: tuple[ImportInfo, ...] = ()
    exports: tuple[str, ...] = ()
    raw_content: str | None = None
    line_count: int = 0
    references: tuple[tuple[str, int, str], ...] = ()
    digest: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "language": self.language,
            "symbols": [s.to_dict() for s in self.symbols],
            "imports": [i.to_dict() for i in self.imports],
            "exports": list(self.exports),
            "raw_content": self.raw_content,
            "line_count": self.line_count,
            "references": [list(r) for r in self.references],
            "digest": self.digest,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ParsedFile:
        return cls(
            d["path"],
            d["language"],
            tuple(SymbolInfo.from_dict(s) for s in d.get("symbols", ())),
            tuple(ImportInfo.from_dict(i) for i in d.get("imports", ())),
            tuple(d.get("exports", ())),
            d.get("raw_content"),
            d.get("line_count", 0),
            tuple((r[0], r[1], r[2]) for r in d.get("references", ())),
            d.get("digest", ""),
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
    symbols: tuple[SymbolInfo, ...]
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
            tuple(SymbolInfo.from_dict(s) for s in d["symbols"]),
            tuple(DependencyInfo.from_dict(x) for x in d["dependencies"]),
            d["metadata"],
            d["token_count"],
            dict(d["relevance_scores"]),
            tuple(_diag_from(x) for x in d.get("diagnostics", ())),
        )


@dataclass(frozen=True)
class ASTContext:
    """The extracted repository, keyed by its state: ``git_sha`` (or ``"digest:<sha256>"``
    without git) and ``file_set`` (a digest of every path, size and mtime). The dependency graph
    is rebuilt from ``files`` when read back, not stored."""

    repo_path: str
    git_sha: str
    file_set: str
    files: dict[str, ParsedFile]
    created_at: str
    token_estimate: int
    dependency_graph: DependencyGraph | None = field(default=None, compare=False)

    def graph(self) -> DependencyGraph:
        if self.dependency_graph is not None:
            return self.dependency_graph
        from .depgraph import DependencyGraph

        g = DependencyGraph()
        for path in sorted(self.files):
            g.add_file(self.files[path])
        object.__setattr__(self, "dependency_graph", g)
        return g

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": "repomapper.ast_context/1",
            "repo_path": self.repo_path,
            "git_sha": self.git_sha,
            "file_set": self.file_set,
            "created_at": self.created_at,
            "token_estimate": self.token_estimate,
            "files": {p: self.files[p].to_dict() for p in sorted(self.files)},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ASTContext:
        return cls(
            d["repo_path"],
            d["git_sha"],
            d["file_set"],
            {p: ParsedFile.from_dict(f) for p, f in d["files"].items()},
            d["created_at"],
            d["token_estimate"],
        )
