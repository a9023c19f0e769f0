"""What a backend returns is checked here, at the boundary, before the core uses any of it.

One function per hook answer. Each returns the items that passed and, when something was wrong,
one line that says what (counts per problem, with the first example of each), for a single
``backend_invalid_output`` diagnostic per plugin and file. An answer that is not a sequence, or
that holds more items than the cap, is rejected whole (``None``): the file then falls through to
the next backend that claims it. The cap is checked while iterating, so a plugin returning
millions of tags costs the cap, not the millions.

Each tag kept is normalised on the way out (:mod:`repomapper.isolation.normalize`). The
extraction core and the conformance suite use these same functions.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..model import DEF, REF, Import, SourceFile, Tag
from .normalize import normalize_tag

_NEWLINES = re.compile(r"\r\n|\r|\n")
#: The conformance property each problem kind of :func:`tag_problem`/:func:`import_problem`
#: breaks (the others break ``well_formed``).
PROPERTY_OF = {
    "with lines outside the file": "lines_in_file",
    "with a line outside the file": "lines_in_file",
    "whose name is not on its line": "names_on_lines",
}
_MAX_EXAMPLE = 80


@dataclass(slots=True)
class Lines:
    """The lines of a source file, decoded once, as backends number them (1-based): split at line
    feeds and, when the file has a carriage return, also at any newline (backends use either)."""

    lines: list[str]
    alt: list[str] | None = None

    @classmethod
    def of(cls, source: SourceFile) -> Lines:
        text = source.data.decode("utf-8", "replace")
        return cls(text.split("\n"), _NEWLINES.split(text) if "\r" in text else None)

    def __len__(self) -> int:
        return max(len(self.lines), len(self.alt)) if self.alt is not None else len(self.lines)

    @property
    def last(self) -> int:
        """The number of the file's last line: :func:`len` less the empty piece after a final
        line break (a tag may start there, as a parser's end-of-file position, but ends are
        clamped to real lines)."""
        return max(_last(self.lines), _last(self.alt) if self.alt is not None else 0)

    def has(self, number: int, name: str) -> bool:
        """Whether ``name`` occurs on line ``number`` (as written, or NFKC-normalised as Python
        reads identifiers: ``µ`` is ``μ``)."""
        return _on_line(self.lines, number, name) or (
            self.alt is not None and _on_line(self.alt, number, name)
        )


def _last(lines: list[str]) -> int:
    return len(lines) - 1 if len(lines) > 1 and lines[-1] == "" else len(lines)


def _on_line(lines: list[str], number: int, name: str) -> bool:
    if not 0 < number <= len(lines):
        return False
    line = lines[number - 1]
    if name in line:
        return True
    if line.isascii():
        return False
    return unicodedata.normalize("NFKC", name) in unicodedata.normalize("NFKC", line)


@dataclass(slots=True)
class _Problems:
    counts: dict[str, int] = field(default_factory=dict)
    examples: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, example: str) -> None:
        if kind not in self.counts:
            self.counts[kind] = 0
            self.examples[kind] = example[:_MAX_EXAMPLE]
        self.counts[kind] += 1

    def summary(self, kept: int, what: str) -> str | None:
        if not self.counts:
            return None
        dropped = sum(self.counts.values())
        parts = [f"{n} {kind} (first: {self.examples[kind]})" for kind, n in self.counts.items()]
        return f"dropped {dropped} of {dropped + kept} {what}: " + "; ".join(parts)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _MAX_EXAMPLE else text[: _MAX_EXAMPLE - 3] + "..."


def _not_a_sequence(result: Any, what: str) -> str | None:
    if isinstance(result, str | bytes | bytearray | Mapping) or not isinstance(result, Iterable):
        return f"returned {type(result).__name__}, not a sequence of {what}"
    return None


def _optional_str(value: Any) -> bool:
    return value is None or isinstance(value, str)


def tag_problem(t: Any, path: str, lines: Lines) -> tuple[str, str] | None:
    """(problem kind, example) for a tag the core must not use, or None when it is sound.

    Only a definition's name must occur on its line: a reference may be reported under the name
    it resolves to (``st.integers`` as ``strategies``), as the libcst backend does.
    """
    if type(t) is not Tag:
        return "not a Tag", _describe(t)
    if t.file_path != path:
        return "with another file's path", repr(t.file_path)
    start, end = t.start_line, t.end_line
    if type(start) is not int or type(end) is not int:
        return "with a line that is not an int", f"{t.name!r} at {start!r}-{end!r}"
    n = len(lines)
    if not 0 <= start <= n or (start == 0 and t.kind == DEF):  # (the end line is clamped)
        return "with lines outside the file", f"{t.name!r} at {start}-{end} (file has {n} lines)"
    if not isinstance(t.name, str) or not t.name:
        return "with no name", _describe(t.name)
    if t.kind != DEF and t.kind != REF:
        return "of an unknown kind", repr(t.kind)
    if not (
        isinstance(t.symbol_kind, str)
        and isinstance(t.scope, str)
        and _optional_str(t.signature)
        and _optional_str(t.docstring)
        and _optional_str(t.target)
    ):
        return "with a field of the wrong type", _describe(t)
    if t.kind == DEF and not lines.has(start, t.name.rsplit(".", 1)[-1]):
        return "whose name is not on its line", f"{t.name!r} at line {start}"
    return None


def validate_tags(
    result: Any, source: SourceFile, max_tags: int, lines: Lines | None = None
) -> tuple[list[Tag] | None, str | None]:
    """The sound tags of ``extract_tags``'s answer, normalised (:func:`normalize_tag`: signature
    cap, docstring trim, end line clamped to the file), and what was wrong with the rest."""
    bad = _not_a_sequence(result, "Tag")
    if bad:
        return None, bad
    lines = lines or Lines.of(source)
    kept: list[Tag] = []
    problems = _Problems()
    path, n = source.path, len(lines)
    try:
        for count, t in enumerate(result, 1):
            if count > max_tags:
                return (
                    None,
                    f"returned more than {max_tags} tags for one file (the limit); all dropped",
                )
            # the common case, a reference on one line, checked here without a call per tag
            # (most of a file's tags are references, hundreds per file in large C trees): sound by
            # every check of tag_problem, and one that normalize_tag returns unchanged
            if (
                type(t) is Tag
                and t.kind == REF
                and t.signature is None
                and t.docstring is None
                and type(t.start_line) is int
                and type(t.end_line) is int
                and t.end_line == t.start_line
                and 0 <= t.start_line <= n
                and t.file_path == path
                and type(t.name) is str
                and t.name
                and type(t.symbol_kind) is str
                and type(t.scope) is str
                and (t.target is None or type(t.target) is str)
            ):
                kept.append(t)
                continue
            problem = tag_problem(t, path, lines)
            if problem is None:
                kept.append(normalize_tag(t, lines.last))
            else:
                problems.add(*problem)
    except Exception as exc:
        return None, f"iterating its answer raised {type(exc).__name__}: {exc}"
    return kept, problems.summary(len(kept), "tags")


def import_problem(i: Any, path: str, n_lines: int) -> tuple[str, str] | None:
    if type(i) is not Import:
        return "not an Import", _describe(i)
    if i.file_path != path:
        return "with another file's path", repr(i.file_path)
    if not isinstance(i.source, str):
        return "with a source that is not a string", _describe(i.source)
    if type(i.line_number) is not int or not 0 <= i.line_number <= n_lines:
        return (
            "with a line outside the file",
            f"{i.source!r} at {i.line_number!r} (file has {n_lines} lines)",
        )
    if type(i.level) is not int or i.level < 0 or not isinstance(i.is_relative, bool):
        return "with a bad level", _describe(i)
    if not (
        isinstance(i.names, tuple)
        and all(isinstance(n, str) for n in i.names)
        and isinstance(i.aliases, tuple)
        and all(_optional_str(a) for a in i.aliases)
        and _optional_str(i.alias)
    ):
        return "with names of the wrong type", _describe(i)
    return None


def validate_imports(
    result: Any, source: SourceFile, max_items: int, lines: Lines | None = None
) -> tuple[list[Import] | None, str | None]:
    """The sound imports of ``extract_imports``'s answer, and what was wrong with the rest."""
    bad = _not_a_sequence(result, "Import")
    if bad:
        return None, bad
    n_lines = len(lines or Lines.of(source))
    kept: list[Import] = []
    problems = _Problems()
    try:
        for count, i in enumerate(result, 1):
            if count > max_items:
                return (
                    None,
                    f"returned more than {max_items} imports for one file (the limit); all dropped",
                )
            problem = import_problem(i, source.path, n_lines)
            if problem is None:
                kept.append(i)
            else:
                problems.add(*problem)
    except Exception as exc:
        return None, f"iterating its answer raised {type(exc).__name__}: {exc}"
    return kept, problems.summary(len(kept), "imports")
