"""The tree-sitter backend: TypeScript, TSX, JavaScript and Go with every install; about thirty
more languages when their grammar wheels are installed (the ``languages`` extra) or come from
``tree-sitter-language-pack`` below 1.0 (the ``langpack`` extra). ``docs/languages.md`` lists
them, generated from :data:`.languages.SPECS` and the conformance run.

Each language has our own queries (``queries/<language>-tags.scm`` and ``-imports.scm``) for
definitions (with end lines, one-line signatures, scopes and doc comments), references and
imports. Only languages whose grammar is installed are claimed, so other files fall through to
the next backend (ctags). Python is left to the Python backends.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING, TypeVar

from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import BackendInfo, Capability, Import, SourceFile, Tag

from .languages import (
    available_specs,
    extras_report,
    grammar_versions,
    missing_specs,
    pack_status,
    queries_digest,
    tree_sitter_version,
)

# the parsing, extraction and resolution modules are imported when a file is first asked for:
# a repository with no file of these languages never loads them
if TYPE_CHECKING:
    from .parsing import Parsed

T = TypeVar("T")
log = logging.getLogger(__name__)

NAME = "treesitter"
#: Changes whenever the queries or the tree-sitter runtime change (it keys the tag cache); the
#: declared version also carries a hash of the installed grammars' versions.
VERSION = f"1.1-ts{tree_sitter_version() or 'none'}-q{queries_digest()}"

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


def _extra_line(extra: str, found: list[str], missing: list[str]) -> str:
    """``extra languages: found a, b; missing c (pip install 'repomapper[languages]')``."""
    text = f"extra {extra}: found {', '.join(found) or 'none'}"
    if missing:
        text += f"; missing {', '.join(missing)}"
        if extra != "core":
            text += f" (pip install 'repomapper[{extra}]')"
        if extra == "langpack" and pack_status()[1]:
            text += f" [{pack_status()[1]}]"
    return text


@cache
def _backend_info() -> BackendInfo:
    specs = available_specs()
    versions = grammar_versions()
    grammar_hash = hashlib.blake2b(repr(versions).encode(), digest_size=4).hexdigest()
    language_extensions: list[tuple[str, tuple[str, ...]]] = []
    claimed: set[str] = set()
    for spec in specs:
        exts = tuple(e for e in spec.extensions if e not in claimed)
        claimed.update(exts)
        language_extensions.append((spec.name, exts))
    if tree_sitter_version() is None:
        detail = "py-tree-sitter is not installed"
    elif not specs:
        detail = "no tree-sitter grammar is installed"
    else:
        detail = "grammars: " + ", ".join(f"{name} {version}" for name, version in versions)
    if tree_sitter_version() is not None:
        detail += "; " + "; ".join(_extra_line(*row) for row in extras_report())
    return BackendInfo(
        name=NAME,
        version=f"{VERSION}-g{grammar_hash}",
        languages=tuple(s.name for s in specs),
        extensions=tuple(sorted(claimed)),
        capabilities=CAPABILITIES,
        description="tree-sitter grammars with our own tags and imports queries",
        available=bool(specs),
        detail=detail,
        language_extensions=tuple(language_extensions),
        installable=_installable(claimed),
    )


def _installable(claimed: set[str]) -> tuple[tuple[str, tuple[str, ...], str], ...]:
    """The languages whose grammar is missing, with the extensions no installed grammar claims
    and how to install the grammar."""
    out = []
    for spec in missing_specs():
        exts = tuple(e for e in spec.extensions if e not in claimed)
        if not exts:
            continue
        if tree_sitter_version() is None or spec.extra == "core":
            how = f"pip install {'tree-sitter ' if tree_sitter_version() is None else ''}{spec.distribution}"
        else:
            how = f"pip install 'repomapper[{spec.extra}]'"
        out.append((spec.name, exts, how))
    return tuple(out)


@hookimpl
def backend_info() -> BackendInfo:
    return _backend_info()


def _collected(
    source: SourceFile, key: str, collect: Callable[[Parsed], Iterable[T]]
) -> list[T] | None:
    """What ``collect`` finds in the file, parsed once for both hooks (the parse and each
    result live in the file's memo, :meth:`SourceFile.memo`)."""
    from .parsing import parse

    parsed = parse(source)
    if parsed is None:
        return None
    return list(source.memo((NAME, key), lambda: tuple(collect(parsed))))


@hookimpl
def extract_tags(source: SourceFile) -> list[Tag] | None:
    from .extract import collect_tags

    tags = _collected(source, "tags", collect_tags)
    if tags is not None:
        _report_syntax_errors(source, tags)
    return tags


#: Error nodes covering at least this share of a file make its extraction a ``parse_error``.
MOSTLY_ERRORS = 0.5


def _report_syntax_errors(source: SourceFile, tags: list[Tag]) -> None:
    """Say what a file's syntax errors cost. tree-sitter recovers around an error, so a file
    whose grammar lags the language (a TypeScript variance annotation, a Flow type in a ``.js``
    file) usually keeps nearly all its definitions: that is ``parse_partial``, an info. Only a file
    from which nothing came out, or that is mostly error nodes, is a ``parse_error`` warning."""
    from .parsing import parse, syntax_errors

    parsed = parse(source)
    errors = syntax_errors(parsed) if parsed is not None else None
    if errors is None or parsed is None:
        return
    definitions = sum(1 for t in tags if t.is_def)
    where = f"{errors.places} syntax error(s), the first at line {errors.first_line}"
    if not tags or errors.share(len(parsed.data)) >= MOSTLY_ERRORS:
        log.warning(
            "%s: %s; %d definition(s) extracted from what parsed",
            source.path,
            where,
            definitions,
            extra={"code": "parse_error", "path": source.path},
        )
    else:
        log.warning(
            "%s: %s; the rest parsed (%d definition(s) extracted)",
            source.path,
            where,
            definitions,
            extra={"code": "parse_partial", "path": source.path, "severity": "info"},
        )


@hookimpl
def extract_imports(source: SourceFile) -> list[Import] | None:
    from .imports import collect_imports

    return _collected(source, "imports", collect_imports)


@hookimpl
def resolve_import(imp: Import, index: RepoIndex) -> list[str] | None:
    from .resolve import resolve

    found = resolve(imp, index)
    return None if found is None else list(found)
