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
import os
import re
import sys
import threading
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from pathlib import Path, PurePosixPath
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Language, Query

log = logging.getLogger(__name__)

QUERY_DIR = Path(__file__).parent / "queries"
PACK_MODULE = "tree_sitter_language_pack"
PACK_DISTRIBUTION = "tree-sitter-language-pack"
#: 1.x of the pack downloads grammars at run time: never used.
PACK_MAX_MAJOR = 0


@dataclass(frozen=True, slots=True)
class LanguageSpec:
    """A language the backend can serve when its grammar wheel is installed.

    ``tags`` and ``imports`` name query fragments (``queries/<fragment>-tags.scm`` and
    ``queries/<fragment>-imports.scm``) concatenated in order into one query per language.
    ``imports`` is also the name of the Python import handler family (see ``imports.py``).

    The grammar comes from its own wheel (``module``/``function``, distribution ``distribution``)
    or, when that is not installed, from ``tree-sitter-language-pack`` below 1.0 under the name
    ``pack`` (the ``langpack`` extra). ``extra`` names the pip extra that installs it. ``pack`` is
    left empty where the pack bundles a grammar our queries do not fit (Haskell, Julia, Kotlin
    and Zig: other versions or forks), so only the wheel serves those.
    """

    name: str
    module: str
    function: str
    extensions: tuple[str, ...]
    tags: tuple[str, ...]
    imports: str
    distribution: str
    required: bool = False
    pack: str = ""
    extra: str = "languages"
    #: a regular expression (bytes, multiline) that, found in the first 4 KiB, says the file is
    #: another language sharing the extension: the backend declines it and the next one is asked
    not_this: bytes = b""
    #: the grammar crashes the process (SIGSEGV in its scanner) on some non-ASCII input, so bytes
    #: above 0x7f are masked with the invalid-UTF-8 placeholder before parsing (same length:
    #: positions hold; names holding it are dropped, as for invalid UTF-8). Seen with the D
    #: grammar of tree-sitter-language-pack 0.13.0.
    ascii_only: bool = False


#: Other formats that share a pack language's extension (see ``LanguageSpec.not_this``).
NOT_THIS: dict[str, bytes] = {
    # ``gcc -MD`` writes ``x.o: x.c x.h \`` into ``x.d``
    "d": rb"^[^\s:#]+\.o\s*:",
}


#: Pack grammars that crash on non-ASCII input (see ``LanguageSpec.ascii_only``).
ASCII_ONLY = frozenset({"d"})


def declines(spec: LanguageSpec, data: bytes) -> bool:
    """Whether ``data`` is another language sharing ``spec``'s extension."""
    return bool(spec.not_this) and re.search(spec.not_this, data[:4096], re.MULTILINE) is not None


#: In priority order: where two languages list the same extension (``.h``), the first installed
#: one gets it.
SPECS: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "typescript",
        "tree_sitter_typescript",
        "language_typescript",
        (".ts", ".mts", ".cts"),
        ("ecma", "typescript"),
        "ecma",
        "tree-sitter-typescript",
        True,
        "typescript",
        "core",
    ),
    LanguageSpec(
        "tsx",
        "tree_sitter_typescript",
        "language_tsx",
        (".tsx",),
        ("ecma", "typescript", "jsx"),
        "ecma",
        "tree-sitter-typescript",
        True,
        "tsx",
        "core",
    ),
    LanguageSpec(
        "javascript",
        "tree_sitter_javascript",
        "language",
        (".js", ".mjs", ".cjs", ".jsx"),
        ("ecma", "javascript", "jsx"),
        "ecma",
        "tree-sitter-javascript",
        True,
        "javascript",
        "core",
    ),
    LanguageSpec(
        "go",
        "tree_sitter_go",
        "language",
        (".go",),
        ("go",),
        "go",
        "tree-sitter-go",
        True,
        "go",
        "core",
    ),
    LanguageSpec(
        "rust",
        "tree_sitter_rust",
        "language",
        (".rs",),
        ("rust",),
        "rust",
        "tree-sitter-rust",
        pack="rust",
    ),
    LanguageSpec(
        "java",
        "tree_sitter_java",
        "language",
        (".java",),
        ("java",),
        "java",
        "tree-sitter-java",
        pack="java",
    ),
    LanguageSpec(
        "ruby",
        "tree_sitter_ruby",
        "language",
        (".rb", ".rake"),
        ("ruby",),
        "ruby",
        "tree-sitter-ruby",
        pack="ruby",
    ),
    LanguageSpec(
        "arduino",
        "tree_sitter_arduino",
        "language",
        (".ino", ".pde"),
        ("c", "cpp"),
        "c",
        "tree-sitter-arduino",
        pack="arduino",
    ),
    LanguageSpec(
        "cpp",
        "tree_sitter_cpp",
        "language",
        (
            ".cpp",
            ".cc",
            ".cxx",
            ".c++",
            ".hpp",
            ".hh",
            ".hxx",
            ".h++",
            ".ipp",
            ".tpp",
            ".inl",
            ".h",
        ),
        ("c", "cpp"),
        "c",
        "tree-sitter-cpp",
        pack="cpp",
    ),
    LanguageSpec(
        "c", "tree_sitter_c", "language", (".c", ".h"), ("c",), "c", "tree-sitter-c", pack="c"
    ),
    LanguageSpec(
        "csharp",
        "tree_sitter_c_sharp",
        "language",
        (".cs",),
        ("csharp",),
        "csharp",
        "tree-sitter-c-sharp",
        pack="csharp",
    ),
    LanguageSpec(
        "php",
        "tree_sitter_php",
        "language_php",
        (".php",),
        ("php",),
        "php",
        "tree-sitter-php",
        pack="php",
    ),
    LanguageSpec(
        "bash",
        "tree_sitter_bash",
        "language",
        (".sh", ".bash"),
        ("bash",),
        "bash",
        "tree-sitter-bash",
        pack="bash",
    ),
    LanguageSpec(
        "commonlisp",
        "tree_sitter_commonlisp",
        "language",
        (".lisp", ".lsp", ".cl"),
        ("commonlisp",),
        "commonlisp",
        "tree-sitter-commonlisp",
        pack="commonlisp",
        not_this=rb"^\s*(#include|#define|#pragma|__kernel|kernel\s+void)\b",
    ),  # OpenCL .cl
    LanguageSpec(
        "dart",
        "tree_sitter_dart",
        "language",
        (".dart",),
        ("dart",),
        "dart",
        "tree-sitter-dart",
        pack="dart",
    ),
    LanguageSpec(
        "elixir",
        "tree_sitter_elixir",
        "language",
        (".ex", ".exs"),
        ("elixir",),
        "elixir",
        "tree-sitter-elixir",
        pack="elixir",
    ),
    LanguageSpec(
        "haskell",
        "tree_sitter_haskell",
        "language",
        (".hs",),
        ("haskell",),
        "haskell",
        "tree-sitter-haskell",
    ),
    LanguageSpec(
        "hcl",
        "tree_sitter_hcl",
        "language",
        (".hcl", ".tf", ".tfvars"),
        ("hcl",),
        "hcl",
        "tree-sitter-hcl",
        pack="hcl",
    ),
    LanguageSpec(
        "julia", "tree_sitter_julia", "language", (".jl",), ("julia",), "julia", "tree-sitter-julia"
    ),
    LanguageSpec(
        "kotlin",
        "tree_sitter_kotlin",
        "language",
        (".kt", ".kts"),
        ("kotlin",),
        "kotlin",
        "tree-sitter-kotlin",
    ),
    LanguageSpec(
        "lua",
        "tree_sitter_lua",
        "language",
        (".lua",),
        ("lua",),
        "lua",
        "tree-sitter-lua",
        pack="lua",
    ),
    LanguageSpec(
        "matlab",
        "tree_sitter_matlab",
        "language",
        (".m",),
        ("matlab",),
        "matlab",
        "tree-sitter-matlab",
        pack="matlab",  # Objective-C shares .m
        not_this=rb"^\s*(#import|#include|@interface|@implementation|@protocol)\b",
    ),
    LanguageSpec(
        "ocaml",
        "tree_sitter_ocaml",
        "language_ocaml",
        (".ml",),
        ("ocaml",),
        "ocaml",
        "tree-sitter-ocaml",
        pack="ocaml",
    ),
    LanguageSpec(
        "ocaml_interface",
        "tree_sitter_ocaml",
        "language_ocaml_interface",
        (".mli",),
        ("ocaml",),
        "ocaml",
        "tree-sitter-ocaml",
        pack="ocaml_interface",
    ),
    LanguageSpec(
        "ql", "tree_sitter_ql", "language", (".ql", ".qll"), ("ql",), "ql", "tree-sitter-ql"
    ),
    LanguageSpec(
        "scala",
        "tree_sitter_scala",
        "language",
        (".scala", ".sc"),
        ("scala",),
        "scala",
        "tree-sitter-scala",
        pack="scala",
    ),
    LanguageSpec(
        "solidity",
        "tree_sitter_solidity",
        "language",
        (".sol",),
        ("solidity",),
        "solidity",
        "tree-sitter-solidity",
        pack="solidity",
    ),
    LanguageSpec(
        "swift",
        "tree_sitter_swift",
        "language",
        (".swift",),
        ("swift",),
        "swift",
        "tree-sitter-swift",
        pack="swift",
    ),
    LanguageSpec(
        "zig", "tree_sitter_zig", "language", (".zig",), ("zig",), "zig", "tree-sitter-zig"
    ),
    # no maintained wheel of their own: from tree-sitter-language-pack (the ``langpack`` extra)
    *(
        LanguageSpec(
            name,
            "",
            "",
            exts,
            (name,),
            name,
            PACK_DISTRIBUTION,
            pack=name,
            extra="langpack",
            not_this=NOT_THIS.get(name, b""),
            ascii_only=name in ASCII_ONLY,
        )
        for name, exts in (
            ("chatito", (".chatito",)),
            ("clojure", (".clj", ".cljs", ".cljc", ".edn")),
            ("d", (".d",)),  # see NOT_THIS for make's dependency files
            ("elisp", (".el",)),
            ("elm", (".elm",)),
            ("gleam", (".gleam",)),
            ("pony", (".pony",)),
            ("properties", (".properties",)),
            ("r", (".r",)),
            ("racket", (".rkt",)),
            ("udev", (".rules",)),
        )
    ),
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


@cache
def tree_sitter_version() -> str | None:
    """The installed py-tree-sitter version, or ``None`` when it is missing."""
    if importlib.util.find_spec("tree_sitter") is None:
        return None
    return distribution_version("tree-sitter") or "unknown"


@cache
def distribution_version(name: str) -> str | None:
    """The installed version of distribution ``name``, or ``None`` when it has no metadata.

    Read from the name of its ``.dist-info`` directory (``name-version.dist-info``, as the wheel
    and installed-distribution formats write it) on the import path, else from its metadata:
    ``metadata.version`` searches the path and parses the whole metadata file per call, and the
    backend's version names every grammar's, so each process start would pay that per wheel."""
    found = _dist_info_versions().get(_normalized(name))
    if found is not None:
        return found
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


@cache
def _dist_info_versions() -> dict[str, str]:
    """Normalized distribution name -> version, from the ``.dist-info`` directories of the import
    path (the first entry that has a distribution wins, as for imports)."""
    versions: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = sorted(os.listdir(entry or "."))
        except OSError:
            continue
        for dirname in names:
            if not dirname.endswith(".dist-info"):
                continue
            dist, sep, version = dirname[: -len(".dist-info")].partition("-")
            if sep and version:
                versions.setdefault(_normalized(dist), version)
    return versions


def _installed(module: str) -> bool:
    if not module:
        return False
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


@cache
def pack_status() -> tuple[str | None, str]:
    """(usable tree-sitter-language-pack version or ``None``, why it is not usable or "")."""
    if not _installed(PACK_MODULE):
        return None, f"{PACK_DISTRIBUTION} is not installed"
    version = distribution_version(PACK_DISTRIBUTION)
    if version is None:
        return None, f"{PACK_DISTRIBUTION} has no distribution metadata"
    major = version.split(".", 1)[0]
    if not major.isdigit() or int(major) > PACK_MAX_MAJOR:
        return None, (
            f"{PACK_DISTRIBUTION} {version} is not used: 1.x downloads grammars at run "
            "time (pip install 'tree-sitter-language-pack<1')"
        )
    return version, ""


@cache
def _pack_bindings() -> frozenset[str]:
    """Grammar names the installed pack bundles, from its files (nothing is imported)."""
    if pack_status()[0] is None:
        return frozenset()
    try:
        spec = importlib.util.find_spec(PACK_MODULE)
    except (ImportError, ValueError):
        return frozenset()
    names: set[str] = set()
    for location in (spec.submodule_search_locations or []) if spec else []:
        bindings = Path(location) / "bindings"
        try:
            entries = list(bindings.iterdir())
        except OSError:
            continue
        names.update(
            e.name.split(".", 1)[0]
            for e in entries
            if e.suffix in (".so", ".pyd") and not e.name.startswith("_")
        )
    return frozenset(names)


def grammar_source(spec: LanguageSpec) -> str | None:
    """Where ``spec``'s grammar comes from: ``"wheel"``, ``"pack"``, or ``None`` (missing)."""
    if _installed(spec.module):
        return "wheel"
    if spec.pack and spec.pack in _pack_bindings():
        return "pack"
    return None


@cache
def available_specs() -> tuple[LanguageSpec, ...]:
    """The specs whose grammar is installed (not imported: ``find_spec`` and file names only)."""
    if tree_sitter_version() is None:
        return ()
    return tuple(s for s in SPECS if _has_queries(s) and grammar_source(s) is not None)


def _has_queries(spec: LanguageSpec) -> bool:
    return all((QUERY_DIR / f"{frag}-tags.scm").is_file() for frag in spec.tags)


@cache
def missing_specs() -> tuple[LanguageSpec, ...]:
    found = {s.name for s in available_specs()}
    return tuple(s for s in SPECS if s.name not in found)


@cache
def grammar_versions() -> tuple[tuple[str, str], ...]:
    """(language, distribution version) for each installed grammar (``pack-`` marks the pack)."""
    versions = []
    for spec in available_specs():
        if grammar_source(spec) == "pack":
            versions.append((spec.name, f"pack-{pack_status()[0]}"))
            continue
        versions.append((spec.name, distribution_version(spec.distribution) or "unknown"))
    return tuple(versions)


def extras_report() -> list[tuple[str, list[str], list[str]]]:
    """Per pip extra (``core``, ``languages``, ``langpack``): the languages whose grammar was
    found and those missing, in spec order."""
    found = {s.name for s in available_specs()}
    by_extra: dict[str, tuple[list[str], list[str]]] = {}
    for spec in SPECS:
        have, miss = by_extra.setdefault(spec.extra, ([], []))
        if spec.name in found:
            have.append(spec.name)
        elif tree_sitter_version() is not None and grammar_source(spec) is not None:
            miss.append(f"{spec.name} (grammar found, no queries)")
        else:
            miss.append(spec.name)
    return [(extra, have, miss) for extra, (have, miss) in by_extra.items()]


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
    language: Language
    #: the tags patterns, then the imports patterns: one walk of a tree finds both
    query: Query
    has_imports: bool


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
        if grammar_source(spec) == "pack":
            pack = importlib.import_module(PACK_MODULE)
            language = ts.Language(pack.get_binding(spec.pack))
        else:
            module = importlib.import_module(spec.module)
            language = ts.Language(getattr(module, spec.function)())
    except Exception as exc:  # an import error, a missing function, an ABI the runtime rejects
        log.warning(
            "tree-sitter grammar %s (%s) cannot be loaded: %s",
            spec.name,
            spec.module,
            exc,
            extra={"code": "grammar_unavailable", "path": None},
        )
        return None
    abi = getattr(language, "abi_version", None)
    if abi is not None and not (ts.MIN_COMPATIBLE_LANGUAGE_VERSION <= abi <= ts.LANGUAGE_VERSION):
        log.warning(
            "tree-sitter grammar %s has ABI %s; this tree-sitter supports %s..%s: skipped",
            spec.name,
            abi,
            ts.MIN_COMPATIBLE_LANGUAGE_VERSION,
            ts.LANGUAGE_VERSION,
            extra={"code": "grammar_incompatible", "path": None},
        )
        return None
    tags_text = "\n".join(_read_query(f"{frag}-tags.scm") for frag in spec.tags)
    imports_text = _read_query(f"{spec.imports}-imports.scm")
    try:
        return Grammar(
            spec, language, ts.Query(language, f"{tags_text}\n{imports_text}"), bool(imports_text)
        )
    except Exception:  # some patterns do not fit this grammar: each part keeps what does
        pass
    tags = kept_patterns(ts, language, tags_text, f"{spec.name} tags")
    if tags is None:
        return None
    imports = (
        kept_patterns(ts, language, imports_text, f"{spec.name} imports") if imports_text else None
    )
    try:
        query = ts.Query(language, tags if imports is None else f"{tags}\n{imports}")
    except Exception as exc:  # each pattern compiled alone, not all together
        log.warning(
            "tree-sitter queries of %s cannot be compiled together: %s",
            spec.name,
            exc,
            extra={"code": "query_error", "path": None},
        )
        return None
    return Grammar(spec, language, query, imports is not None)


def _read_query(name: str) -> str:
    path = QUERY_DIR / name
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def kept_patterns(ts: ModuleType, language: Language, text: str, label: str) -> str | None:
    """``text``, or the patterns of it the grammar accepts, in their original order (a grammar
    version whose node names differ: a warning says some were dropped); ``None`` when it
    accepts none."""
    query: type[Query] = ts.Query
    try:
        query(language, text)
        return text
    except Exception as exc:
        first_error = exc
    kept: list[str] = []
    for pattern in split_patterns(text):
        try:
            query(language, pattern)
        except Exception:
            continue
        kept.append(pattern)
    log.warning(
        "tree-sitter query %s: some patterns do not fit the installed grammar and were "
        "skipped (%s)",
        label,
        first_error,
        extra={"code": "query_error", "path": None},
    )
    return "\n".join(kept) if kept else None


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
