"""The per-input properties: what must hold of a plugin's output for any one input.

:func:`check_input` runs the plugin on one source and raises :class:`Violation` for the first
property in ``active`` that does not hold.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from repomapper.isolation.normalize import normalize_tag
from repomapper.isolation.validate import PROPERTY_OF, Lines, import_problem, tag_problem
from repomapper.model import DEF, REF, Import, SourceFile, Tag

from .subject import Subject, describe_exception, describe_input


class Violation(Exception):
    """A property does not hold on one input."""

    def __init__(self, prop: str, message: str):
        super().__init__(f"{prop}: {message}")
        self.prop = prop
        self.message = message


def line_count(data: bytes) -> int:
    """A generous line count: the most lines any usual convention could see in ``data``."""
    return max(data.count(b"\n"), len(re.findall(rb"\r\n|\r|\n", data))) + 1


def _lines(data: bytes) -> list[list[str]]:
    """The file's lines under each convention a backend may use (``\\n`` only; any newline)."""
    views = []
    for text in (data.decode("utf-8", "replace"), data.decode("latin-1")):
        views.append(text.split("\n"))
        views.append(re.split(r"\r\n|\r|\n", text))
    return views


def _name_on_line(name: str, line: int, views: list[list[str]]) -> bool:
    target = unicodedata.normalize("NFKC", name)
    for lines in views:
        if 1 <= line <= len(lines):
            text = lines[line - 1]
            if name in text or target in unicodedata.normalize("NFKC", text):
                return True
    return False


@dataclass
class _Output:
    tags: Any
    imports: Any

    def valid_tags(self) -> list[Tag]:
        items = self.tags if isinstance(self.tags, list | tuple) else []
        return [t for t in items if isinstance(t, Tag)]

    def valid_imports(self) -> list[Import]:
        items = self.imports if isinstance(self.imports, list | tuple) else []
        return [i for i in items if isinstance(i, Import)]


def _run(subject: Subject, source: SourceFile, active: frozenset[str]) -> _Output:
    what = describe_input(source.data)
    results = []
    for hook, call in (
        ("prepare_batch", lambda: subject.prepare([source])),
        ("extract_tags", lambda: subject.tags(source)),
        ("extract_imports", lambda: subject.imports(source)),
    ):
        try:
            results.append(call())
        except Exception as exc:
            if "no_crash" in active:
                raise Violation(
                    "no_crash", f"{hook} crashed on {what}: {describe_exception(exc)}"
                ) from exc
            results.append([])
    return _Output(_normalized(source, results[1]), results[2])


def _normalized(source: SourceFile, tags: Any) -> Any:
    """The sound tags as the core normalises them (an end line past the file is clamped, not
    the plugin's fault); anything else as returned, for the checks to report."""
    if not isinstance(tags, list | tuple):
        return tags
    lines = Lines.of(source)
    return [
        normalize_tag(t, lines.last) if tag_problem(t, source.path, lines) is None else t
        for t in tags
    ]


def _check_well_formed(source: SourceFile, out: _Output) -> None:
    for hook, value, cls in (
        ("extract_tags", out.tags, Tag),
        ("extract_imports", out.imports, Import),
    ):
        if value is None:
            continue
        if not isinstance(value, list | tuple):
            raise Violation("well_formed", f"{hook} returned {type(value).__name__}, not a list")
        for item in value:
            if not isinstance(item, cls):
                raise Violation(
                    "well_formed", f"{hook} returned a {type(item).__name__}, not a {cls.__name__}"
                )
            if item.file_path != source.path:
                raise Violation(
                    "well_formed", f"{hook}: file_path {item.file_path!r}, expected {source.path!r}"
                )
    for t in out.valid_tags():
        problem = None
        if t.kind not in (DEF, REF):
            problem = f"kind {t.kind!r} is neither {DEF!r} nor {REF!r}"
        elif not isinstance(t.name, str) or not t.name or "\n" in t.name:
            problem = f"name {t.name!r} is not a non-empty one-line string"
        elif not all(
            isinstance(x, int) and not isinstance(x, bool) for x in (t.start_line, t.end_line)
        ):
            problem = "lines are not integers"
        elif not isinstance(t.symbol_kind, str) or not isinstance(t.scope, str):
            problem = "symbol_kind and scope must be strings"
        if problem:
            raise Violation("well_formed", f"tag {t.name!r} at line {t.start_line}: {problem}")
    for i in out.valid_imports():
        if not isinstance(i.source, str) or not isinstance(i.line_number, int):
            raise Violation("well_formed", f"import {i.source!r}: source must be str, line an int")
        if not isinstance(i.names, tuple) or not all(isinstance(n, str) for n in i.names):
            raise Violation("well_formed", f"import {i.source!r}: names must be a tuple of str")


def _check_lines(source: SourceFile, out: _Output) -> None:
    n = line_count(source.data)
    what = describe_input(source.data)
    for t in out.valid_tags():
        if t.kind == REF and t.start_line == 0 and t.end_line in (0, None):
            continue
        if not (1 <= t.start_line <= t.end_line <= n):
            raise Violation(
                "lines_in_file",
                f"{t.kind} {t.name!r} has lines {t.start_line}-{t.end_line}, outside 1..{n} "
                f"(or ending before it starts) on {what}",
            )
    for i in out.valid_imports():
        if not 1 <= i.line_number <= n:
            raise Violation(
                "lines_in_file",
                f"import {i.source!r} at line {i.line_number}, outside 1..{n} on {what}",
            )


def _check_names(source: SourceFile, out: _Output) -> None:
    views = _lines(source.data)
    for t in out.valid_tags():
        if t.kind == DEF and not _name_on_line(t.name, t.start_line, views):
            raise Violation(
                "names_on_lines",
                f"definition {t.name!r} reported at line {t.start_line}, which does not contain "
                f"the name, on {describe_input(source.data)}",
            )


def _check_duplicates(out: _Output) -> None:
    kinds: tuple[tuple[str, Sequence[Tag | Import]], ...] = (
        ("tag", out.valid_tags()),
        ("import", out.valid_imports()),
    )
    for what, items in kinds:
        dup = [x for x, c in Counter(items).items() if c > 1]
        if dup:
            x = min(dup, key=repr)
            label = (
                f"{x.kind} {x.name!r} at line {x.start_line}"
                if isinstance(x, Tag)
                else f"{x.source!r} at line {x.line_number}"
            )
            raise Violation("no_duplicates", f"{what} {label} reported {Counter(items)[x]} times")


def _check_boundary(source: SourceFile, out: _Output, active: frozenset[str]) -> None:
    """What the framework's boundary validator (used by every map) would drop, as a violation of
    the property it breaks: a plugin passing the suite loses nothing at the boundary."""
    lines = Lines.of(source)
    hooks: tuple[tuple[str, Any, Callable[[Any], tuple[str, str] | None]], ...] = (
        ("extract_tags", out.tags, lambda x: tag_problem(x, source.path, lines)),
        ("extract_imports", out.imports, lambda x: import_problem(x, source.path, len(lines))),
    )
    for hook, value, problem_of in hooks:
        for item in value if isinstance(value, list | tuple) else ():
            problem = problem_of(item)
            if problem is not None and PROPERTY_OF.get(problem[0], "well_formed") in active:
                kind, example = problem
                raise Violation(
                    PROPERTY_OF.get(kind, "well_formed"),
                    f"{hook}: the framework drops an item {kind} ({example}) on "
                    f"{describe_input(source.data)}",
                )


def check_input(subject: Subject, source: SourceFile, active: frozenset[str]) -> None:
    """Run the per-input properties in ``active`` on ``source``; raise the first violation."""
    out = _run(subject, source, active)
    if "well_formed" in active:
        _check_well_formed(source, out)
    if "lines_in_file" in active:
        _check_lines(source, out)
    if "names_on_lines" in active:
        _check_names(source, out)
    if "no_duplicates" in active:
        _check_duplicates(out)
    _check_boundary(source, out, active)
    if "deterministic" in active:
        again = _run(subject, source, active)
        if (again.tags, again.imports) != (out.tags, out.imports):
            raise Violation(
                "deterministic",
                f"two runs on the same {describe_input(source.data)} gave different output "
                f"({_count(out.tags)} vs {_count(again.tags)} tags, "
                f"{_count(out.imports)} vs {_count(again.imports)} imports)",
            )


def _count(value: Any) -> str:
    return str(len(value)) if isinstance(value, list | tuple) else repr(value)
