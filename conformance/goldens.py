"""Golden expectations: the hand-written specification of what a backend should extract.

A golden is a JSON file next to its fixture's language directory
(``goldens/<language>/<file>.json`` for ``fixtures/<language>/<file>``)::

    {
      "definitions": [
        {"name": "Shape", "symbol_kind": "class", "start_line": 3, "end_line": 9, "scope": ""},
        {"name": "area", "symbol_kind": ["method", "function"], "start_line": 5, "end_line": 6,
         "scope": "Shape", "signature_has": ["self"], "docstring_has": "area of"},
        {"name": "_cache", "symbol_kind": "field", "start_line": 4, "optional": true}
      ],
      "references": [["Shape", 12], ["area", 13]],
      "decoys": [["ghost_function", 20]],
      "imports": [{"source": "os.path", "names": ["join"], "line": 1}]
    }

``definitions`` are matched on ``(name, start_line)``. ``symbol_kind`` (one kind or a list of
accepted kinds), ``end_line`` and ``scope`` are checked separately; a key that is absent is not
checked. ``optional`` definitions may be reported or not (fields, locals, enum members): they
count neither for recall nor against precision. ``references`` are the references every backend
claiming references must find (a subset: finding more is fine). ``decoys`` are names on lines where
they appear only inside a comment or a string: reporting one as a definition, reference or import
is a false positive. ``imports`` match on ``(source, line)``; ``source`` may list accepted
spellings (the first is canonical), ``names`` and ``level`` are checked when present.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repomapper.model import Import, Tag

GOLDEN_SUFFIX = ".json"


class GoldenError(ValueError):
    """A golden file is malformed; the message names the file and the problem."""


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(str(v) for v in value)


def _one_or_list(values: tuple[str, ...]) -> str | list[str]:
    return values[0] if len(values) == 1 else list(values)


@dataclass(frozen=True, slots=True)
class GoldenDef:
    """One expected definition. ``None``/empty attributes are not checked."""

    name: str
    start_line: int
    end_line: int | None = None
    symbol_kinds: tuple[str, ...] = ()
    scope: str | None = None
    optional: bool = False
    signature_has: tuple[str, ...] = ()
    docstring_has: str | None = None

    @property
    def key(self) -> tuple[str, int]:
        return (self.name, self.start_line)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GoldenDef:
        return cls(
            name=str(d["name"]),
            start_line=int(d["start_line"]),
            end_line=None if d.get("end_line") is None else int(d["end_line"]),
            symbol_kinds=_as_tuple(d.get("symbol_kind")),
            scope=d.get("scope"),
            optional=bool(d.get("optional", False)),
            signature_has=_as_tuple(d.get("signature_has")),
            docstring_has=d.get("docstring_has"),
        )

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.symbol_kinds:
            d["symbol_kind"] = _one_or_list(self.symbol_kinds)
        d["start_line"] = self.start_line
        if self.end_line is not None:
            d["end_line"] = self.end_line
        if self.scope is not None:
            d["scope"] = self.scope
        if self.optional:
            d["optional"] = True
        if self.signature_has:
            d["signature_has"] = list(self.signature_has)
        if self.docstring_has is not None:
            d["docstring_has"] = self.docstring_has
        return d


@dataclass(frozen=True, slots=True)
class GoldenImport:
    """One expected import: accepted spellings of its source, its line, optionally names/level."""

    sources: tuple[str, ...]
    line: int
    names: tuple[str, ...] | None = None
    level: int | None = None

    @property
    def source(self) -> str:
        return self.sources[0]

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> GoldenImport:
        sources = _as_tuple(d["source"])
        if not sources:
            raise KeyError("source")
        names = d.get("names")
        return cls(
            sources=sources,
            line=int(d["line"]),
            names=None if names is None else tuple(str(n) for n in names),
            level=None if d.get("level") is None else int(d["level"]),
        )

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"source": _one_or_list(self.sources)}
        if self.names is not None:
            d["names"] = list(self.names)
        d["line"] = self.line
        if self.level is not None:
            d["level"] = self.level
        return d


@dataclass(frozen=True, slots=True)
class Golden:
    """Everything expected of one fixture file."""

    definitions: tuple[GoldenDef, ...] = ()
    references: tuple[tuple[str, int], ...] = ()
    decoys: tuple[tuple[str, int], ...] = ()
    imports: tuple[GoldenImport, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, kept on rewrite

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Golden:
        known = {"definitions", "references", "decoys", "imports"}
        return cls(
            definitions=tuple(GoldenDef.from_json(d) for d in data.get("definitions", ())),
            references=tuple((str(n), int(line)) for n, line in data.get("references", ())),
            decoys=tuple((str(n), int(line)) for n, line in data.get("decoys", ())),
            imports=tuple(GoldenImport.from_json(d) for d in data.get("imports", ())),
            extra={k: v for k, v in data.items() if k not in known},
        )

    def to_json(self) -> dict[str, Any]:
        return {
            **self.extra,
            "definitions": [
                d.to_json() for d in sorted(self.definitions, key=lambda d: (d.start_line, d.name))
            ],
            "references": [list(r) for r in sorted(set(self.references), key=_by_line)],
            "decoys": [list(r) for r in sorted(set(self.decoys), key=_by_line)],
            "imports": [
                i.to_json() for i in sorted(self.imports, key=lambda i: (i.line, i.sources))
            ],
        }

    def dumps(self) -> str:
        return dumps_golden(self.to_json())


def _by_line(pair: tuple[str, int]) -> tuple[int, str]:
    return (pair[1], pair[0])


def dumps_golden(data: dict[str, Any]) -> str:
    """Stable, diff-friendly JSON: one list entry per line, keys in a fixed order."""
    out = ["{"]
    items = list(data.items())
    for i, (key, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, list) and value:
            out.append(f"  {json.dumps(key)}: [")
            for j, entry in enumerate(value):
                sep = "," if j < len(value) - 1 else ""
                out.append(f"    {json.dumps(entry, ensure_ascii=False)}{sep}")
            out.append(f"  ]{comma}")
        else:
            out.append(f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}{comma}")
    out.append("}")
    return "\n".join(out) + "\n"


def load_golden(path: Path) -> Golden:
    """Read and validate one golden file; :class:`GoldenError` names what is wrong."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise GoldenError(f"{path}: cannot read golden: {exc}") from exc
    if not isinstance(data, dict):
        raise GoldenError(f"{path}: a golden must be a JSON object")
    try:
        return Golden.from_json(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise GoldenError(f"{path}: malformed golden entry ({type(exc).__name__}: {exc})") from exc


# -- regeneration -----------------------------------------------------------------------------


def golden_from_output(
    tags: Iterable[Tag], imports: Iterable[Import], previous: Golden | None
) -> Golden:
    """A golden describing a backend's output, keeping the hand-written parts of ``previous``.

    Kept from ``previous``: ``optional``, ``signature_has`` and ``docstring_has`` of definitions
    that still match on ``(name, start_line)``, accepted alternative kinds and import spellings,
    all decoys, and the choice of references: when ``previous`` lists references, only references
    to those names are written (the golden stays a must-find subset); otherwise all are.
    """
    old_defs = {d.key: d for d in previous.definitions} if previous else {}
    defs: dict[tuple[str, int], GoldenDef] = {}
    for t in tags:
        if not t.is_def or (t.name, t.start_line) in defs:
            continue
        old = old_defs.get((t.name, t.start_line))
        kinds: tuple[str, ...] = (t.symbol_kind,) if t.symbol_kind else ()
        if old and t.symbol_kind in old.symbol_kinds:
            kinds = old.symbol_kinds
        defs[(t.name, t.start_line)] = GoldenDef(
            name=t.name,
            start_line=t.start_line,
            end_line=t.end_line,
            symbol_kinds=kinds,
            scope=t.scope,
            optional=old.optional if old else False,
            signature_has=old.signature_has if old else (),
            docstring_has=old.docstring_has if old else None,
        )
    wanted = {name for name, _ in previous.references} if previous and previous.references else None
    refs = {
        (t.name, t.start_line)
        for t in tags
        if not t.is_def and t.start_line > 0 and (wanted is None or t.name in wanted)
    }
    old_imports = list(previous.imports) if previous else []
    new_imports = []
    for imp in imports:
        sources: tuple[str, ...] = (imp.source,)
        for kept in old_imports:
            if kept.line == imp.line_number and imp.source in kept.sources:
                sources = (imp.source, *(s for s in kept.sources if s != imp.source))
                break
        new_imports.append(
            GoldenImport(sources, imp.line_number, tuple(imp.names), imp.level or None)
        )
    return Golden(
        definitions=tuple(defs.values()),
        references=tuple(refs),
        decoys=previous.decoys if previous else (),
        imports=tuple(new_imports),
        extra=dict(previous.extra) if previous else {},
    )


def unified_diff(old_text: str, new_text: str, path: str) -> str:
    """A unified diff of two golden texts ('' when equal)."""
    return "".join(
        difflib.unified_diff(
            old_text.splitlines(keepends=True),
            new_text.splitlines(keepends=True),
            fromfile=f"a/{path}",
            tofile=f"b/{path}",
        )
    )
