"""A scanner for template files: Go templates (Hugo, Helm), Jinja and its relatives (Nunjucks,
Twig, Liquid), Handlebars/Mustache, ERB and FreeMarker. Knows nothing of repomapper.

It reads only the template tags (``{{ }}``, ``{% %}``, ``{# #}``, ``<% %>``, ``<#x>``, ``<@x>``),
never the markup around them, and finds:

* definitions: Go ``{{ define "x" }}`` / ``{{ block "x" . }}``, Jinja ``{% block x %}`` /
  ``{% macro x(...) %}``, Handlebars ``{{#*inline "x"}}``, Rails ``content_for :x do``,
  FreeMarker ``<#macro x>``, Liquid ``{% capture x %}`` (a variable), each with its end line
  (the matching ``end``/``endblock``/``{{/inline}}``/``</#macro>``), the enclosing definitions as
  scope, the tag as signature and a template comment just above as docstring;
* references: Go ``template "x"`` and Helm ``include "x"`` (names of definitions), Jinja calls
  ``name(...)`` / ``m.name(...)`` and ``{% call name(...) %}``, Handlebars partials ``{{> x}}``,
  ERB ``yield :x``, FreeMarker ``<@x/>``;
* imports: ``{% extends/include/import/from/embed/use/render %}``, Hugo ``partial "x"``, Go
  ``template "x.html"`` when the name is a file name, Handlebars partials, ERB ``render "x"``,
  FreeMarker ``<#import>``/``<#include>``.

Bounded work on any input: one pass over the text; the closing delimiter of each kind is searched
at most once past any position (an unclosed ``{{`` costs two characters, not a scan per opener);
only the first :data:`MAX_TAG_CHARS` of a tag are tokenised; nothing recurses.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .syntaxes import ERB, FTL, GO, JINJA

#: characters of one tag that are tokenised (a longer tag is read in its first part only)
MAX_TAG_CHARS = 65_536
#: characters of a tag kept as a definition's signature (the core cuts it again)
MAX_SIGNATURE_CHARS = 400
#: open blocks followed per syntax; deeper ones are only counted (their definitions still
#: reported, on one line), so hostile nesting costs neither time nor huge scopes
MAX_DEPTH = 100
#: template tags (and unclosed openers) read per file; the rest of a file past them is not
#: read (generated or hostile input: a real template has hundreds)
MAX_TAGS = 50_000
#: a definition name longer than this is not a name a map shows (hostile or generated input)
MAX_NAME_CHARS = 200


FUNCTION = "function"
VARIABLE = "variable"

#: names a Jinja/Twig/Nunjucks expression calls that the template engine itself provides
_BUILTIN_CALLS = frozenset(
    {
        "caller",
        "super",
        "range",
        "dict",
        "lipsum",
        "cycler",
        "joiner",
        "namespace",
        "varargs",
        "kwargs",
        "loop",
        "parent",
        "block",
        "attribute",
        "constant",
        "cycle",
        "date",
        "max",
        "min",
        "random",
        "source",
        "include",
        "template_from_string",
        "render",
        "partial",
        "len",
        "print",
        "printf",
        "content_for",
    }
)
#: statement heads after which the first name is not a call of a repository name
_STATEMENT_HEADS = frozenset(
    {
        "if",
        "elif",
        "else",
        "for",
        "set",
        "with",
        "macro",
        "call",
        "filter",
        "block",
        "extends",
        "include",
        "import",
        "from",
        "embed",
        "use",
        "render",
        "define",
        "template",
        "range",
        "end",
    }
)
#: Jinja-family statements that import another template, and what follows the names
_IMPORT_STATEMENTS = frozenset(
    {"extends", "include", "import", "from", "embed", "use", "render", "section", "layout"}
)
#: Go actions that open a block closed by ``{{ end }}``
_GO_OPENERS = frozenset({"if", "range", "with", "define", "block", "while"})
#: extensions a bare (unquoted) Jekyll/Liquid include path may end with
_BARE_INCLUDE = re.compile(r"[\w./-]+\.(?:html?|liquid|md|markdown|svg|xml|txt|json)\b")
#: a Handlebars partial name after ``>``: a path, or a quoted string
_HB_PARTIAL = re.compile(r"""\s*(?:"([^"]*)"|'([^']*)'|([^\s}()~"'=]+))""")

_TOKEN = re.compile(
    r"""
    (?P<str>"(?:[^"\\\n]|\\.)*"?|'(?:[^'\\\n]|\\.)*'?|`[^`]*`?)
   |(?P<name>[^\W\d]\w*)
   |(?P<num>\d[\w.]*)
   |(?P<ws>\s+)
   |(?P<punct>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_WS = re.compile(r"\s+")
#: an ERB tag that ends a Ruby block, and one that opens one
_ERB_END = re.compile(r"end\b(?!\s*[=:])")
_ERB_OPENS = re.compile(
    r"\bdo\s*(?:\|[^|]*\|)?$|^(?:if|unless|while|until|case|for|begin)\b", re.DOTALL
)


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    line: int
    end_line: int
    scope: str
    signature: str
    doc: str | None
    kind: str = FUNCTION


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    line: int
    kind: str  # "call" or "name"


@dataclass(frozen=True, slots=True)
class TemplateImport:
    source: str
    line: int
    names: tuple[str, ...] = ()
    alias: str | None = None


@dataclass
class Document:
    definitions: list[Definition] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    imports: list[TemplateImport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    #: how many template tags were read (0: the file has no template syntax)
    tags: int = 0


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # "str", "name", "num", "punct"
    text: str
    pos: int  # offset in the whole text

    @property
    def value(self) -> str:
        """A string token's content without its quotes (unterminated: without the opening one)."""
        if self.kind != "str":
            return self.text
        body = self.text[1:]
        if len(body) >= 1 and body[-1] == self.text[0]:
            body = body[:-1]
        return body


class _Lines:
    """Line numbers of ascending offsets, counted incrementally (linear over a scan)."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0
        self.line = 1

    def at(self, pos: int) -> int:
        if pos < self.pos:  # back within one tag: costs the distance
            self.line -= self.text.count("\n", pos, self.pos)
        else:
            self.line += self.text.count("\n", self.pos, pos)
        self.pos = pos
        return self.line


class _Closers:
    """Finds closing delimiters; each is searched at most once past any offset, so many
    unclosed openers cost linear time, not quadratic."""

    def __init__(self, text: str):
        self.text = text
        self.found: dict[str, tuple[int, int]] = {}  # closer -> (searched from, found at)

    def find(self, closer: str, start: int) -> int:
        cached = self.found.get(closer)
        if cached is not None:
            searched_from, at = cached
            if start >= searched_from and (at == -1 or at >= start):
                return at
        at = self.text.find(closer, start)
        self.found[closer] = (start, at)
        return at


@dataclass
class _Frame:
    """An open block: what opened it (``block``, ``macro``, ``each``, ``if``, ...) and the
    definition it holds (an index into the pending ones), if any."""

    kind: str
    definition: int | None = None


@dataclass
class _Pending:
    """A definition found, its end line not yet known."""

    name: str
    line: int
    scope: str
    signature: str
    doc: str | None
    end_line: int = 0
    kind: str = FUNCTION


def _tokens(text: str, start: int, end: int) -> list[_Token]:
    found = []
    for m in _TOKEN.finditer(text, start, min(end, start + MAX_TAG_CHARS)):
        kind = m.lastgroup or "punct"
        if kind != "ws":
            found.append(_Token(kind, m.group(), m.start()))
    return found


def _signature(text: str, start: int, end: int) -> str:
    return _WS.sub(" ", text[start : min(end, start + MAX_SIGNATURE_CHARS)]).strip()


def _comment_text(body: str) -> str:
    return _WS.sub(" ", body.strip(" \t\r\n-*!#~/")).strip()


def _strip_trim(text: str, start: int, end: int) -> int:
    """Where a tag's content starts: past a whitespace-control marker and spaces."""
    if start < end and text[start] in "-+~=":
        start += 1
    while start < end and text[start] in " \t\r\n":
        start += 1
    return start


class Scanner:
    """One scan of one template text (see the module docstring)."""

    def __init__(self, text: str, syntaxes: frozenset[str]):
        self.text = text
        self.syntaxes = syntaxes
        self.doc = Document()
        self.lines = _Lines(text)
        self.closers = _Closers(text)
        self.pending: list[_Pending] = []
        self.stacks: dict[str, list[_Frame]] = {
            "go": [],
            "hb": [],
            "jinja": [],
            "erb": [],
            "ftl": [],
        }
        #: blocks opened beyond MAX_DEPTH, per syntax, not yet closed
        self.overflow: dict[str, int] = {"go": 0, "hb": 0, "jinja": 0, "erb": 0, "ftl": 0}
        self.scope: str | None = ""
        # the last template comment: (its last line, its text, tags read before it ended)
        self.comment: tuple[int, str, int] | None = None
        #: ``{% from "m" import a as b %}``: the local name b stands for a
        self.aliases: dict[str, str] = {}
        openers = []
        if GO in syntaxes or JINJA in syntaxes:
            openers.append(r"\{\{")
        if JINJA in syntaxes:
            openers += [r"\{%", r"\{#"]
        if ERB in syntaxes:
            openers.append(r"<%")
        if FTL in syntaxes:
            openers.append(r"</?[#@](?=[\w-])")
        self.opener = re.compile("|".join(openers)) if openers else None

    # -- the scan ---------------------------------------------------------------------------
    def run(self) -> Document:
        if self.opener is not None:
            pos = 0
            text = self.text
            for _ in range(MAX_TAGS):
                m = self.opener.search(text, pos)
                if m is None:
                    break
                pos = self._tag(m.group(), m.start(), m.end())
            else:
                if self.opener.search(text, pos) is not None:
                    line = self.lines.at(pos)
                    self.doc.problems.append(
                        f"line {line}: read the first {MAX_TAGS:,} template tags only"
                    )
        last = self.text.count("\n") + (0 if self.text.endswith("\n") else 1)
        for stack in self.stacks.values():
            for frame in stack:
                if frame.definition is not None:
                    self._close(frame, max(last, 1), unclosed=True)
        for d in self.pending:
            self.doc.definitions.append(
                Definition(
                    d.name,
                    d.line,
                    max(d.end_line or d.line, d.line),
                    d.scope,
                    d.signature,
                    d.doc,
                    d.kind,
                )
            )
        self._drop_local_imports()
        if self.aliases:
            self.doc.references = [
                Reference(self.aliases.get(r.name, r.name), r.line, r.kind)
                for r in self.doc.references
            ]
        return self.doc

    def _tag(self, opener: str, start: int, body: int) -> int:
        """Read the tag opened at ``start``; returns where scanning goes on."""
        text = self.text
        if opener[-1] in "#@" and opener[0] == "<":
            return self._freemarker(opener, start, body)
        if opener == "{{" and text.startswith("{{", body) and text.startswith("{{{{", start):
            return self._skip_raw_handlebars(start)
        content = _strip_trim(text, body, len(text))
        if opener == "{{" and text.startswith("!--", content):
            return self._comment(start, content, "--}}", "--~}}")
        if opener == "{{" and text.startswith("/*", content):
            close = self.closers.find("*/", content + 2)
            if close == -1:
                return body
            end = self.closers.find("}}", close + 2)
            if end == -1:
                return body
            self._note_comment(start, content + 2, close, end + 2)
            return end + 2
        closer = {"{{": "}}", "{%": "%}", "{#": "#}", "<%": "%>"}[opener]
        end = self.closers.find(closer, body)
        if end == -1:
            return body  # unclosed: not a tag, the scan goes on after the opener
        if opener == "{#" or (opener == "<%" and text.startswith("#", body)):
            self._note_comment(start, body + 1, end, end + 2)
            return end + 2
        if opener == "{{" and text.startswith("!", content):
            self._note_comment(start, content + 1, end, end + 2)
            return end + 2
        self.doc.tags += 1
        inner_end = end
        while inner_end > content and text[inner_end - 1] in "-+~ \t\r\n":
            inner_end -= 1
        if opener == "{%":
            return self._jinja_statement(start, content, inner_end, end + 2)
        if opener == "<%":
            self._erb(start, content, inner_end, end + 2)
            return end + 2
        self._action(start, content, inner_end, end + 2)
        return end + 2

    def _freemarker(self, opener: str, start: int, body: int) -> int:
        """FreeMarker: ``<#macro x>``/``<#function x()>`` ... ``</#macro>`` define x,
        ``<@x/>`` and ``<@ns.x>`` call it, ``<#import "f" as ns>`` and ``<#include "f">``
        import; ``<#-- -->`` is a comment."""
        text = self.text
        if opener == "<#" and text.startswith("--", body):
            end = self.closers.find("-->", body + 2)
            if end == -1:
                return body
            self._note_comment(start, body + 2, end, end + 3)
            return end + 3
        end = self.closers.find(">", body)
        if end == -1:
            return body
        self.doc.tags += 1
        inner_end = end - 1 if text[end - 1] == "/" else end
        toks = _tokens(text, body, inner_end)
        if not toks or toks[0].kind != "name":
            return end + 1
        head = toks[0].text
        if opener == "<@":  # <@ns.name ...>: the last name of the path
            k = 0
            while k + 2 < len(toks) and toks[k + 1].text == "." and toks[k + 2].kind == "name":
                k += 2
            name = toks[k]
            self.doc.references.append(Reference(name.text, self.lines.at(name.pos), "call"))
        elif opener == "</#" and head in ("macro", "function"):
            self._pop("ftl", start, head)
        elif opener == "<#" and head in ("macro", "function"):
            if len(toks) > 1 and toks[1].kind in ("name", "str"):
                self._define("ftl", head, toks[1], start, end + 1, opened=True)
            else:
                self._open("ftl", head)
        elif opener == "<#" and head in ("import", "include") and len(toks) > 1:
            source = toks[1]
            words = [t.text for t in toks]
            alias = None
            if "as" in words and words.index("as") + 1 < len(toks):
                alias = toks[words.index("as") + 1].text
            if source.kind == "str" and source.value:
                line = self.lines.at(source.pos)
                self.doc.imports.append(TemplateImport(source.value, line, alias=alias))
        return end + 1

    def _comment(self, start: int, content: int, *closers: str) -> int:
        ends = [(e, c) for c in closers if (e := self.closers.find(c, content)) != -1]
        if not ends:
            return content
        end, closer = min(ends)
        self._note_comment(start, content + 3, end, end + len(closer))
        return end + len(closer)

    def _note_comment(self, start: int, body: int, body_end: int, end: int) -> None:
        self.lines.at(start)
        last = self.lines.at(end - 1)
        self.comment = (
            last,
            _comment_text(self.text[body : min(body_end, body + 2000)]),
            self.doc.tags,
        )

    def _skip_raw_handlebars(self, start: int) -> int:
        """``{{{{raw}}}} ... {{{{/raw}}}}``: the content is text."""
        end = self.closers.find("{{{{/", start + 4)
        if end == -1:
            return start + 4
        close = self.closers.find("}}}}", end)
        return len(self.text) if close == -1 else close + 4

    def _doc_for(self, line: int) -> str | None:
        if self.comment is None:
            return None
        last, text, tags_before = self.comment
        if tags_before == self.doc.tags - 1 and line - 1 <= last <= line and text:
            return text
        return None

    # -- definitions and blocks -------------------------------------------------------------
    def _scope(self) -> str:
        """The enclosing definitions' names, dotted (remembered until a definition's block
        opens or closes)."""
        if self.scope is None:
            self.scope = ".".join(
                self.pending[f.definition].name
                for stack in self.stacks.values()
                for f in stack
                if f.definition is not None
            )
        return self.scope

    def _define(
        self,
        stack: str,
        kind: str,
        name: _Token,
        start: int,
        end: int,
        opened: bool,
        symbol_kind: str = FUNCTION,
    ) -> None:
        if len(name.value) > MAX_NAME_CHARS:
            if opened:
                self._open(stack, kind)
            return
        line = self.lines.at(name.pos)
        doc = self._doc_for(line)
        signature = _signature(self.text, start, end)
        pending = _Pending(name.value, line, self._scope(), signature, doc, kind=symbol_kind)
        self.pending.append(pending)
        index = len(self.pending) - 1
        if opened and len(self.stacks[stack]) < MAX_DEPTH:
            self.stacks[stack].append(_Frame(kind, index))
            self.scope = None
        else:
            self.pending[index].end_line = line
            if opened:
                self.overflow[stack] += 1

    def _open(self, stack: str, kind: str) -> None:
        if len(self.stacks[stack]) < MAX_DEPTH:
            self.stacks[stack].append(_Frame(kind))
        else:
            self.overflow[stack] += 1

    def _pop(self, stack: str, end_pos: int, kind: str | None = None) -> None:
        """Close the innermost open block (of ``kind``, when given, closing any opened since;
        nothing when no block of that kind is open)."""
        if self.overflow[stack]:
            self.overflow[stack] -= 1
            return
        frames = self.stacks[stack]
        if kind is not None and not any(f.kind == kind for f in frames):
            return
        line = self.lines.at(end_pos)
        while frames:
            frame = frames.pop()
            self._close(frame, line)
            if kind is None or frame.kind == kind:
                return

    def _close(self, frame: _Frame, line: int, unclosed: bool = False) -> None:
        if frame.definition is not None:
            self.scope = None
            pending = self.pending[frame.definition]
            pending.end_line = line
            if unclosed:
                self.doc.problems.append(f"line {pending.line}: {pending.name!r} is never closed")

    # -- {{ }} ------------------------------------------------------------------------------
    def _action(self, start: int, content: int, end: int, tag_end: int) -> None:
        text = self.text
        head = text[content : content + 8]
        if head.startswith("#*inline"):
            toks = _tokens(text, content + 8, end)
            name = next((t for t in toks if t.kind == "str"), None)
            if name is not None and name.value:
                self._define("hb", "inline", name, start, tag_end, opened=True)
            else:
                self._open("hb", "inline")
            return
        if head.startswith(("#>", ">")):
            at = content + (2 if head.startswith("#>") else 1)
            self._partial(at, end)
            if head.startswith("#>"):
                self._open("hb", _section_name(text, at, end))
            return
        if head.startswith(("#", "^")):  # a block helper, a (Mustache inverted) section
            self._open("hb", _section_name(text, content + 1, end))
            return
        if head.startswith("/"):
            self._pop("hb", start, _section_name(text, content + 1, end) or None)
            return
        if head.startswith(("&", "{")):  # unescaped output
            return
        toks = _tokens(text, content, end)
        if not toks:
            return
        first = toks[0]
        if first.kind == "name":
            word = first.text
            if word in ("define", "block") and len(toks) > 1 and toks[1].kind == "str":
                if toks[1].value:
                    self._define("go", word, toks[1], start, tag_end, opened=True)
                else:
                    self._open("go", word)
            elif word in _GO_OPENERS:
                self._open("go", word)
            elif word == "end":
                self._pop("go", start)
        self._go_calls(toks)
        self._calls(toks)

    def _partial(self, at: int, end: int) -> None:
        m = _HB_PARTIAL.match(self.text, at, end)
        if m is None:
            return
        name = m.group(1) or m.group(2) or m.group(3)
        if not name or name.startswith("@"):  # @partial-block: the caller's block
            return
        pos = m.start(m.lastindex or 1)
        line = self.lines.at(pos)
        self.doc.references.append(Reference(name, line, "name"))
        self.doc.imports.append(TemplateImport(name, line))

    def _go_calls(self, toks: list[_Token]) -> None:
        """``template "x"``, Helm's ``include "x"``, Hugo's ``partial "x"`` anywhere in an action."""
        for i, tok in enumerate(toks[:-1]):
            nxt = toks[i + 1]
            if tok.kind != "name" or nxt.kind != "str" or not nxt.value:
                continue
            if i > 0 and toks[i - 1].text == ".":
                continue  # a method or field (.Site.template), not the function
            line = self.lines.at(nxt.pos)
            if tok.text in ("template", "include"):
                self.doc.references.append(Reference(nxt.value, line, "name"))
                if _file_like(nxt.value):
                    self.doc.imports.append(TemplateImport(nxt.value, line))
            elif tok.text in ("partial", "partialCached"):
                self.doc.imports.append(TemplateImport(nxt.value, line))

    def _calls(self, toks: list[_Token], skip: int = -1) -> None:
        """Jinja-style calls ``name(`` / ``m.name(``: references to what a repository may define
        (macros, and functions the template is given); Twig's ``include('x')`` is an import."""
        for i, tok in enumerate(toks[:-1]):
            paren = toks[i + 1]
            if tok.kind != "name" or i == skip or paren.text != "(":
                continue
            if paren.pos != tok.pos + len(tok.text):
                continue  # `name (x)`: a Go pipeline's argument, not a call
            if tok.text == "include" and i + 2 < len(toks) and toks[i + 2].kind == "str":
                arg = toks[i + 2]  # Twig's include('x.html')
                if arg.value and _alone(toks, i + 2):
                    self.doc.imports.append(TemplateImport(arg.value, self.lines.at(arg.pos)))
                continue
            if i == 0 and tok.text in _STATEMENT_HEADS:
                continue
            attribute = i > 0 and toks[i - 1].text == "."
            if tok.text in _BUILTIN_CALLS and not attribute:
                continue
            if attribute and i > 1 and toks[i - 2].text == "loop":
                continue  # loop.cycle(), loop.changed()
            self.doc.references.append(Reference(tok.text, self.lines.at(tok.pos), "call"))

    # -- {% %} ------------------------------------------------------------------------------
    def _jinja_statement(self, start: int, content: int, end: int, tag_end: int) -> int:
        text = self.text
        toks = _tokens(text, content, end)
        if not toks or toks[0].kind != "name":
            return tag_end
        head = toks[0].text
        if head in ("raw", "verbatim", "comment"):
            return self._skip_block(head, tag_end, start, comment=head == "comment")
        if head == "block":
            if len(toks) > 1 and toks[1].kind == "name":
                rest = {t.text for t in toks[2:]}
                opened = rest <= {"scoped", "required"}  # Twig's {% block x value %} has no end
                self._define("jinja", head, toks[1], start, tag_end, opened=opened)
            else:
                self._open("jinja", head)
        elif head == "macro":
            if len(toks) > 1 and toks[1].kind == "name":
                self._define("jinja", head, toks[1], start, tag_end, opened=True)
                self._calls(toks, skip=1)
                return tag_end
            self._open("jinja", head)
        elif head in ("capture", "set") and len(toks) == 2 and toks[1].kind == "name":
            # Liquid's {% capture x %} and Jinja's block {% set x %}: a named piece of output
            self._define("jinja", head, toks[1], start, tag_end, opened=True, symbol_kind=VARIABLE)
        elif head in ("endblock", "endmacro", "endcapture", "endset"):
            self._pop("jinja", start, head[3:])
        elif head in _IMPORT_STATEMENTS:
            self._jinja_import(head, toks, content, end)
        self._calls(toks)
        return tag_end

    def _jinja_import(self, head: str, toks: list[_Token], content: int, end: int) -> None:
        strings: list[_Token] = []
        i = 1
        if i < len(toks) and toks[i].text == "[":  # {% include ['a.html', 'b.html'] %}
            i += 1
            while i < len(toks) and toks[i].text != "]":
                if toks[i].kind == "str" and _alone(toks, i):
                    strings.append(toks[i])
                i += 1
        elif i < len(toks) and toks[i].kind == "str" and _alone(toks, i):
            strings.append(toks[i])
        elif head in ("include", "render", "layout"):
            m = _BARE_INCLUDE.match(
                self.text, _strip_after(self.text, toks[0].pos + len(head), end), end
            )
            if m is not None:
                self.doc.imports.append(TemplateImport(m.group(), self.lines.at(m.start())))
            return
        names: tuple[str, ...] = ()
        alias = None
        words = [t.text for t in toks]
        if head == "from" and "import" in words:
            names, renamed = _imported_names(toks[words.index("import") + 1 :])
            self.aliases.update(renamed)
        if head == "import" and "as" in words:
            k = words.index("as")
            alias = toks[k + 1].text if k + 1 < len(toks) and toks[k + 1].kind == "name" else None
        for s in strings:
            if s.value:
                self.doc.imports.append(TemplateImport(s.value, self.lines.at(s.pos), names, alias))

    def _skip_block(self, head: str, after: int, start: int, comment: bool) -> int:
        """``{% raw %}``, ``{% verbatim %}``, ``{% comment %}``: the content is text (or a
        comment) up to the matching end tag; without one, the rest of the file."""
        pattern = re.compile(r"\{%[-+]?\s*end" + head + r"\s*[-+]?%\}")
        m = pattern.search(self.text, after)
        end = len(self.text) if m is None else m.end()
        if comment:
            self._note_comment(start, after, m.start() if m else end, end)
        return end

    # -- <% %> ------------------------------------------------------------------------------
    def _erb(self, start: int, content: int, end: int, tag_end: int) -> None:
        toks = _tokens(self.text, content, end)
        self._erb_blocks(toks, start, content, end, tag_end)
        for i, tok in enumerate(toks):
            if tok.kind != "name" or tok.text != "render":
                continue
            rest = toks[i + 1 : i + 8]
            if rest and rest[0].text == "(":
                rest = rest[1:]
            target = None
            if rest and rest[0].kind == "str":
                target = rest[0]
            else:  # render partial: "x" / render :partial => "x" / render layout: "x"
                for j, t in enumerate(rest[:-1]):
                    if t.text in ("partial", "layout", "template") and rest[j + 1].text in (
                        ":",
                        "=",
                    ):
                        target = next((s for s in rest[j + 1 :] if s.kind == "str"), None)
                        break
            if target is not None and target.value:
                self.doc.imports.append(TemplateImport(target.value, self.lines.at(target.pos)))
        self._calls(toks)

    def _erb_blocks(
        self, toks: list[_Token], start: int, content: int, end: int, tag_end: int
    ) -> None:
        """Rails' named content blocks: ``<% content_for :x do %>`` ... ``<% end %>`` defines x,
        ``yield :x`` and ``content_for?(:x)`` refer to it; other ``do``/``if`` blocks only
        nest."""
        code = self.text[content : min(end, content + MAX_TAG_CHARS)].strip()
        if _ERB_END.match(code):
            self._pop("erb", start)
            return
        opens = bool(_ERB_OPENS.search(code))
        defined = False
        for i, tok in enumerate(toks):
            if tok.kind != "name" or tok.text not in ("content_for", "yield"):
                continue
            name = _erb_symbol(toks, i + 1)
            if name is None:
                continue
            if tok.text == "content_for" and opens and not defined and toks[i + 1].text != "?":
                self._define("erb", "do", name, start, tag_end, opened=True)
                defined = True
            else:
                self.doc.references.append(Reference(name.value, self.lines.at(name.pos), "name"))
        if opens and not defined:
            self._open("erb", "do")

    def _drop_local_imports(self) -> None:
        """A partial or template name the file defines itself (an inline partial, a define) is
        not an import of another file."""
        local = {d.name for d in self.doc.definitions}
        # Hugo's inline partials: {{ define "_partials/x.html" }} is what partial "x.html" calls
        local |= {n.split("/", 1)[1] for n in local if n.startswith(("partials/", "_partials/"))}
        if local:
            self.doc.imports = [i for i in self.doc.imports if i.source not in local]


def _section_name(text: str, start: int, end: int) -> str:
    """The helper or section name after ``{{#``, ``{{^``, ``{{#>`` or ``{{/``."""
    m = re.compile(r"\s*([\w@./-]+)").match(text, start, end)
    return m.group(1) if m else ""


def _erb_symbol(toks: list[_Token], i: int) -> _Token | None:
    """The name in ``:x``, ``(:x``, ``("x"`` or ``?(:x`` at token ``i``."""
    while i < len(toks) and toks[i].text in ("(", "?"):
        i += 1
    if i < len(toks) and toks[i].kind == "str" and toks[i].value:
        return toks[i]
    symbol = i + 1 < len(toks) and toks[i].text == ":" and toks[i + 1].kind == "name"
    if symbol and toks[i + 1].pos == toks[i].pos + 1:
        return toks[i + 1]
    return None


def _strip_after(text: str, pos: int, end: int) -> int:
    while pos < end and text[pos] in " \t\r\n":
        pos += 1
    return pos


def _imported_names(toks: list[_Token]) -> tuple[tuple[str, ...], dict[str, str]]:
    """``a, b as c, d with context`` -> ``("a", "b", "d")`` and ``{"c": "b"}``."""
    names: list[str] = []
    renamed: dict[str, str] = {}
    expect = True
    for k, t in enumerate(toks):
        if t.text in ("with", "without"):
            break
        if t.text == ",":
            expect = True
        elif expect and t.kind == "name":
            names.append(t.text)
            expect = False
        elif t.text == "as" and names and k + 1 < len(toks) and toks[k + 1].kind == "name":
            renamed[toks[k + 1].text] = names[-1]
    return tuple(names), renamed


def _alone(toks: list[_Token], i: int) -> bool:
    """Whether the string at ``i`` is a whole argument, not part of ``"a" ~ x`` or ``"a" + x``."""
    before = toks[i - 1].text if i > 0 else ""
    after = toks[i + 1].text if i + 1 < len(toks) else ""
    return before not in ("~", "+", "|") and after not in ("~", "+", "|", ".", "[", "%")


def _file_like(name: str) -> bool:
    """A template name that is a file name (``partials/x.html``), not only a defined name."""
    base = name.rsplit("/", 1)[-1]
    return "/" in name or bool(re.search(r"\.(?:html?|tmpl|tpl|gohtml|gotmpl|txt|xml|json)$", base))


def scan(text: str, syntaxes: frozenset[str]) -> Document:
    """The definitions, references and imports of one template text."""
    return Scanner(text, syntaxes).run()
