"""The templates backend: Go templates (Hugo, Helm), Jinja, Django, Nunjucks, Twig, Liquid,
Handlebars/Mustache, ERB and FreeMarker files.

It reads the template tags only (``scanner``: definitions such as ``{{ define "x" }}`` and
``{% block x %}``, references such as ``{{ template "x" }}`` and macro calls, imports such as
``{% extends "base.html" %}`` and Hugo's ``partial "x.html"``) and resolves imported names the way
template loaders do (``resolve``). A ``.html`` file without any template tag is plain markup and
is declined (see :data:`.dialects.MARKUP_EXTENSIONS`). ``docs/languages.md`` says what it reads.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import (
    DEF,
    REF,
    BackendInfo,
    Capability,
    Import,
    SourceFile,
    Tag,
    tag_sort_key,
)

from .dialects import EXTENSIONS, LANGUAGES, MARKUP_EXTENSIONS, suffix_of, syntaxes_for
from .resolve import resolve_template

if TYPE_CHECKING:
    from .scanner import Document

log = logging.getLogger(__name__)

NAME = "templates"
VERSION = "1.1"

CAPABILITIES = tuple(
    c.value
    for c in (
        Capability.DEFINITIONS,
        Capability.REFERENCES,
        Capability.IMPORTS,
        Capability.END_LINES,
        Capability.SIGNATURES,
        Capability.SCOPES,
        Capability.DOCSTRINGS,
    )
)


@hookimpl
def backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=VERSION,
        languages=tuple(language for language, _, _ in LANGUAGES),
        extensions=EXTENSIONS,
        capabilities=CAPABILITIES,
        description="template tags: definitions, partials, includes, extends and macro calls",
        language_extensions=tuple((language, exts) for language, exts, _ in LANGUAGES),
    )


def _document(source: SourceFile) -> Document | None:
    """The file's scan, shared by both hooks; None when the file is not a template (not a
    template extension, or markup without any template tag)."""
    syntaxes = syntaxes_for(source.path)
    if syntaxes is None:
        return None
    from .scanner import scan  # loaded with the first template: its patterns cost every start-up

    doc = source.memo(
        (NAME, "document"),
        lambda: scan(source.data.decode("utf-8", errors="replace"), syntaxes),
    )
    if doc.tags == 0 and suffix_of(source.path) in MARKUP_EXTENSIONS:
        return None
    return doc


def _usable(name: str) -> bool:
    """A name a tag can carry: on one line, without surrounding blanks."""
    return bool(name) and name == name.strip() and "\n" not in name and "\r" not in name


@hookimpl
def extract_tags(source: SourceFile) -> list[Tag] | None:
    doc = _document(source)
    if doc is None:
        return None
    if doc.problems:
        log.warning(
            "%s: %s",
            source.path,
            doc.problems[0],
            extra={"code": "parse_error", "path": source.path},
        )
    tags = {
        Tag(source.path, d.line, d.end_line, d.name, DEF, d.kind, d.scope, d.signature, d.doc)
        for d in doc.definitions
        if _usable(d.name)
    }
    tags |= {
        Tag(source.path, r.line, r.line, r.name, REF, r.kind)
        for r in doc.references
        if _usable(r.name)
    }
    return sorted(tags, key=tag_sort_key)


@hookimpl
def extract_imports(source: SourceFile) -> list[Import] | None:
    doc = _document(source)
    if doc is None:
        return None
    found = {
        Import(
            source.path,
            i.source,
            i.names,
            i.source.startswith(("./", "../")),
            i.line,
            alias=i.alias,
        )
        for i in doc.imports
        if _usable(i.source)
    }
    return sorted(found, key=lambda i: (i.line_number, i.source, i.names, i.alias or ""))


@hookimpl
def resolve_import(imp: Import, index: RepoIndex) -> Sequence[str] | None:
    if syntaxes_for(imp.file_path) is None:
        return None
    return resolve_template(imp.file_path, imp.source, index)
