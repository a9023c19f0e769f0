"""Comparing a backend's output for one fixture with its golden.

The rules (documented for plugin authors in ``docs/plugins.md``):

* Definitions match on ``(name, start_line)``. Recall counts required golden definitions found;
  precision counts reported definitions that are in the golden (required or optional) against
  those that are not. Kind, end line and scope of a matched definition are attribute checks,
  scored separately as accuracies.
* References: the golden lists a must-find subset, so recall is the measure. A backend may find
  more references than the golden lists; the only false positives are *decoys* (names that occur
  on a line only inside a comment or a string), so reference precision is
  ``found / (found + decoys reported)``. A reference with line 0 (line unknown) matches by name.
* Imports match on ``(line, source)`` where the golden may accept several spellings of the source.
  Precision and recall are both measured; names and level are attribute checks.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from repomapper.model import Import, Tag

from .goldens import Golden, GoldenDef, GoldenImport


@dataclass
class Tally:
    """Counts behind a precision/recall pair (``expected``: golden, ``reported``: backend)."""

    expected: int = 0
    matched: int = 0
    false_positives: int = 0
    reported: int = 0

    @property
    def precision(self) -> float | None:
        denominator = self.matched + self.false_positives
        return None if denominator == 0 else self.matched / denominator

    @property
    def recall(self) -> float | None:
        return None if self.expected == 0 else self.matched / self.expected

    def add(self, other: Tally) -> None:
        self.expected += other.expected
        self.matched += other.matched
        self.false_positives += other.false_positives
        self.reported += other.reported


@dataclass
class Accuracy:
    """How many checked attributes were right."""

    checked: int = 0
    correct: int = 0

    @property
    def value(self) -> float | None:
        return None if self.checked == 0 else self.correct / self.checked

    def record(self, ok: bool) -> None:
        self.checked += 1
        self.correct += int(ok)

    def add(self, other: Accuracy) -> None:
        self.checked += other.checked
        self.correct += other.correct


#: Check names, in display order, with the capability each belongs to.
CHECKS: dict[str, str] = {
    "definitions": "definitions",
    "symbol_kinds": "definitions",
    "end_lines": "end_lines",
    "scopes": "scopes",
    "signatures": "signatures",
    "docstrings": "docstrings",
    "references": "references",
    "imports": "imports",
    "import_names": "imports",
}
#: ``import_resolution`` is measured on a corpus's resolution cases (:mod:`.resolution`), not
#: on the fixtures' goldens, so it is not among :data:`CHECKS`.
TALLY_CHECKS = ("definitions", "references", "imports", "import_resolution")


@dataclass
class Score:
    """Tallies, accuracies and messages for one or more fixture files."""

    tallies: dict[str, Tally] = field(default_factory=lambda: {c: Tally() for c in TALLY_CHECKS})
    accuracies: dict[str, Accuracy] = field(
        default_factory=lambda: {c: Accuracy() for c in CHECKS if c not in TALLY_CHECKS}
    )
    messages: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, other: Score) -> None:
        for k, t in other.tallies.items():
            self.tallies[k].add(t)
        for k, a in other.accuracies.items():
            self.accuracies[k].add(a)
        for k, msgs in other.messages.items():
            self.messages[k].extend(msgs)

    def note(self, check: str, message: str) -> None:
        self.messages[check].append(message)


def _norm(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split()).casefold()


def _lines_hint(lines: Sequence[int], expected: int) -> str:
    if not lines:
        return "not found"
    if any(abs(line - expected) == 1 for line in lines):
        near = min(lines, key=lambda line: abs(line - expected))
        return f"found at line {near} (off by one?)"
    shown = ", ".join(str(line) for line in sorted(lines)[:5])
    return f"found at line {shown}" if len(lines) == 1 else f"found at lines {shown}"


def score_file(path: str, golden: Golden, tags: Sequence[Tag], imports: Sequence[Import]) -> Score:
    """Compare one fixture's extraction with its golden."""
    score = Score()
    decoys = set(golden.decoys)
    _score_definitions(path, golden, [t for t in tags if t.is_def], decoys, score)
    _score_references(path, golden, [t for t in tags if not t.is_def], decoys, score)
    _score_imports(path, golden, imports, decoys, score)
    return score


def _score_definitions(
    path: str, golden: Golden, defs: list[Tag], decoys: set[tuple[str, int]], score: Score
) -> None:
    tally = score.tallies["definitions"]
    reported: dict[tuple[str, int], Tag] = {}
    lines_by_name: dict[str, list[int]] = defaultdict(list)
    for t in defs:
        reported.setdefault((t.name, t.start_line), t)
        lines_by_name[t.name].append(t.start_line)
    tally.reported = len(reported)
    golden_keys = {g.key: g for g in golden.definitions}
    missing = [g for g in golden.definitions if not g.optional and g.key not in reported]
    for delta, direction in ((1, "below"), (-1, "above")):
        near = sum((g.name, g.start_line + delta) in reported for g in missing)
        if len(missing) >= 3 and near * 2 >= len(missing):
            score.note(
                "definitions",
                f"{path}: {near} of {len(missing)} missing definitions are reported one line "
                f"{direction} the expected line (off by one?)",
            )
            break
    for g in golden.definitions:
        found = reported.get(g.key)
        if not g.optional:
            tally.expected += 1
            if found is None:
                hint = _lines_hint(lines_by_name.get(g.name, []), g.start_line)
                score.note(
                    "definitions",
                    f"{path}: definition '{g.name}' expected at line {g.start_line}, {hint}",
                )
                continue
            tally.matched += 1
        if found is not None:
            _check_attributes(path, g, found, score)
    for key, t in reported.items():
        if key in golden_keys:
            continue
        tally.false_positives += 1
        if key in decoys:
            score.note(
                "definitions",
                f"{path}: reported definition '{t.name}' at line {t.start_line}, where the name "
                "only occurs inside a comment or a string",
            )
        else:
            kind = f" ({t.symbol_kind})" if t.symbol_kind else ""
            score.note(
                "definitions",
                f"{path}: unexpected definition '{t.name}'{kind} at line {t.start_line}",
            )


def _check_attributes(path: str, g: GoldenDef, t: Tag, score: Score) -> None:
    where = f"{path}: definition '{g.name}' at line {g.start_line}"
    if g.symbol_kinds:
        ok = t.symbol_kind in g.symbol_kinds
        score.accuracies["symbol_kinds"].record(ok)
        if not ok:
            want = " or ".join(repr(k) for k in g.symbol_kinds)
            score.note("symbol_kinds", f"{where}: symbol kind {t.symbol_kind!r}, expected {want}")
    if g.end_line is not None:
        ok = t.end_line == g.end_line
        score.accuracies["end_lines"].record(ok)
        if not ok:
            score.note("end_lines", f"{where}: ends at line {t.end_line}, expected {g.end_line}")
    if g.scope is not None:
        ok = t.scope == g.scope
        score.accuracies["scopes"].record(ok)
        if not ok:
            score.note("scopes", f"{where}: scope {t.scope!r}, expected {g.scope!r}")
    if g.signature_has:
        sig = _norm(t.signature or "")
        missing = [s for s in g.signature_has if _norm(s) not in sig]
        score.accuracies["signatures"].record(not missing)
        if missing:
            score.note(
                "signatures",
                f"{where}: signature {t.signature!r} does not mention "
                + ", ".join(repr(m) for m in missing),
            )
    if g.docstring_has is not None:
        ok = _norm(g.docstring_has) in _norm(t.docstring or "")
        score.accuracies["docstrings"].record(ok)
        if not ok:
            score.note(
                "docstrings",
                f"{where}: docstring {t.docstring!r} does not contain {g.docstring_has!r}",
            )


def _score_references(
    path: str, golden: Golden, refs: list[Tag], decoys: set[tuple[str, int]], score: Score
) -> None:
    tally = score.tallies["references"]
    reported = {(t.name, t.start_line) for t in refs}
    unlocated = {t.name for t in refs if t.start_line == 0}
    lines_by_name: dict[str, list[int]] = defaultdict(list)
    for name, line in reported:
        lines_by_name[name].append(line)
    tally.reported = len(reported)
    for name, line in sorted(set(golden.references), key=lambda r: (r[1], r[0])):
        tally.expected += 1
        if (name, line) in reported or name in unlocated:
            tally.matched += 1
        else:
            hint = _lines_hint([x for x in lines_by_name.get(name, []) if x], line)
            score.note("references", f"{path}: reference to '{name}' at line {line} {hint}")
    for name, line in sorted(reported & decoys, key=lambda r: (r[1], r[0])):
        tally.false_positives += 1
        score.note(
            "references",
            f"{path}: reported reference '{name}' at line {line}, where the name only occurs "
            "inside a comment or a string",
        )


_SEGMENT = re.compile(r"(?:::|[./\\])")


def _tail(source: str) -> str:
    parts = [p for p in _SEGMENT.split(source) if p]
    return parts[-1] if parts else source


def _score_imports(
    path: str,
    golden: Golden,
    imports: Sequence[Import],
    decoys: set[tuple[str, int]],
    score: Score,
) -> None:
    tally = score.tallies["imports"]
    remaining = list(imports)
    tally.reported = len(remaining)
    for g in sorted(golden.imports, key=lambda i: (i.line, i.sources)):
        tally.expected += 1
        match = next(
            (i for i in remaining if i.line_number == g.line and i.source in g.sources), None
        )
        if match is None:
            score.note(
                "imports",
                f"{path}: import of {g.source!r} at line {g.line} {_import_hint(g, imports)}",
            )
            continue
        remaining.remove(match)
        tally.matched += 1
        _check_import_attributes(path, g, match, score)
    for imp in remaining:
        tally.false_positives += 1
        on_decoy = any(
            line == imp.line_number and (name in imp.source or name in imp.names)
            for name, line in decoys
        )
        why = (
            ", where it only occurs inside a comment or a string"
            if on_decoy
            else " that the golden does not list"
        )
        score.note(
            "imports", f"{path}: reported import {imp.source!r} at line {imp.line_number}{why}"
        )


def _shown(g: GoldenImport) -> str:
    return repr("." * (g.level or 0) + g.source)


def _import_hint(g: GoldenImport, imports: Sequence[Import]) -> str:
    same_source = [i.line_number for i in imports if i.source in g.sources]
    if same_source:
        return _lines_hint(same_source, g.line)
    same_line = sorted({i.source for i in imports if i.line_number == g.line})
    if same_line:
        return "not found; that line has " + ", ".join(repr(s) for s in same_line)
    return "not found"


def _check_import_attributes(path: str, g: GoldenImport, imp: Import, score: Score) -> None:
    where = f"{path}: import of {_shown(g)} at line {g.line}"
    if g.names is not None:
        names = set(imp.names)
        if not names and imp.source != g.source:
            names = {_tail(imp.source)}  # 'a::b::C' spelled as the source of the name C
        ok = names == set(g.names)
        score.accuracies["import_names"].record(ok)
        if not ok:
            score.note(
                "import_names", f"{where}: names {sorted(names)}, expected {sorted(g.names)}"
            )
    if g.level is not None:
        ok = imp.level == g.level
        score.accuracies["import_names"].record(ok)
        if not ok:
            score.note("import_names", f"{where}: level {imp.level}, expected {g.level}")
