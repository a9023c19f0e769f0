"""The repomapper hooks for GraphQL. Registered by the ``repomapper`` entry point ``graphql``."""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from pathlib import Path

from repomapper.index import RepoIndex
from repomapper.model import tag_sort_key
from repomapper.plugin import DEF, REF, BackendInfo, Capability, Import, SourceFile, Tag, hookimpl

from . import __version__
from .parser import Document, parse_document

log = logging.getLogger(__name__)

NAME = "graphql"
EXTENSIONS = (".graphql", ".gql", ".graphqls")
#: What an extension-less ``# import "./fragments"`` may stand for.
IMPORT_EXTENSIONS = (".graphql", ".gql")

#: Where ``repomapper conformance`` finds this plugin's own fixtures and goldens.
conformance_fixtures = Path(__file__).resolve().parent / "conformance"


def handles(path: str) -> bool:
    return posixpath.splitext(path)[1].lower() in EXTENSIONS


@hookimpl
def backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=__version__,
        languages=("graphql",),
        extensions=EXTENSIONS,
        capabilities=(
            Capability.DEFINITIONS.value,
            Capability.REFERENCES.value,
            Capability.IMPORTS.value,
            Capability.END_LINES.value,
            Capability.SIGNATURES.value,
            Capability.SCOPES.value,
            Capability.DOCSTRINGS.value,
        ),
        description="GraphQL schemas and operations: types, fields, operations, fragments, "
        "type references, # import comments",
    )


def _document(source: SourceFile) -> Document:
    """The file parsed once for both hooks: repomapper hands them the same ``source``, and its
    memo lives until repomapper is done with the file."""
    return source.memo(
        ("graphql", "document"),
        lambda: parse_document(source.data.decode("utf-8", errors="replace")),
    )


@hookimpl
def extract_tags(source: SourceFile) -> list[Tag] | None:
    if not handles(source.path):
        return None
    doc = _document(source)
    if doc.problems:
        log.warning(
            "%s: %s",
            source.path,
            doc.problems[0],
            extra={"code": "parse_error", "path": source.path},
        )
    path = source.path
    tags = {
        Tag(path, d.start_line, d.end_line, d.name, DEF, d.symbol_kind, d.scope, d.signature, d.doc)
        for d in doc.definitions
    }
    tags |= {Tag(path, r.line, r.line, r.name, REF, r.kind) for r in doc.references}
    return sorted(tags, key=tag_sort_key)


@hookimpl
def extract_imports(source: SourceFile) -> list[Import] | None:
    if not handles(source.path):
        return None
    doc = _document(source)
    found = {
        Import(source.path, imp.path, imp.names, imp.path.startswith(("./", "../")), imp.line)
        for imp in doc.imports
    }
    return sorted(found, key=lambda i: (i.line_number, i.source, i.names))


@hookimpl
def resolve_import(imp: Import, index: RepoIndex) -> Sequence[str] | None:
    """``./x``/``../x`` relative to the importing file, trying ``.graphql`` and ``.gql`` (and
    ``x/index.graphql``). A bare ``x.graphql`` is tried the same way, as graphql-import reads it;
    when it is not there it names a package (graphql-tag's loader ``require``\\ s it)."""
    if not handles(imp.file_path):
        return None
    if imp.source.startswith("/") or "://" in imp.source:
        return []
    found = index.resolve_relative_path(imp.file_path, imp.source, extensions=IMPORT_EXTENSIONS)
    return [found] if found is not None and found != imp.file_path else []
