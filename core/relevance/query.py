"""A task description, read once: its search terms and the explicit references it makes.

Task text is untrusted input of any size: it is cut to :data:`MAX_TASK_CHARS`, control characters
other than tabs and newlines become spaces, and every pattern below is linear (no backtracking
on long runs), so megabytes of binary or a single 10 MB line cost a bounded, small time.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field

from .terms import STOP_WORDS, identifier_terms, terms

#: Task text beyond this many characters is not read (a stack of logs says nothing more).
MAX_TASK_CHARS = 200_000
#: A term repeated in the task counts at most this many times (a log line repeated 500 times
#: must not outweigh the sentence that names the bug).
MAX_QUERY_TF = 3
MIN_WORD = 3


@functools.lru_cache(maxsize=4096)
def expand_word(word: str) -> tuple[str, ...]:
    return tuple(identifier_terms(word))


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,63}")
#: path-like tokens: a/b/c.ext, a/b/c, c.ext; optional :line or :line:col after
_PATH = re.compile(
    r"(?<![\w.~/-])((?:[\w.~-]{1,100}/){0,30}[\w.-]{1,100}\.[A-Za-z][\w]{0,9}|(?:[\w.~-]{1,100}/){1,30}[\w.-]{1,100})(?::(\d{1,7}))?"
)
_PY_FRAME = re.compile(r'File "([^"\n]{1,1000})", line (\d{1,7})')
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w{0,63}(?:\.[A-Za-z_]\w{0,63}){1,10})(?![\w])")
_BACKTICK = re.compile(r"`{1,3}([^`\n]{1,200})`{1,3}")
_ERROR = re.compile(r"\b([A-Z]\w{0,60}(?:Error|Exception|Warning|Exit|Interrupt))\b")
#: a line written in words after a path: "`a.py` at line 12", "a.py, line 12", "a.py on line 12"
#: (not after a quote: a Python frame, ``File "a.py", line 12``, is read whole above)
_LINE_AFTER = re.compile(
    r"`?,?[ \t]{1,3}(?:(?:at|on|in)[ \t]{1,3})?line[ \t]{1,3}(\d{1,7})\b", re.I
)
_TB_HEADER = re.compile(r"Traceback \(most recent call last\)")
_FILE_EXT = re.compile(r"\.[A-Za-z][\w]{0,9}$")


@dataclass(frozen=True, slots=True)
class PathRef:
    """A path as the task writes it, with the line it points at when it says one."""

    text: str
    line: int | None
    kind: str  # "path" or "traceback"
    #: the last frame of its traceback (where the error was raised)
    innermost: bool = False


@dataclass(frozen=True, slots=True)
class TaskQuery:
    text: str
    truncated: bool
    #: search terms and how often the task uses each (capped at MAX_QUERY_TF)
    terms: Counter[str]
    #: identifier-like words as written (case kept), at least three characters
    words: frozenset[str]
    paths: tuple[PathRef, ...]
    #: dotted names (``pkg.mod.func``, ``Class.method``) as written
    dotted: tuple[str, ...]
    #: names written in backticks (the reporter's own emphasis)
    quoted: frozenset[str]
    #: exception class names the task shows (``ValueError``, ``KeyError``)
    errors: frozenset[str]
    #: the words of :attr:`words` written in the reporter's prose: outside fenced code blocks,
    #: interpreter prompts and markdown headings (an issue template's "### Describe the bug", an
    #: ``#include`` in pasted code name no file the reporter means)
    prose: frozenset[str] = frozenset()
    #: the terms of the first line when more lines follow it (an issue's title: the reporter's
    #: own summary), capped like :attr:`terms`; empty for a one-line task
    title_terms: Counter[str] = field(default_factory=Counter)
    #: the terms of the prose lines (see :attr:`prose`), capped like :attr:`terms`
    prose_terms: Counter[str] = field(default_factory=Counter)
    #: the words of :attr:`words` written in the first line when more lines follow it
    title_words: frozenset[str] = frozenset()
    #: runs of plain words the task quotes or shows after an error class (a message the
    #: program printed), which the code that prints it holds as a string literal
    messages: tuple[str, ...] = ()

    @property
    def name_terms(self) -> Counter[str]:
        """The terms that stand for a whole code name the task writes: a compound identifier
        (``sneakyThrow``, ``get_alias``: the term of the whole word, not its parts) or a name in
        backticks, with their counts in :attr:`terms`."""
        whole: set[str] = set()
        for word in self.words:
            parts = expand_word(word)
            if parts and (len(parts) > 1 or word in self.quoted):
                whole.add(parts[0])
        return Counter({t: c for t, c in self.terms.items() if t in whole})

    @property
    def empty(self) -> bool:
        return not self.terms and not self.paths and not self.words

    @property
    def about_templates(self) -> bool:
        """Whether the task is about page templates: it says so in words (``template``,
        ``layout``, ``partial``, ``html``, a template language's name)."""
        return bool(set(re.findall(r"[a-z0-9]+", self.text.lower())) & _TEMPLATE_WORDS)

    @property
    def about_tests(self) -> bool:
        """Whether the task is about tests themselves: its first line (the title) says so, or it
        names a test file."""
        title = self.text.strip().split("\n", 1)[0].lower()
        title_words = set(re.findall(r"[a-z]+", title))
        if title_words & {"test", "tests", "testing", "pytest", "unittest", "fixture", "fixtures"}:
            return True
        return any(is_test_like(p.text) for p in self.paths if p.kind == "path")


#: words that say a task is about page templates (which rank below code unless it is)
_TEMPLATE_WORDS = frozenset(
    {
        "template",
        "templates",
        "templating",
        "jinja",
        "jinja2",
        "html",
        "layout",
        "layouts",
        "partial",
        "partials",
        "shortcode",
        "shortcodes",
        "erb",
        "handlebars",
        "liquid",
        "twig",
        "freemarker",
    }
)


def is_test_like(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name.startswith("test_") or name.rsplit(".", 1)[0].endswith(
        ("_test", "_tests", ".test", ".spec")
    )


def clean(text: str) -> tuple[str, bool]:
    truncated = len(text) > MAX_TASK_CHARS
    text = text[:MAX_TASK_CHARS]
    return _CONTROL.sub(" ", text), truncated


def parse_task(text: str | bytes) -> TaskQuery:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    text, truncated = clean(text)
    capped = _capped_terms(text)
    found: list[tuple[int, str, int | None, str]] = []
    #: where the text writes a path (a frame's file, a/b/c): its words are evidence for that
    #: path (see the path signal), not separate mentions of names or file stems
    spans: list[tuple[int, int]] = []
    for m in _PY_FRAME.finditer(text):
        found.append((m.start(), m.group(1).replace("\\", "/"), int(m.group(2)), "traceback"))
        spans.append(m.span(1))
    framed = {(pos, t) for pos, t, _, _ in found}
    for m in _PATH.finditer(text):
        token = m.group(1).replace("\\", "/").strip("./") if m.group(1) else ""
        if not token or token.count("/") == 0 and not _FILE_EXT.search(token):
            continue
        if "/" in token:
            spans.append(m.span(1))
        line = int(m.group(2)) if m.group(2) else None
        if line is None and (after := _LINE_AFTER.match(text, m.end())):
            line = int(after.group(1))
        found.append((m.start(), token, line, "traceback" if line is not None else "path"))
    # frames in text order; a frame is "innermost" when it is the last one before the next
    # traceback header (or the end): that is where the error was raised
    headers = [m.start() for m in _TB_HEADER.finditer(text)] + [len(text) + 1]
    refs: dict[tuple[str, int | None, str], bool] = {}
    found.sort(key=lambda x: (x[0], x[3] != "traceback"))
    last_in_block: dict[int, tuple[str, int | None]] = {}
    for pos, token, line, kind in found:
        if kind == "traceback":
            block = next(i for i, h in enumerate(headers) if pos < h)
            last_in_block[block] = (token, line)
    innermost = set(last_in_block.values())
    for pos, token, line, kind in found:
        if kind == "path" and any(t.endswith(token) for p, t in framed if p <= pos):
            continue
        key = (token, line, kind)
        refs[key] = refs.get(key, False) or (token, line) in innermost
    paths = tuple(PathRef(t, ln, k, inner) for (t, ln, k), inner in refs.items())
    words = frozenset(
        w for w in _WORD.findall(_blanked(text, spans)) if w.lower() not in STOP_WORDS
    )
    dotted = tuple(dict.fromkeys(m.group(1) for m in _DOTTED.finditer(text)))
    quoted: set[str] = set()
    for m in _BACKTICK.finditer(text):
        inner = m.group(1).strip()
        for w in _WORD.findall(inner):
            quoted.add(w)
    errors = frozenset(m.group(1) for m in _ERROR.finditer(text))
    prose_text = _prose(_blanked(text, spans))
    title = _title(text)
    prose = frozenset(_WORD.findall(prose_text)) & words
    return TaskQuery(
        text,
        truncated,
        capped,
        words,
        paths,
        dotted,
        frozenset(quoted),
        errors,
        prose,
        _capped_terms(title),
        _capped_terms(prose_text),
        frozenset(_WORD.findall(title)) & words,
        quoted_messages(text),
    )


#: a line showing a message after its kind (``ValueError: ...``, ``error: ...``)
_MESSAGE_LINE = re.compile(
    r"^[ \t>]*(?:[A-Za-z_][\w.]*(?:Error|Exception|Warning)|error|warning|Error|Warning|ERROR|WARNING)"
    r"[ \t]*:[ \t]*(.{12,300})$",
    re.M,
)
#: a string in quotes on one line (not an apostrophe inside a word, nor an escaped quote)
_QUOTED_TEXT = re.compile(r"""(?<![\w\\])(["'`])([^"'`\n]{16,300})\1(?!\w)""")
#: an escape sequence of a string a log printed with its quotes (``\n``, ``\'``)
_ESCAPE = re.compile(r"\\[A-Za-z'\"\\]")
#: what splits a message into the runs a program's literal holds whole (a value the program
#: formatted into it, punctuation of code)
_NOT_MESSAGE = re.compile(r"[^A-Za-z ,.:;!?()-]+|\s{2,}")
#: a run must be this long, in characters and words, to say which code printed it
MESSAGE_CHARS = 16
MESSAGE_WORDS = 3
MAX_MESSAGES = 20


def quoted_messages(text: str) -> tuple[str, ...]:
    """The runs of plain words of the messages ``text`` shows (after an error class or
    ``error:``, anywhere) or quotes in its prose (strings in pasted code or configuration are
    the reporter's values, not the program's), at least :data:`MESSAGE_CHARS` characters and
    :data:`MESSAGE_WORDS` words each, in order of appearance (at most :data:`MAX_MESSAGES`)."""
    shown = [m.group(1) for m in _MESSAGE_LINE.finditer(text)]
    shown += [m.group(2) for m in _QUOTED_TEXT.finditer(_prose(text))]
    runs: dict[str, None] = {}
    for message in shown:
        for run in _NOT_MESSAGE.split(_ESCAPE.sub("|", message)):
            run = run.strip(" ,.:;!?()-")
            if len(run) >= MESSAGE_CHARS and len(_WORD.findall(run)) >= MESSAGE_WORDS:
                runs[run] = None
    return tuple(runs)[:MAX_MESSAGES]


def _capped_terms(text: str) -> Counter[str]:
    """The search terms of ``text``, each counted at most :data:`MAX_QUERY_TF` times."""
    return Counter({t: min(c, MAX_QUERY_TF) for t, c in Counter(terms(text)).items()})


def _title(text: str) -> str:
    """The first non-blank line when another non-blank line follows it, else ``""``."""
    lines = [line for line in text.split("\n", 64) if line.strip()]
    return lines[0] if len(lines) > 1 else ""


_FENCE = re.compile(r"^[ \t]{0,3}(```|~~~)")
_NOT_PROSE = re.compile(r"^[ \t]{0,3}(#{1,6}[ \t]|>>>|\.\.\.[ \t]|\$[ \t])")


def _prose(text: str) -> str:
    """The lines of ``text`` a reporter wrote as prose: fenced code blocks, markdown headings,
    interpreter and shell prompts dropped."""
    kept: list[str] = []
    fenced = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced and not _NOT_PROSE.match(line):
            kept.append(line)
    return "\n".join(kept)


def _blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """``text`` with these spans replaced by spaces (positions kept)."""
    if not spans:
        return text
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start > at:
            out.append(text[at:start])
        if end > at:
            out.append(" " * (end - max(start, at)))
            at = end
    out.append(text[at:])
    return "".join(out)
