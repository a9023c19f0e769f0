"""Which tree-sitter grammars exist, which files they claim, and loading them on demand.

Discovery is cheap: :func:`available_specs` only asks ``importlib.util.find_spec`` whether a grammar
module is installed. A grammar is imported, checked for ABI compatibility and given its compiled
queries only when the first file of its language shows up (:func:`load_grammar`); a grammar that
fails any of that is logged once and reported as unusable, so the file falls through to the next
backend.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import logging
import threading
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath

log = logging.getLogger(__name__)

QUERY_DIR = Path(__file__).parent / "queries"


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """A language the backend can serve when its grammar wheel is installed.

    ``tags`` and ``imports`` name query fragments (``queries/<fragment>-tags.scm`` and
    ``queries/<fragment>-imports.scm``) concatenated in order into one query per language.
    ``imports`` is also the name of the Python import handler family (see ``imports.py``).
    """

    name: str
    module: str
    function: str
    extensions: tuple[str, ...]
    tags: tuple[str, ...]
    imports: str
    distribution: str
    required: bool = False


#: In priority order: where two languages list the same extension (``.h``), the first installed
#: one gets it.
SPECS: tuple[LanguageSpec, ...] = (
    LanguageSpec("typescript", "tree_sitter_typescript", "language_typescript",
                 (".ts", ".mts", ".cts"), ("ecma", "typescript"), "ecma",
                 "tree-sitter-typescript", True),
    LanguageSpec("tsx", "tree_sitter_typescript", "language_tsx",
                 (".tsx",), ("ecma", "typescript", "jsx"), "ecma", "tree-sitter-typescript", True),
    LanguageSpec("javascript", "tree_sitter_javascript", "language",
                 (".js", ".mjs", ".cjs", ".jsx"), ("ecma", "javascript", "jsx"), "ecma",
                 "tree-sitter-javascript", True),
    LanguageSpec("go", "tree_sitter_go", "language", (".go",), ("go",), "go", "tree-sitter-go", True),
    LanguageSpec("rust", "tree_sitter_rust", "language", (".rs",), ("rust",), "rust",
                 "tree-sitter-rust"),
    LanguageSpec("java", "tree_sitter_java", "language", (".java",), ("java",), "java",
                 "tree-sitter-java"),
    LanguageSpec("ruby", "tree_sitter_ruby", "language", (".rb", ".rake"), ("ruby",), "ruby",
                 "tree-sitter-ruby"),
    LanguageSpec("cpp", "tree_sitter_cpp", "language",
                 (".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".h++", ".ipp", ".tpp",
                  ".inl", ".h"), ("c", "cpp"), "c", "tree-sitter-cpp"),
    LanguageSpec("c", "tree_sitter_c", "language", (".c", ".h"), ("c",), "c", "tree-sitter-c"),
    LanguageSpec("csharp", "tree_sitter_c_sharp", "language", (".cs",), ("csharp",), "csharp",
                 "tree-sitter-c-sharp"),
    LanguageSpec("php", "tree_sitter_php", "language_php", (".php",), ("php",), "php",
                 "tree-sitter-php"),
)


def query_files() -> list[Path]:
    """Every query file shipped with the backend, in a stable order."""
    return sorted(QUERY_DIR.glob("*.scm"))


def queries_digest() -> str:
    """A short hash of the query files' bytes: part of the backend version (the cache key)."""
    h = hashlib.blake2b(digest_size=6)
    for path in query_files():
        h.update(path.name.encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def tree_sitter_version() -> str | None:
    """The installed py-tree-sitter version, or ``None`` when it is missing."""
    if importlib.util.find_spec("tree_sitter") is None:
        return None
    try:
        return metadata.version("tree-sitter")
    except metadata.PackageNotFoundError:
        return "unknown"


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@cache
def available_specs() -> tuple[LanguageSpec, ...]:
    """The specs whose grammar module is installed (not imported: ``find_spec`` only)."""
    if tree_sitter_version() is None:
        return ()
    return tuple(s for s in SPECS if _installed(s.module))


@cache
def missing_specs() -> tuple[LanguageSpec, ...]:
    found = {s.name for s in available_specs()}
    return tuple(s for s in SPECS if s.name not in found)


@cache
def grammar_versions() -> tuple[tuple[str, str], ...]:
    """(language, distribution version) for each installed grammar."""
    versions = []
    for spec in available_specs():
        try:
            version = metadata.version(spec.distribution)
        except metadata.PackageNotFoundError:
            version = "unknown"
        versions.append((spec.name, version))
    return tuple(versions)


@cache
def extension_map() -> dict[str, LanguageSpec]:
    """Lower-case suffix -> the installed language that claims it."""
    mapping: dict[str, LanguageSpec] = {}
    for spec in available_specs():
        for ext in spec.extensions:
            mapping.setdefault(ext, spec)
    return mapping


def spec_for_path(path: str) -> LanguageSpec | None:
    """The installed language that claims ``path``, by suffix."""
    return extension_map().get(PurePosixPath(path).suffix.lower())


@dataclass(frozen=True)
class Grammar:
    """A loaded language with its compiled queries (compiled once per process)."""

    spec: LanguageSpec
    language: object  # tree_sitter.Language
    tags_query: object  # tree_sitter.Query
    imports_query: object | None


_lock = threading.Lock()
_grammars: dict[str, Grammar | None] = {}


def load_grammar(spec: LanguageSpec) -> Grammar | None:
    """The loaded grammar for ``spec``, or ``None`` (logged once) when it cannot be used."""
    try:
        return _grammars[spec.name]
    except KeyError:
        pass
    with _lock:
        if spec.name not in _grammars:
            _grammars[spec.name] = _load(spec)
        return _grammars[spec.name]


def _load(spec: LanguageSpec) -> Grammar | None:
    import tree_sitter as ts

    try:
        module = importlib.import_module(spec.module)
        language = ts.Language(getattr(module, spec.function)())
    except Exception as exc:  # an import error, a missing function, an ABI the runtime rejects
        log.warning("tree-sitter grammar %s (%s) cannot be loaded: %s", spec.name, spec.module, exc,
                    extra={"code": "grammar_unavailable", "path": None})
        return None
    abi = getattr(language, "abi_version", None)
    if abi is not None and not (ts.MIN_COMPATIBLE_LANGUAGE_VERSION <= abi <= ts.LANGUAGE_VERSION):
        log.warning(
            "tree-sitter grammar %s has ABI %s; this tree-sitter supports %s..%s: skipped",
            spec.name, abi, ts.MIN_COMPATIBLE_LANGUAGE_VERSION, ts.LANGUAGE_VERSION,
            extra={"code": "grammar_incompatible", "path": None},
        )
        return None
    tags_text = "\n".join(_read_query(f"{frag}-tags.scm") for frag in spec.tags)
    tags_query = compile_query(ts, language, tags_text, f"{spec.name} tags")
    if tags_query is None:
        return None
    imports_text = _read_query(f"{spec.imports}-imports.scm")
    imports_query = compile_query(ts, language, imports_text, f"{spec.name} imports") if imports_text else None
    return Grammar(spec, language, tags_query, imports_query)


def _read_query(name: str) -> str:
    path = QUERY_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def compile_query(ts: object, language: object, text: str, label: str) -> object | None:
    """Compile ``text``; if the grammar rejects some patterns (a grammar version whose node names
    differ), drop just those with a warning and keep the rest in their original order."""
    try:
        return ts.Query(language, text)  # type: ignore[attr-defined]
    except Exception as exc:
        first_error = exc
    kept: list[str] = []
    for pattern in split_patterns(text):
        try:
            ts.Query(language, pattern)  # type: ignore[attr-defined]
        except Exception:
            continue
        kept.append(pattern)
    log.warning("tree-sitter query %s: some patterns do not fit the installed grammar and were "
                "skipped (%s)", label, first_error, extra={"code": "query_error", "path": None})
    if not kept:
        return None
    try:
        return ts.Query(language, "\n".join(kept))  # type: ignore[attr-defined]
    except Exception:
        return None


def split_patterns(text: str) -> list[str]:
    """Split query source into its top-level patterns (captures and quantifiers after a closing
    bracket stay with their pattern; ``;`` comments and strings are respected)."""
    patterns: list[str] = []
    depth = 0
    start: int | None = None
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == ";":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c in "([":
            if depth == 0:
                if start is not None:
                    patterns.append(text[start:i].strip())
                start = i
            depth += 1
        elif c in ")]":
            depth = max(0, depth - 1)
        i += 1
    if start is not None:
        patterns.append(text[start:].strip())
    return [p for p in patterns if p]
