"""The code of one file in a pack, in three sizes: ``full`` (the file), ``outline`` (imports,
every definition's signature and docstring, the bodies of the symbols that matter) and
``signatures`` (the signature lines of the symbols that matter). A body, and a signature in
``signatures``, comes with the decorators above it. Only real source lines are included, each
run of them recorded as a span; ``⋮`` marks what was left out."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..model import Tag
from .models import symbol_id

ELISION = "⋮"
MODES = ("full", "outline", "signatures")


def _end(s: Tag) -> int:
    return max(s.end_line, s.start_line)


def _header(lines: Sequence[str], s: Tag) -> range:
    """The signature lines of ``s``: as many source lines as its signature has (at least one),
    within its span."""
    n = max(1, len((s.signature or "").splitlines()))
    end = min(_end(s), s.start_line + n - 1, len(lines))
    return range(s.start_line, end + 1)


#: decorator or attribute lines looked at above a definition (a long decorator call included)
MAX_DECORATOR_LINES = 24
_DECORATOR_STARTS = ("@", "#[")  # Python, Java, Kotlin, TypeScript; Rust's attributes
_OPEN, _CLOSE = "([{", ")]}"


def decorated_start(lines: Sequence[str], s: Tag) -> int:
    """The first line of the decorators (attributes, annotations) right above ``s``, which
    the backends leave out of its span but which change what it is (``@property``, a route, a
    ``#[derive]``); ``s.start_line`` when there are none."""
    first = s.start_line
    for k in range(s.start_line - 1, max(s.start_line - 1 - MAX_DECORATOR_LINES, 0), -1):
        if lines[k - 1].lstrip().startswith(_DECORATOR_STARTS) and _decorators(
            lines[k - 1 : s.start_line - 1]
        ):
            first = k
    return first


def _decorators(block: Sequence[str]) -> bool:
    """Whether ``block`` is a run of decorators: each line starts one at bracket depth zero or
    continues one inside its brackets, and every bracket opened is closed by its end."""
    depth = 0
    for line in block:
        text = line.strip()
        if depth == 0 and not text.startswith(_DECORATOR_STARTS):
            return False
        depth += sum(text.count(c) for c in _OPEN) - sum(text.count(c) for c in _CLOSE)
        if depth < 0:
            return False
    return depth == 0


def _doc(lines: Sequence[str], s: Tag, after: int) -> range:
    """The docstring lines of ``s`` where they follow its header in the source."""
    if not s.docstring:
        return range(0)
    first = s.docstring.strip().splitlines()[0].strip() if s.docstring.strip() else ""
    if not first:
        return range(0)
    for k in range(after + 1, min(after + 4, _end(s), len(lines)) + 1):
        if first in lines[k - 1]:
            n = len(s.docstring.strip().splitlines())
            return range(k, min(_end(s), k + n, len(lines)) + 1) if n > 1 else range(k, k + 1)
    return range(0)


def _enclosing(by_name: dict[str, list[Tag]], s: Tag) -> list[Tag]:
    """The definitions ``s`` is nested in (its class, the class around that, ...): those its
    scope names whose lines hold it (``by_name``: a file's definitions by qualified name)."""
    if not s.scope:
        return []
    parts = s.scope.split(".")
    return [
        t
        for k in range(1, len(parts) + 1)
        for t in by_name.get(".".join(parts[:k]), ())
        if t is not s and t.start_line <= s.start_line <= _end(t)
    ]


def spans_of(wanted: Iterable[int]) -> tuple[tuple[int, int], ...]:
    spans: list[list[int]] = []
    for n in sorted(set(wanted)):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return tuple((a, b) for a, b in spans)


def render(
    path: str,
    lines: Sequence[str],
    definitions: Sequence[Tag] | None,
    import_lines: Iterable[int],
    mode: str,
    bodies: frozenset[str],
    matter: frozenset[str],
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """(content, spans) of the file ``path`` (its ``lines``) in ``mode``; ``definitions`` are
    its definitions (``None``: not mapped, shown in full), ``import_lines`` the lines of its
    imports, ``bodies`` and ``matter`` symbol ids (whose bodies, whose signatures the file must
    show)."""
    if mode == "full" or definitions is None:
        return joined(lines), ((1, len(lines)),) if lines else ()
    wanted: set[int] = set()
    if mode == "outline":
        wanted.update(n for n in import_lines if 0 < n <= len(lines))
    by_name: dict[str, list[Tag]] = {}
    for s in definitions:
        by_name.setdefault(s.qualified_name, []).append(s)
    for s in definitions:
        sid = symbol_id(path, s.qualified_name)
        if s.start_line < 1 or s.start_line > len(lines):
            continue
        if mode == "outline" and sid in bodies:
            wanted.update(range(decorated_start(lines, s), min(_end(s), len(lines)) + 1))
        elif mode == "signatures" and sid not in matter and sid not in bodies:
            continue
        else:
            head = _header(lines, s)
            wanted.update(head)
            if mode == "signatures":  # what matters is shown with what changes what it is
                wanted.update(range(decorated_start(lines, s), s.start_line))
            if mode == "outline":
                wanted.update(_doc(lines, s, head[-1]))
        # a method shown without its class's header would read as a method of whatever class
        # is shown above it: the headers of the symbols enclosing it come along
        for outer in _enclosing(by_name, s):
            wanted.update(_header(lines, outer))
    spans = spans_of(wanted)
    out: list[str] = []
    prev = 0
    for a, b in spans:
        if a > prev + 1:
            out.append(ELISION)
        out.extend(lines[a - 1 : b])
        prev = b
    if spans and prev < len(lines):
        out.append(ELISION)
    return joined(out), spans


def joined(lines: Sequence[str]) -> str:
    """Lines as a file's text in the pack (each line ended)."""
    return "\n".join(lines) + "\n" if lines else ""
