"""Turn Universal Ctags JSON records into repomapper's model.

ctags names kinds per language (``member``, ``singletonMethod``, ``enumConstant``...); this
module maps them to :class:`repomapper.model.SymbolKind`, converts scopes to dotted form, builds
one-line signatures from the source line ctags points at, drops what ctags gets wrong (a name
not on its line), and assembles imports from the reference records (``#include``, ``require``,
Java ``import``...) with :class:`ImportCollector`. No I/O.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from repomapper.model import DEF, Import, SymbolKind, Tag, tag_sort_key

#: How far below ctags's line a definition's name is looked for when it is not on that line.
_NAME_SEARCH_LINES = 2

#: Kinds that become functions when ctags gives them a parameter list (``#define SQ(x)``).
_FUNCTION_LIKE = frozenset({"macro", "define"})

_KINDS: dict[str, str] = {}
for _target, _names in (
    (SymbolKind.CLASS, "class struct structure record union object"),
    (
        SymbolKind.FUNCTION,
        "function func fun subroutine procedure subprogram prototype "
        "subroutineDeclaration generator",
    ),
    (
        SymbolKind.METHOD,
        "method singletonMethod constructor Constructor submethod getter setter methodSpec",
    ),
    (SymbolKind.INTERFACE, "interface trait protocol"),
    (SymbolKind.TYPE, "typedef type alias typealias talias subtype typespec"),
    (SymbolKind.ENUM, "enum"),
    (SymbolKind.VARIABLE, "variable var externvar globalVar global toplevelVariable"),
    (SymbolKind.CONSTANT, "constant const macro define enumerator enumConstant key label"),
    (SymbolKind.MODULE, "module namespace package submodule"),
    (SymbolKind.FIELD, "field member property accessor RecordField anonMember"),
):
    for _name in _names.split():
        _KINDS[_name] = _target.value

#: Kinds whose meaning depends on the language.
_LANGUAGE_KINDS = {
    ("Python", "member"): SymbolKind.METHOD.value,
    # a Lisp macro is called like a function (a C macro is usually a constant)
    ("EmacsLisp", "macro"): SymbolKind.FUNCTION.value,
    ("Lisp", "macro"): SymbolKind.FUNCTION.value,
}
#: Definition records that do not define anything a map should show: Rust ``impl`` blocks
#: (tagged with the implemented type's name), import aliases (Go ``packageName``, Python
#: ``unknown``; Python's ``import x as y`` also carries a ``nameref`` field).
_NOT_DEFINITIONS = frozenset({"implementation", "packageName", "unknown"})
#: Symbol kinds whose names are identifiers: a name with blanks there is a parser mistake.
_IDENTIFIER_KINDS = frozenset(
    {SymbolKind.FIELD.value, SymbolKind.VARIABLE.value, SymbolKind.CONSTANT.value}
)

#: Scope kinds whose functions are methods (C++ member functions are ctags kind ``function``).
_METHOD_SCOPES = frozenset(
    {SymbolKind.CLASS.value, SymbolKind.INTERFACE.value, "implementation", "mixin", "category"}
)

#: (kind, role) pairs of reference records that are imports. Roles marked relative name a path
#: relative to the importing file (``#include "x.h"``, ``require_relative``).
IMPORT_ROLES: frozenset[tuple[str, str]] = frozenset(
    {
        ("header", "local"),
        ("header", "system"),  # C, C++, CUDA, Vera: #include
        ("package", "imported"),  # Java, Go: import
        ("module", "imported"),
        ("module", "indirectlyImported"),  # Python, Elm, Julia
        ("module", "namespace"),  # Python: from x import y
        ("module", "used"),  # Perl use, Julia using
        ("library", "required"),
        ("library", "requiredRel"),
        ("library", "loaded"),  # Ruby
        ("library", "library"),
        ("library", "require"),
        ("source", "source"),  # R
        ("script", "loaded"),  # Sh: source / .
        ("script", "local"),
        ("script", "system"),
        ("script", "included"),  # AutoIt, NSIS
        ("sourcefile", "copied"),  # Cobol COPY
        ("makefile", "included"),
        ("makefile", "optional"),  # Make include / -include
        ("macrofile", "included"),
        ("macrofile", "sincluded"),  # M4
        ("protodef", "imported"),  # Protobuf import
        ("xinput", "included"),
        ("xinput", "input"),  # TeX
        ("stylesheet", "imported"),
        ("stylesheet", "included"),  # XSLT
        ("antfile", "imported"),
        ("kconfig", "source"),
        ("import", "import"),
    }
)
RELATIVE_ROLES = frozenset({"local", "requiredRel"})
#: Roles of a name imported from a module (Python ``from m import a, b as c``).
_NAME_ROLES = frozenset({"imported", "indirectlyImported"})

_SCOPE_SEPARATORS = re.compile(r"::|->|[\\/#]")
_UNESCAPE = re.compile(r"\\([\\/])")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=1024)
def symbol_kind(kind: str, scope_kind: str = "", language: str = "") -> str:
    """ctags's long kind name in our vocabulary; a function inside a class is a method."""
    mapped = _LANGUAGE_KINDS.get((language, kind)) or _KINDS.get(kind, kind)
    if mapped == SymbolKind.FUNCTION and _KINDS.get(scope_kind, scope_kind) in _METHOD_SCOPES:
        return SymbolKind.METHOD.value
    return mapped


@lru_cache(maxsize=4096)
def dotted_scope(scope: str) -> str:
    """``ns::Outer::Inner`` (or ``a/b``, ``A\\B``, ``x->y``) -> ``ns.Outer.Inner``."""
    if not scope:
        return ""
    parts = [p for p in _SCOPE_SEPARATORS.sub(".", scope).split(".") if p]
    return ".".join(parts)


def pattern_text(pattern: str) -> str:
    """The source line inside a ctags search pattern ``/^...$/``, unescaped."""
    if pattern.startswith("/^"):
        pattern = pattern[2:]
    elif pattern.startswith("/"):
        pattern = pattern[1:]
    if pattern.endswith("$/"):
        pattern = pattern[:-2]
    elif pattern.endswith("/"):
        pattern = pattern[:-1]
    return _UNESCAPE.sub(r"\1", pattern)


def make_signature(line_text: str, name: str, ctags_signature: str = "") -> str | None:
    """A one-line header from the definition's source line.

    Whitespace runs collapse to one space and a trailing ``{`` goes. When the parameter list
    continues on later lines (unbalanced parentheses after the name) and ctags knows the whole
    list, the header is the line up to the name followed by ctags's signature.
    """
    text = _SPACE.sub(" ", line_text).strip()
    if text.endswith("{"):
        text = text[:-1].rstrip()
    if not text:
        return None
    at = text.find(name)
    if ctags_signature and at >= 0:
        rest = text[at + len(name) :]
        if rest.count("(") > rest.count(")"):
            text = text[: at + len(name)] + _SPACE.sub(" ", ctags_signature).strip()
    return text  # (the core cuts long signatures)


class SourceLines:
    """Lazy, decoded access to the lines of one file's bytes (1-based)."""

    __slots__ = ("_raw", "_decoded")

    def __init__(self, data: bytes):
        self._raw = data.split(b"\n")
        if self._raw and self._raw[-1] == b"":
            self._raw.pop()
        self._decoded: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._raw)

    def get(self, line: int) -> str:
        text = self._decoded.get(line)
        if text is None:
            text = self._raw[line - 1].decode("utf-8", "replace").rstrip("\r")
            self._decoded[line] = text
        return text

    def place(self, name: str, line: int) -> int | None:
        """The line the name occurs on as a whole word: ``line`` or, failing that, one just
        below; else None. (ctags's C parser, for one, reports ``größe`` as ``e``.)"""
        last = min(line + _NAME_SEARCH_LINES, len(self))
        for candidate in range(max(line, 1), last + 1):
            if _has_word(self.get(candidate), name):
                return candidate
        return None


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _has_word(text: str, name: str) -> bool:
    """Whether ``name`` occurs in ``text`` not glued to identifier characters around it."""
    check_before, check_after = _is_word(name[0]), _is_word(name[-1])
    at = text.find(name)
    while at >= 0:
        end = at + len(name)
        if not (check_before and at > 0 and _is_word(text[at - 1])) and not (
            check_after and end < len(text) and _is_word(text[end])
        ):
            return True
        at = text.find(name, at + 1)
    return False


def _clean(text: Any) -> str:
    """A JSON string field as clean text (no lone surrogates, no newlines)."""
    if not isinstance(text, str):
        return ""
    if text.isprintable():  # the usual case: no control characters, no lone surrogates
        return text
    spaced = "".join(c if c.isprintable() or c == " " else " " for c in text)
    return spaced.encode("utf-8", "replace").decode("utf-8")


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _str(record: Mapping[str, Any], key: str) -> str:
    value = record.get(key)
    return value if isinstance(value, str) else ""


def _scope(record: Mapping[str, Any]) -> str:
    """The dotted scope; Go's package qualifier (every Go scope starts with it) goes."""
    scope = dotted_scope(_clean(record.get("scope")))
    if scope and _str(record, "language") == "Go":
        scope = "" if _str(record, "scopeKind") == "package" else scope.partition(".")[2]
    return scope


@dataclass
class ImportCollector:
    """Collects one file's import records and assembles :class:`Import` values.

    Besides the imported module or path, ctags reports (for Python) the names imported from a
    module, as separate records on the line of each name, and aliases as definitions carrying
    a ``nameref`` field; :meth:`imports` folds them into the import they belong to.
    """

    path: str
    _found: list[tuple[int, str, bool, str]] = field(default_factory=list)  # line, spec, rel, lang
    _names: list[tuple[int, str, str]] = field(default_factory=list)  # line, module, name
    _aliases: list[tuple[int, str, str, str]] = field(default_factory=list)  # line, kind, of, as

    def add(self, record: Mapping[str, Any]) -> bool:
        """Take ``record`` if it is about an import; ``False`` if it is not."""
        kind, roles = _str(record, "kind"), _str(record, "roles") or "def"
        name = _clean(record.get("name")).strip()
        line = _int(record.get("line"))
        if not kind or not name:
            return False
        if roles == "def":
            nameref = _str(record, "nameref")
            if not nameref:
                return False
            target_kind, _, target = nameref.partition(":")
            self._aliases.append((line, target_kind, target, name))
            return True
        role_set = set(roles.split(","))
        if any((kind, role) in IMPORT_ROLES for role in role_set):
            relative = bool(role_set & RELATIVE_ROLES) or name.startswith(("./", "../"))
            self._found.append((line, name, relative, _str(record, "language")))
            if _str(record, "packageName"):  # Go: import str "strings"
                self._aliases.append((line, "module", name, _str(record, "packageName")))
        elif kind == "unknown" and role_set & _NAME_ROLES and _str(record, "scopeKind") == "module":
            self._names.append((line, _clean(record.get("scope")), name))
        return True

    def imports(self) -> list[Import]:
        found = sorted(set(self._found))
        names: list[list[str]] = [[] for _ in found]
        aliases: list[list[str | None]] = [[] for _ in found]
        module_alias: list[str | None] = [None] * len(found)
        by_spec: dict[str, list[tuple[int, int]]] = defaultdict(list)  # spec -> (line, i)
        for i, (line, spec, _, _) in enumerate(found):
            by_spec[spec].append((line, i))

        def nearest_above(entries: list[tuple[int, int]], line: int) -> int | None:
            """The entry nearest at or above ``line`` (a name may sit lines below its import)."""
            at = bisect_right(entries, (line, len(found)))
            return entries[at - 1][1] if at else None

        by_name: dict[str, list[tuple[int, int]]] = defaultdict(list)  # name -> (line, i)
        for line, module, name in sorted(self._names, key=lambda n: n[0]):  # keep written order
            near = nearest_above(by_spec.get(module, []), line)
            if near is not None:
                names[near].append(name)
                aliases[near].append(None)
                by_name[name].append((found[near][0], near))
        for entries in by_name.values():
            entries.sort()
        for line, target_kind, target, alias in self._aliases:
            if target_kind == "module":
                near = nearest_above(by_spec.get(target, []), line)
                if near is not None and found[near][0] == line:
                    module_alias[near] = alias
            else:
                near = nearest_above(by_name.get(target, []), line)
                if near is not None:
                    aliases[near][names[near].index(target)] = alias
        result = []
        for i, (line, spec, relative, language) in enumerate(found):
            level = 0
            if language == "Python" and spec.startswith("."):
                stripped = spec.lstrip(".")
                level, spec, relative = len(spec) - len(stripped), stripped, True
            result.append(
                Import(
                    self.path,
                    spec,
                    tuple(names[i]),
                    relative,
                    line,
                    level,
                    tuple(aliases[i]),
                    module_alias[i],
                )
            )
        return result


_CALLABLE_KINDS = frozenset({SymbolKind.FUNCTION.value, SymbolKind.METHOD.value})

#: Declaring keywords that make an ``unknown``-kind definition record unambiguous (ctags's Lisp
#: parsers tag ``(defclass name ...)`` and friends with kind ``unknown``). Any other keyword
#: leaves the record dropped: a wrong kind is worse than none.
DECLARING_KEYWORDS: dict[str, str] = {
    **dict.fromkeys(
        (
            "defclass",
            "defstruct",
            "cl-defstruct",
            "define-condition",
            "define-error",
            "defrecord",
            "deftype",
            "definterface",
            "defprotocol",
        ),
        SymbolKind.CLASS.value,
    ),
    **dict.fromkeys(
        (
            "defun",
            "cl-defun",
            "defmacro",
            "cl-defmacro",
            "defgeneric",
            "cl-defgeneric",
            "defsubst",
            "cl-defsubst",
            "define-inline",
            "defn",
            "defn-",
            "defmulti",
        ),
        SymbolKind.FUNCTION.value,
    ),
    **dict.fromkeys(("defmethod", "cl-defmethod"), SymbolKind.METHOD.value),
    **dict.fromkeys(
        ("defvar", "defvar-local", "defparameter", "defcustom", "defonce"),
        SymbolKind.VARIABLE.value,
    ),
    "defconst": SymbolKind.CONSTANT.value,
    "defconstant": SymbolKind.CONSTANT.value,
    "defpackage": SymbolKind.MODULE.value,
}
_KEYWORD_BEFORE = r"[(\[]\s*(?P<keyword>[A-Za-z][\w:*+!?/-]*)\s+['#]?"


def declared_kind(line_text: str, name: str) -> str | None:
    """The symbol kind the keyword declaring ``name`` on ``line_text`` gives, if unambiguous."""
    pattern = _KEYWORD_BEFORE + re.escape(name) + r"(?![\w*+!?/:-])"
    found = re.search(pattern, line_text)
    if found is None:
        return None
    return DECLARING_KEYWORDS.get(found.group("keyword").lower())


def record_to_tag(record: Mapping[str, Any], path: str, lines: SourceLines) -> Tag | None:
    """A definition :class:`Tag` for a definition record, else ``None``.

    Records for anonymous entities, references, and definitions whose name cannot be found on
    (or just below) the line ctags gives are dropped: a definition's name occurs on its line.
    """
    if record.get("roles", "def") != "def" or "nameref" in record:
        return None
    if "anonymous" in _str(record, "extras").split(","):
        return None
    name = _clean(record.get("name"))
    kind = _str(record, "kind")
    line = _int(record.get("line"))
    if not name.strip() or not kind or not 1 <= line <= len(lines):
        return None
    if kind == "unknown":
        keyword_kind = declared_kind(lines.get(line), name)
        if keyword_kind is None:
            return None
        mapped_kind = keyword_kind
    elif kind in _NOT_DEFINITIONS:
        return None
    else:
        mapped_kind = symbol_kind(kind, _str(record, "scopeKind"), _str(record, "language"))
    if kind in _FUNCTION_LIKE and _str(record, "signature").startswith("("):
        mapped_kind = SymbolKind.FUNCTION.value
    if mapped_kind in _IDENTIFIER_KINDS and any(c.isspace() for c in name):
        return None
    scope = _scope(record)
    if mapped_kind in _CALLABLE_KINDS:
        # some parsers (Lua's "function M.render(...)", "function obj:method(...)") give the
        # qualified name; references use the last part, so that is the name, the rest is scope
        head, sep, last = name.replace(":", ".").rpartition(".")
        if sep and head and last:
            name, scope = last, ".".join(p for p in (scope, head) if p)
    placed = lines.place(name, line)
    if placed is None:
        return None
    end = _int(record.get("end"))  # (the core clamps it between the start and the last line)
    signature = make_signature(lines.get(placed), name, _clean(record.get("signature")))
    if signature is None:
        pattern = record.get("pattern")
        signature = (
            make_signature(pattern_text(pattern), name) if isinstance(pattern, str) else None
        )
    return Tag(
        file_path=path,
        start_line=placed,
        end_line=end,
        name=name,
        kind=DEF,
        symbol_kind=mapped_kind,
        scope=scope,
        signature=signature,
    )


def finish_tags(tags: Sequence[Tag], kinds: Sequence[str]) -> list[Tag]:
    """Sort and de-duplicate; drop a prototype when the same file defines the function.

    ``kinds`` holds ctags's own kind name for each tag, parallel to ``tags``.
    """
    defined = {(t.scope, t.name) for t, k in zip(tags, kinds, strict=True) if k == "function"}
    kept = {
        t
        for t, k in zip(tags, kinds, strict=True)
        if not (k == "prototype" and (t.scope, t.name) in defined)
    }
    return sorted(kept, key=tag_sort_key)
