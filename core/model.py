"""The data that flows between stages: frozen, plain, serialisable.

Field names follow ``SymbolInfo``/``ImportInfo`` of the context-pack design where they overlap
(``name``, ``file_path``, ``start_line``, ``end_line``, ``signature``, ``docstring``; ``source``,
``names``, ``is_relative``, ``line_number``). Lines are 1-based and inclusive.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

from .namecounts import NameCounts

T = TypeVar("T")

DEF = "def"
REF = "ref"


class SymbolKind(StrEnum):
    """The kinds of symbol the core understands (``repomapper.plugin.TagKind`` for plugin
    authors). A tag's ``symbol_kind`` may be any string; these are the ones the core gives a
    meaning (data kinds weigh less in the graph, classes and functions lead the map)."""

    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    VARIABLE = "variable"
    CONSTANT = "constant"
    INTERFACE = "interface"
    TYPE = "type"
    ENUM = "enum"
    MODULE = "module"
    FIELD = "field"
    NAME = "name"  # a reference to a bare name
    CALL = "call"  # a reference that is called
    ATTRIBUTE = "attribute"  # a reference through attribute access


class Capability(StrEnum):
    """What a backend can provide; the conformance suite checks every claim."""

    DEFINITIONS = "definitions"
    REFERENCES = "references"
    IMPORTS = "imports"
    END_LINES = "end_lines"
    SIGNATURES = "signatures"
    SCOPES = "scopes"
    DOCSTRINGS = "docstrings"


@dataclass(frozen=True, slots=True)
class Tag:
    """A definition or a reference of a name in one file.

    ``kind`` is ``"def"`` or ``"ref"``; ``symbol_kind`` says what sort of symbol (see
    :class:`SymbolKind`). ``scope`` is the dotted path of enclosing definitions (``"Outer.Inner"``),
    empty at module level. ``end_line`` equals ``start_line`` where the backend does not know better.
    A reference whose line is unknown (for example one back-filled from a token scan) has
    ``start_line == 0``. ``target`` is, for a reference, the qualified name it resolves to where
    the backend knows (``"pkg.mod.f"``; the libcst backend sets it); the graph then links the
    reference only to the file that defines it.
    """

    file_path: str
    start_line: int
    end_line: int
    name: str
    kind: str
    symbol_kind: str = ""
    scope: str = ""
    signature: str | None = None
    docstring: str | None = None
    target: str | None = None

    @property
    def is_def(self) -> bool:
        return self.kind == DEF

    @property
    def qualified_name(self) -> str:
        return f"{self.scope}.{self.name}" if self.scope else self.name

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape used by ``repomapper tags``: ``path`` and ``line`` name the location."""
        return {
            "path": self.file_path,
            "line": self.start_line,
            "end_line": self.end_line,
            "name": self.name,
            "kind": self.kind,
            "symbol_kind": self.symbol_kind,
            "scope": self.scope,
            "signature": self.signature,
            "docstring": self.docstring,
            "target": self.target,
        }

    def to_row(self) -> list[Any]:
        """A compact positional form for the cache: a plain reference (one line, no scope,
        signature, docstring or target: what nearly every reference is) as ``[line, name,
        symbol_kind]``, anything else with every field."""
        if (
            self.kind == REF
            and self.end_line == self.start_line
            and not self.scope
            and self.signature is None
            and self.docstring is None
            and self.target is None
        ):
            return [self.start_line, self.name, self.symbol_kind]
        return [
            self.start_line,
            self.end_line,
            self.name,
            self.kind,
            self.symbol_kind,
            self.scope,
            self.signature,
            self.docstring,
            self.target,
        ]

    @classmethod
    def from_row(cls, file_path: str, row: list[Any]) -> Tag:
        if len(row) == 3:
            line, name, symbol_kind = row
            if type(line) is not int or type(name) is not str or type(symbol_kind) is not str:
                raise TypeError(f"not a reference's row: {row!r:.80}")
            return reference_tag(file_path, line, name, symbol_kind)
        return cls(file_path, *row)


_new_object = object.__new__
#: the slots of a :class:`Tag`, set directly by :func:`reference_tag`
_TAG_SLOTS = tuple(getattr(Tag, f.name).__set__ for f in fields(Tag))


def reference_tag(file_path: str, line: int, name: str, symbol_kind: str) -> Tag:
    """``Tag(file_path, line, line, name, REF, symbol_kind)``, made without the frozen dataclass's
    ``__init__``: its ten ``object.__setattr__`` calls are most of the cost of making the
    hundreds of references of every file, and a slot set directly holds the same value."""
    tag = _new_object(Tag)
    path_, start, end, name_, kind, symbol, scope, signature, docstring, target = _TAG_SLOTS
    path_(tag, file_path)
    start(tag, line)
    end(tag, line)
    name_(tag, name)
    kind(tag, REF)
    symbol(tag, symbol_kind)
    scope(tag, "")
    signature(tag, None)
    docstring(tag, None)
    target(tag, None)
    return tag


@dataclass(frozen=True, slots=True)
class Import:
    """One imported module or path, as written in the importing file.

    ``source`` is the module or path as written (``"os.path"``, ``"./util"``,
    ``"example.com/m/pkg"``); for a relative Python import it is the part after the dots and
    ``level`` counts the dots. ``names`` are the imported names (empty for ``import x``),
    ``aliases`` the local names they are bound to, parallel to ``names`` (``None`` where not
    renamed). ``alias`` is the local name of a whole-module import (``import numpy as np``).
    """

    file_path: str
    source: str
    names: tuple[str, ...] = ()
    is_relative: bool = False
    line_number: int = 0
    level: int = 0
    aliases: tuple[str | None, ...] = ()
    alias: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["path"] = d.pop("file_path")
        d["line"] = d.pop("line_number")
        d["names"] = list(self.names)
        d["aliases"] = list(self.aliases)
        return d

    def to_row(self) -> list[Any]:
        return [
            self.source,
            list(self.names),
            self.is_relative,
            self.line_number,
            self.level,
            list(self.aliases),
            self.alias,
        ]

    @classmethod
    def from_row(cls, file_path: str, row: list[Any]) -> Import:
        source, names, is_relative, line, level, aliases, alias = row
        return cls(file_path, source, tuple(names), is_relative, line, level, tuple(aliases), alias)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file handed to a backend: where it is and its raw bytes.

    ``path`` is relative to ``root`` and uses forward slashes. Backends decode ``data``
    themselves (:meth:`text` decodes UTF-8 and raises ``UnicodeDecodeError`` on invalid input).

    The core hands ``prepare_batch``, ``extract_tags`` and ``extract_imports`` the same object for
    one file, and :meth:`memo` is a scratch on it that lives until the core is done with the file:
    a backend parses once and shares the parse between its hooks without a module-level cache.
    The scratch takes no part in equality, hashing, ``repr`` or pickling (a copy starts empty).
    """

    root: Path
    path: str
    data: bytes
    _scratch: dict[Hashable, Any] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """``build()``, called once per ``key`` for this file; later calls return the same value.

        Use a key that starts with your plugin's name (``("mylang", "parse")``): a file that one
        backend declines goes on to the next with the same object. An exception from ``build``
        is not remembered (the next call builds again). Not locked: one file, one thread.
        """
        scratch = self._scratch
        try:
            found: T = scratch[key]  # what build made for this key
            return found
        except KeyError:
            value = scratch[key] = build()
            return value

    def drop_memo(self) -> None:
        """Forget everything :meth:`memo` holds (the core calls it when the file is done)."""
        self._scratch.clear()

    def __getstate__(self) -> tuple[Path, str, bytes]:
        return (self.root, self.path, self.data)  # never the scratch: it may hold parse trees

    def __setstate__(self, state: tuple[Path, str, bytes]) -> None:
        for name, value in zip(("root", "path", "data"), state, strict=True):
            object.__setattr__(self, name, value)
        object.__setattr__(self, "_scratch", {})

    @property
    def abspath(self) -> Path:
        return self.root / self.path

    @property
    def suffix(self) -> str:
        return Path(self.path).suffix.lower()

    @property
    def name(self) -> str:
        return Path(self.path).name

    def text(self) -> str:
        return self.data.decode("utf-8")

    @classmethod
    def from_text(cls, path: str, text: str, root: Path | None = None) -> SourceFile:
        """Convenience for tests and embedders: a source file that need not exist on disk."""
        return cls(root or Path("."), path, text.encode("utf-8"))


def split_name(rel_path: str) -> tuple[str, str]:
    """(base name, lower-case suffix with the dot) of a relative path, as pathlib would give,
    without pathlib's cost (routing runs once per file on every map)."""
    name = rel_path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    if dot <= 0 or dot == len(name) - 1:
        return name, ""
    return name, name[dot:].lower()


@dataclass(frozen=True, slots=True)
class BackendInfo:
    """What a plugin declares about itself (hook ``backend_info``).

    ``extensions`` are lower-case suffixes with the dot (``".py"``); ``filenames`` are exact base
    names (``"Makefile"``); ``"*"`` in ``extensions`` claims every file (used by the fallback).
    ``capabilities`` are values of :class:`Capability`.
    """

    name: str
    version: str
    languages: tuple[str, ...]
    extensions: tuple[str, ...]
    capabilities: tuple[str, ...]
    filenames: tuple[str, ...] = ()
    description: str = ""
    available: bool = True
    detail: str = ""  # why not available, or what was found (grammars, ctags version)
    language_extensions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: languages the backend would map once something is installed: (language, extensions,
    #: how to install it), so that a map can say what a fallback mapped in its place
    installable: tuple[tuple[str, tuple[str, ...], str], ...] = ()

    def claims(self, rel_path: str) -> bool:
        name, suffix = split_name(rel_path)
        return "*" in self.extensions or suffix in self.extensions or name in self.filenames

    def language_for(self, rel_path: str) -> str | None:
        """The language this backend would treat ``rel_path`` as, where it says."""
        suffix = split_name(rel_path)[1]
        for language, exts in self.language_extensions:
            if suffix in exts:
                return language
        return self.languages[0] if len(self.languages) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "languages": list(self.languages),
            "extensions": list(self.extensions),
            "filenames": list(self.filenames),
            "capabilities": list(self.capabilities),
            "description": self.description,
            "available": self.available,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """A reason code and a message: why something was skipped, degraded or empty.

    Codes are stable strings an agent can branch on, for example ``parse_error``,
    ``decode_error``, ``binary``, ``too_large``, ``minified``, ``symlink_outside_root``,
    ``unreadable``, ``no_backend``, ``backend_unavailable``, ``backend_error``,
    ``cache_unavailable``, ``no_files_matched``, ``nothing_to_map``, ``estimated_tokens``,
    ``outside_root``, ``parse_partial`` (an info: the rest of the file parsed), ``generated``
    (an info: the file says it was generated, and ranks below code),
    ``better_backend_installable`` (an info: files a fallback mapped, or none did, that an
    installed backend maps fully once the command in the message installs its grammar). ``unreadable`` with a path
    ending in ``/`` is a folder that could not be listed (its files are not in ``files_total``).
    """

    code: str
    message: str
    path: str | None = None
    severity: str = "warning"  # "info", "warning" or "error"
    paths: tuple[str, ...] = ()  # for a diagnostic that summarises many files

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"code": self.code, "severity": self.severity, "message": self.message}
        if self.path is not None:
            d["path"] = self.path
        if self.paths:
            d["paths"] = list(self.paths)
        return d


@dataclass(frozen=True, slots=True)
class FileExtraction:
    """Everything extracted from one file, and who extracted it."""

    path: str
    tags: tuple[Tag, ...] = ()
    imports: tuple[Import, ...] = ()
    plugin: str | None = None
    language: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def definitions(self) -> tuple[Tag, ...]:
        return tuple(t for t in self.tags if t.kind == DEF)


@dataclass(frozen=True, slots=True)
class FileSymbols:
    """What ranking needs of a file: its definitions, how often it references each name, the
    qualified targets of its references, and its imports. Much smaller than the full tag list."""

    path: str
    #: the parts below are tuples when extracted, or sequences made when read from a cached row
    #: (:mod:`repomapper.rowtext`)
    definitions: Sequence[Tag] = ()
    #: (name, count), sorted by name (a :class:`~repomapper.namecounts.NameCounts` when extracted)
    references: Sequence[tuple[str, int]] = ()
    targets: Sequence[tuple[str, str]] = ()  # (name, qualified target), sorted
    imports: Sequence[Import] = ()
    plugin: str | None = None
    language: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()

    @classmethod
    def from_extraction(cls, ex: FileExtraction) -> FileSymbols:
        counts: Counter[str] = Counter()
        targets: set[tuple[str, str]] = set()
        defs: list[Tag] = []
        for t in ex.tags:
            if t.kind == DEF:
                defs.append(t)
            else:
                counts[t.name] += 1
                if t.target:
                    targets.add((t.name, t.target))
        return cls(
            ex.path,
            tuple(defs),
            NameCounts(sorted(counts.items())),
            tuple(sorted(targets)),
            ex.imports,
            ex.plugin,
            ex.language,
            ex.diagnostics,
        )


#: the symbol kinds of data definitions (they weigh less in the graph; see repomapper.graph)
DATA_KINDS = frozenset({"variable", "constant", "field"})


@dataclass(frozen=True, slots=True)
class NameFacts:
    """What the symbol table reads of a file's definitions: each name the file defines (in the
    order of its first definition), whether every definition of it there is data, and whether
    one is a top-level class or function (a flag per name, in ``data`` and ``top``)."""

    names: tuple[str, ...]
    data: bytes
    top: bytes

    def __reduce__(self) -> tuple[Callable[..., NameFacts], tuple[tuple[str, ...], bytes, bytes]]:
        # a worker sends every file's facts to the parent, where the names are interned as the
        # facts read from a row are (one string per name across the repository)
        return _interned_facts, (self.names, self.data, self.top)


def _interned_facts(names: tuple[str, ...], data: bytes, top: bytes) -> NameFacts:
    return NameFacts(tuple(map(sys.intern, names)), data, top)


def name_facts(facts: Iterable[tuple[str, str, str]]) -> NameFacts:
    """The :class:`NameFacts` of a file's (name, symbol kind, scope) facts."""
    all_data: dict[str, bool] = {}
    top: set[str] = set()
    for name, kind, scope in facts:
        data = kind in DATA_KINDS
        all_data[name] = all_data.get(name, True) and data
        if not scope and not data:
            top.add(name)
    names = tuple(all_data)
    return NameFacts(names, bytes(all_data.values()), bytes(n in top for n in names))


def tag_facts(definitions: Iterable[Tag]) -> list[tuple[str, str, str]]:
    """(name, symbol kind, scope) of each definition, in order: what the symbol table reads of
    a file's definitions."""
    return [(t.name, str(t.symbol_kind), t.scope) for t in definitions]


def tag_sort_key(t: Tag) -> tuple[int, str, str, int, str, str, str, str, str]:
    """The canonical order of a file's tags (deterministic output)."""
    return (
        t.start_line,
        t.kind,
        t.name,
        t.end_line,
        t.scope,
        str(t.symbol_kind),
        t.signature or "",
        t.target or "",
        t.docstring or "",
    )


def import_sort_key(
    i: Import,
) -> tuple[int, str, tuple[str, ...], int, tuple[str, ...], tuple[bool, ...], str, bool, bool]:
    """The canonical order of a file's imports (deterministic output). Every field takes part, so
    two different imports never tie; ``None`` (an unrenamed name, no module alias) sorts as ``""``,
    since a file may import the same name renamed and not on one line
    (``export{a as b}from"m";export{a}from"m"``)."""
    return (
        i.line_number,
        i.source,
        i.names,
        i.level,
        tuple(a or "" for a in i.aliases),
        tuple(a is None for a in i.aliases),
        i.alias or "",
        i.alias is None,
        i.is_relative,
    )


@dataclass(frozen=True, slots=True)
class Reason:
    """One piece of evidence behind a rank: which signal, what matched, how much it weighed.

    Signals: ``path``, ``traceback``, ``module``, ``qualified_name``, ``quoted_name``,
    ``error_class``, ``identifier``, ``file_stem`` (the task names the file or its symbols);
    ``lexical`` (the task's words in the file's path, names, docstrings and text; ``detail`` lists
    the best terms); ``graph`` (near the files the task points at, over references and imports);
    ``folder`` (other files of its folder match the task); ``uses`` (it uses names the task writes
    that other files define; ``detail`` lists them); ``tests`` (a test file the task matches tests
    this file); ``pair`` (a declaration file and its implementation); ``demoted`` (a test,
    example, doc or vendored file for a task that is not about them); ``pagerank`` (no task: the
    file's rank in the reference graph). For a task, the weight of ``lexical``, ``graph``,
    ``folder`` and ``uses`` is their fitted share of the file's score."""

    signal: str
    detail: str
    weight: float

    def to_dict(self) -> dict[str, Any]:
        return {"signal": self.signal, "detail": self.detail, "weight": self.weight}


def _reasons(items: Any) -> tuple[Reason, ...]:
    return tuple(made_reason(r["signal"], r["detail"], r["weight"]) for r in items or ())


@dataclass(frozen=True, slots=True)
class RankedSymbol:
    path: str
    name: str
    score: float
    line: int
    end_line: int
    symbol_kind: str
    scope: str
    signature: str | None
    why: tuple[Reason, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["why"] = [r.to_dict() for r in self.why]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RankedSymbol:
        return cls(**{**d, "why": _reasons(d.get("why"))})


@dataclass(frozen=True, slots=True)
class RankedFile:
    path: str
    score: float
    why: tuple[Reason, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "score": self.score, "why": [r.to_dict() for r in self.why]}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RankedFile:
        return made_ranked_file(d["path"], d["score"], _reasons(d.get("why")))


# A frozen dataclass's __init__ sets each field through object.__setattr__; a ranking without a
# task, and a map replayed from the memo, make a RankedFile and a Reason for every file of the
# repository on each call. These set the slots directly: the same values, a third of the time.
def _three_slots(cls: type[T], names: tuple[str, str, str]) -> Callable[[Any, Any, Any], T]:
    """A constructor of the frozen, slotted dataclass ``cls`` of three fields that sets their
    slots ``names`` directly (see above; a loop over the slots cost what it saved)."""
    first, second, third = (getattr(cls, n).__set__ for n in names)
    new = object.__new__

    def make(a: Any, b: Any, c: Any) -> T:
        obj = new(cls)
        first(obj, a)
        second(obj, b)
        third(obj, c)
        return obj

    return make


_make_reason = _three_slots(Reason, ("signal", "detail", "weight"))
_make_ranked_file = _three_slots(RankedFile, ("path", "score", "why"))


def made_reason(signal: str, detail: str, weight: float) -> Reason:
    """``Reason(signal, detail, weight)``, made faster (see above)."""
    return _make_reason(signal, detail, weight)


def made_ranked_file(path: str, score: float, why: tuple[Reason, ...]) -> RankedFile:
    """``RankedFile(path, score, why)``, made faster (see above)."""
    return _make_ranked_file(path, score, why)


@dataclass(frozen=True, slots=True)
class MapResult:
    """The structured result of a map: the text plus everything an agent may branch on.

    A plain value however the map was made (ranked fresh, replayed from the memo, or for a
    task): ``ranked_files`` is always a tuple, whatever sequence the producer passed."""

    map: str
    tokens: int
    tokenizer: str
    tokens_exact: bool
    budget: int
    files_total: int
    files_covered: int
    ranked_files: tuple[RankedFile, ...] = ()
    ranked_symbols: tuple[RankedSymbol, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    chat_files: tuple[str, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # the ranking stage hands over its files as a sequence made on read; the result holds
        # them as the tuple its type says
        for name in ("ranked_files", "ranked_symbols", "diagnostics", "chat_files"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))

    def to_dict(self, max_ranked: int | None = None) -> dict[str, Any]:
        files = self.ranked_files if max_ranked is None else self.ranked_files[:max_ranked]
        symbols = self.ranked_symbols if max_ranked is None else self.ranked_symbols[:max_ranked]
        return {
            "map": self.map,
            "tokens_estimated": self.tokens,
            "tokens_exact": self.tokens_exact,
            "tokenizer": self.tokenizer,
            "budget": self.budget,
            "files_covered": self.files_covered,
            "files_total": self.files_total,
            "ranked_files": [f.to_dict() for f in files],
            "ranked_symbols": [s.to_dict() for s in symbols],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "chat_files": list(self.chat_files),
            **self.extra,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MapResult:
        """The inverse of :meth:`to_dict` (used to replay a memoised map)."""
        known = {
            "map",
            "tokens_estimated",
            "tokens_exact",
            "tokenizer",
            "budget",
            "files_covered",
            "files_total",
            "ranked_files",
            "ranked_symbols",
            "diagnostics",
            "chat_files",
        }
        return cls(
            map=d["map"],
            tokens=d["tokens_estimated"],
            tokenizer=d["tokenizer"],
            tokens_exact=d["tokens_exact"],
            budget=d["budget"],
            files_total=d["files_total"],
            files_covered=d["files_covered"],
            ranked_files=tuple(RankedFile.from_dict(f) for f in d["ranked_files"]),
            ranked_symbols=tuple(RankedSymbol.from_dict(s) for s in d["ranked_symbols"]),
            diagnostics=tuple(
                Diagnostic(
                    x["code"], x["message"], x.get("path"), x["severity"], tuple(x.get("paths", ()))
                )
                for x in d["diagnostics"]
            ),
            chat_files=tuple(d.get("chat_files", ())),
            extra={k: v for k, v in d.items() if k not in known},
        )
