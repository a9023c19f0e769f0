"""The precise Python backend, on libcst (opt-in: ``--python-backend libcst``).

Definitions are the ast backend's (same names, kinds, lines, scopes, signatures). References are
resolved through libcst's scope analysis: each carries ``target``, the fully qualified name it
refers to where that can be known statically (imports, relative imports, module- and class-level
names, ``self.method``), and reads of local variables and parameters are not emitted at all.
See :mod:`repomapper.plugins.python.libcst_scopes` for the resolution rules.

libcst analyses in pure Python on top of a native parser, many times slower than ``ast``; the
file's memo (:meth:`SourceFile.memo`) lets ``extract_tags`` and ``extract_imports`` share one
parse. Each file is also parsed by ``ast`` first (a few per cent of the cost): code nested too
deeply for libcst's recursive visitors is caught before libcst's parser, whose time grows faster
than linearly with depth, and any file libcst fails on but Python accepts gets the ast backend's
extraction (references without targets) with a warning, rather than nothing.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import io
import logging
import sys
import tokenize
import warnings
from dataclasses import dataclass
from importlib import metadata
from types import SimpleNamespace
from typing import TYPE_CHECKING

from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import BackendInfo, Capability, Import, SourceFile, Tag, tag_sort_key

from . import ast_backend as python_ast
from .common import (
    PYTHON_EXTENSIONS,
    is_python,
    parse_python,
    resolve_python_import,
    resolve_python_target,
)
from .modules import RESOLVER_VERSION

if TYPE_CHECKING:
    import libcst as cst

log = logging.getLogger(__name__)


def _installed_libcst() -> str:
    """libcst's version without importing it (importing takes 0.2 s: only done on first use)."""
    try:
        return metadata.version("libcst") if importlib.util.find_spec("libcst") else ""
    except (metadata.PackageNotFoundError, ValueError):
        return ""


LIBCST_VERSION = _installed_libcst() or "missing"
_MISSING = "" if LIBCST_VERSION != "missing" else "libcst is not installed"

NAME = "python_libcst"
VERSION = (
    f"1.0-{RESOLVER_VERSION}-libcst{LIBCST_VERSION}-py{sys.version_info[0]}.{sys.version_info[1]}"
)
#: Python frames libcst's visitors use per level of ast depth, roughly (chains of ``+`` use this
#: many, nested calls more); deeper files go straight to the ast fallback.
DEPTH_FRAMES = 2.5


@hookimpl
def backend_info() -> BackendInfo:
    return BackendInfo(
        name=NAME,
        version=VERSION,
        languages=("python",),
        extensions=PYTHON_EXTENSIONS,
        capabilities=tuple(c.value for c in Capability),
        description="Python via libcst scope analysis (slower; references resolved to targets)",
        available=not _MISSING,
        detail=_MISSING or f"libcst {LIBCST_VERSION}",
    )


@dataclass(frozen=True, slots=True)
class Extraction:
    """Everything the backend extracts from one file."""

    tags: tuple[Tag, ...] = ()
    imports: tuple[Import, ...] = ()


def _warn(source: SourceFile, code: str, message: str) -> None:
    log.warning("%s: %s", source.path, message, extra={"code": code, "path": source.path})


def decode(source: SourceFile) -> str | None:
    """The text of ``source``, honouring a PEP 263 coding cookie and a UTF-8 BOM."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(source.data).readline)
        return source.data.decode(encoding)
    except (SyntaxError, UnicodeDecodeError, LookupError) as exc:
        _warn(source, "decode_error", f"cannot decode: {exc}")
    return None


class TooDeep:
    """What :func:`preflight` returns when even ast gives up on the nesting."""


TOO_DEEP = TooDeep()


def preflight(source: SourceFile) -> ast.Module | TooDeep | None:
    """The file parsed by ``ast`` (cheap next to libcst), ``None`` if it is not valid Python for
    ast (libcst then decides: it may accept newer syntax), :data:`TOO_DEEP` if ast itself ran out
    of recursion.

    It serves two purposes: deeply nested code is detected before libcst's parser, whose time
    grows faster than linearly with nesting depth, is run on it; and whenever libcst fails on a
    file Python itself accepts, the ast backend's extraction is used instead of nothing.
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return parse_python(source.data, source.path)
    except (SyntaxError, ValueError):
        return None
    except (RecursionError, MemoryError):
        return TOO_DEEP


def nesting_depth(tree: ast.AST, limit: int) -> int:
    """The depth of ``tree``, counted level by level (no recursion); stops past ``limit``."""
    level: list[ast.AST] = [tree]
    depth = 0
    while level and depth <= limit:
        depth += 1
        level = [child for node in level for child in ast.iter_child_nodes(node)]
    return depth


def max_depth() -> int:
    """The deepest ast that libcst's recursive visitors can be trusted with."""
    return int(sys.getrecursionlimit() / DEPTH_FRAMES)


def failed(source: SourceFile, tree: ast.Module | None, code: str, message: str) -> Extraction:
    """Log why libcst could not handle ``source``; fall back to ast's extraction if possible."""
    if tree is None:
        _warn(source, code, message)
        return Extraction()
    _warn(source, code, f"{message}; using the ast backend's extraction (no targets)")
    try:
        tags, imports = python_ast.analyse(tree, source.path)
    except RecursionError:  # ast.unparse on pathological input
        return Extraction()
    return Extraction(tuple(tags), tuple(imports))


@functools.cache
def _libcst() -> SimpleNamespace:
    """libcst and the modules built on it, imported on first use."""
    import libcst
    from libcst.metadata import ExpressionContextProvider, MetadataWrapper, ScopeProvider

    from .libcst_lines import line_spans
    from .libcst_scopes import Collector

    return SimpleNamespace(
        cst=libcst,
        MetadataWrapper=MetadataWrapper,
        ScopeProvider=ScopeProvider,
        ExpressionContextProvider=ExpressionContextProvider,
        line_spans=line_spans,
        Collector=Collector,
    )


def parse(text: str) -> cst.Module:
    module: cst.Module = _libcst().cst.parse_module(text)
    return module


def analyse(source: SourceFile, module: cst.Module) -> Extraction:
    """Definitions, resolved references and imports of a parsed module (may raise)."""
    lib = _libcst()
    wrapper = lib.MetadataWrapper(module, unsafe_skip_copy=True)
    meta = wrapper.resolve_many([lib.ScopeProvider, lib.ExpressionContextProvider])
    collector = lib.Collector(
        source.path,
        module,
        lib.line_spans(module),
        meta[lib.ScopeProvider],
        meta[lib.ExpressionContextProvider],
    )
    module.visit(collector)
    tags = collector.defs + collector.references()
    tags.sort(key=tag_sort_key)
    imports = sorted(collector.imports, key=lambda i: (i.line_number, i.source, i.names))
    return Extraction(tuple(tags), tuple(imports))


def extract_uncached(source: SourceFile) -> Extraction:
    """Everything extracted from ``source``; never raises, logs one warning on failure."""
    text = decode(source)
    if text is None:
        return Extraction()
    tree = preflight(source)
    if isinstance(tree, TooDeep):
        return failed(source, None, "too_deep", "nesting too deep for ast, skipped before libcst")
    limit = max_depth()
    if tree is not None and nesting_depth(tree, limit) > limit:
        return failed(source, tree, "too_deep", f"nesting deeper than {limit} levels")
    try:
        lib = _libcst()
    except Exception as exc:  # installed but broken (a native module that fails to load)
        return failed(source, tree, "backend_error", f"libcst cannot be imported: {exc}")
    try:
        module = parse(text)
    except lib.cst.ParserSyntaxError as exc:
        message = f"cannot parse: {exc.message} (line {exc.raw_line})"
        return failed(source, tree, "parse_error", message)
    except (RecursionError, MemoryError):
        return failed(source, tree, "too_deep", "nesting too deep for libcst's parser")
    except Exception as exc:  # the native parser raises assorted errors on odd input
        return failed(source, tree, "parse_error", f"cannot parse: {type(exc).__name__}: {exc}")
    try:
        return analyse(source, module)
    except (RecursionError, MemoryError):
        return failed(source, tree, "too_deep", "nesting too deep for libcst's analysis")
    except Exception as exc:  # a libcst metadata bug must not take the file down
        message = f"libcst analysis failed: {type(exc).__name__}: {exc}"
        return failed(source, tree, "backend_error", message)


def extract(source: SourceFile) -> Extraction:
    """Parse and analyse ``source`` once per file: the tags and imports hooks share the result
    through :meth:`SourceFile.memo`."""
    return source.memo((NAME, "extraction"), lambda: extract_uncached(source))


@hookimpl
def extract_tags(source: SourceFile) -> list[Tag] | None:
    if not is_python(source.path) or _MISSING:
        return None
    return list(extract(source).tags)


@hookimpl
def extract_imports(source: SourceFile) -> list[Import] | None:
    if not is_python(source.path) or _MISSING:
        return None
    return list(extract(source).imports)


@hookimpl
def resolve_import(imp: Import, index: RepoIndex) -> list[str] | None:
    found = resolve_python_import(imp, index)
    return None if found is None else list(found)


@hookimpl
def resolve_target(file_path: str, target: str, index: RepoIndex) -> list[str] | None:
    found = resolve_python_target(file_path, target, index)
    return None if found is None else list(found)
