"""A small GraphQL reader: definitions, type references and ``# import`` comments, with lines.

It reads both halves of the language, the schema definition language (SDL: ``type``,
``interface``, ``enum``, ``input``, ``union``, ``scalar``, ``directive``, ``schema`` and their
``extend`` forms) and executable documents (``query``/``mutation``/``subscription`` operations and
``fragment``\\ s), in two passes:

1. :func:`tokenize` follows the lexical grammar of the GraphQL specification (October 2021):
   names, punctuators, numbers, ``"strings"`` and ``\"\"\"block strings\"\"\"``; ``#`` comments
   are set aside (they may carry imports) and never reach the reader, and nothing inside a
   string is ever read as code. Line terminators are ``\\r\\n``, ``\\r`` and ``\\n``.
2. :func:`parse_document` walks the tokens once, with an explicit cursor and no recursion, so
   deep nesting cannot overflow the stack and the work is linear in the size of the input.

It never raises. On malformed input it skips what it does not understand; a definition keyword
at the start of a line (``type User {`` at column 0) inside an unterminated block ends that block,
so one missing ``}`` does not swallow the rest of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: Keywords that open a top-level definition.
TYPE_KEYWORDS = frozenset({"type", "interface", "input", "enum", "union", "scalar"})
OPERATION_KEYWORDS = frozenset({"query", "mutation", "subscription"})
OTHER_KEYWORDS = frozenset({"schema", "directive", "extend", "fragment"})
DEFINITION_KEYWORDS = TYPE_KEYWORDS | OPERATION_KEYWORDS | OTHER_KEYWORDS
#: What each definition keyword is, as a repomapper symbol kind.
SYMBOL_KINDS = {
    "type": "class",
    "input": "class",
    "interface": "interface",
    "enum": "enum",
    "union": "type",
    "scalar": "type",
    "schema": "module",
    "directive": "function",
    "query": "function",
    "mutation": "function",
    "subscription": "function",
    "fragment": "function",
}
#: Built into every schema; a reference to one says nothing about the repository.
BUILTIN_SCALARS = frozenset({"Int", "Float", "String", "Boolean", "ID"})
BUILTIN_DIRECTIVES = frozenset(
    {"skip", "include", "deprecated", "specifiedBy", "oneOf", "defer", "stream"}
)
MAX_SIGNATURE = 240
MAX_DOCSTRING = 500

# Token kinds.
NAME, PUNCT, STRING, BLOCK, NUMBER, OTHER = "name", "punct", "string", "block", "number", "other"

_LEXEME = re.compile(
    r"""
      (?P<newline>\r\n|\r|\n)
    | (?P<space>[ \t\ufeff]+)
    | (?P<comment>\#[^\r\n]*)
    | (?P<block>""\")
    | (?P<string>"(?:[^"\\\r\n]|\\[^\r\n])*"?)
    | (?P<name>[_A-Za-z][_0-9A-Za-z]*)
    | (?P<number>-?[0-9]+(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    | (?P<punct>\.\.\.|[!$&():=@\[\]{}|,])
    | (?P<other>.)
    """,
    re.VERBOSE | re.DOTALL,
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_IMPORTED_NAME = re.compile(r"[_A-Za-z*][_0-9A-Za-z.*]*")
_ESCAPE = re.compile(r"\\(u\{[0-9A-Fa-f]{1,8}\}|u[0-9A-Fa-f]{4}|.)", re.DOTALL)
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # NAME, PUNCT, STRING, BLOCK, NUMBER or OTHER
    text: str  # exactly as written
    line: int  # 1-based line of its first character
    end_line: int  # line of its last character (a block string may span lines)
    column: int  # 0-based, in characters


@dataclass(frozen=True, slots=True)
class Comment:
    text: str  # after the '#'
    line: int
    own_line: bool  # nothing but whitespace before it on its line


@dataclass(frozen=True, slots=True)
class Definition:
    name: str
    symbol_kind: str
    start_line: int  # the line of the name
    end_line: int
    scope: str  # the enclosing type for fields and enum values, else ""
    signature: str
    doc: str | None = None


@dataclass(frozen=True, slots=True)
class Reference:
    name: str
    line: int
    kind: str  # "type" (a named type) or "call" (a fragment spread or a directive)


@dataclass(frozen=True, slots=True)
class ImportComment:
    path: str  # as written between the quotes
    names: tuple[str, ...]  # ("*",) for everything
    line: int


@dataclass(frozen=True, slots=True)
class Document:
    definitions: tuple[Definition, ...]
    references: tuple[Reference, ...]
    imports: tuple[ImportComment, ...]
    problems: tuple[str, ...]  # what was malformed, for a warning; never raised


def tokenize(text: str) -> tuple[list[Token], list[Comment], list[str]]:
    """Split ``text`` into tokens and comments; the third item lists lexical problems."""
    tokens: list[Token] = []
    comments: list[Comment] = []
    problems: list[str] = []
    line, line_start, pos, n = 1, 0, 0, len(text)
    line_has_token = False
    while pos < n:
        m = _LEXEME.match(text, pos)
        if m is None:  # cannot happen ('other' matches any character); stay total anyway
            break
        kind = m.lastgroup
        column = pos - line_start
        end = m.end()
        if kind == "newline":
            line, line_start, line_has_token = line + 1, end, False
        elif kind == "space":
            pass
        elif kind == "comment":
            comments.append(Comment(m.group()[1:], line, not line_has_token))
        elif kind == "block":
            end, closed = _block_string_end(text, end)
            body = text[pos:end]
            breaks = list(_LINE_BREAK.finditer(body))
            if not closed:
                problems.append(f"unterminated block string at line {line}")
            tokens.append(Token(BLOCK, body, line, line + len(breaks), column))
            if breaks:
                line += len(breaks)
                line_start = pos + breaks[-1].end()
            line_has_token = True
        else:
            word = m.group()
            if kind == "string" and (len(word) < 2 or not word.endswith('"')):
                problems.append(f"unterminated string at line {line}")
            tokens.append(Token(kind, word, line, line, column))
            line_has_token = True
        pos = end
    return tokens, comments, problems


def _block_string_end(text: str, start: int) -> tuple[int, bool]:
    """The offset just past the ``\"\"\"`` closing a block string whose body starts at ``start``
    and whether there is one (else the string runs to the end of ``text``). ``\\\"\"\"`` is an
    escaped quote, not an end."""
    pos = start
    while True:
        close = text.find('"""', pos)
        if close < 0:
            return len(text), False
        if close > start and text[close - 1] == "\\":
            pos = close + 3
            continue
        return close + 3, True


# -- string values (descriptions) ------------------------------------------------------------


def block_string_value(raw: str) -> str:
    """The value of a block string token (``raw`` includes the quotes), as the spec defines it:
    common indentation removed, leading and trailing blank lines dropped."""
    body = raw[3:-3] if raw.endswith('"""') and len(raw) >= 6 else raw[3:]
    lines = _LINE_BREAK.split(body.replace('\\"""', '"""'))
    indents = [len(x) - len(x.lstrip(" \t")) for x in lines[1:] if x.strip(" \t")]
    common = min(indents, default=0)
    lines = [lines[0], *(x[common:] for x in lines[1:])]
    blank = [not x.strip(" \t") for x in lines]
    first = blank.index(False) if False in blank else len(lines)
    last = len(lines) - (blank[::-1].index(False) if False in blank else len(lines))
    return "\n".join(lines[first:last])


def string_value(raw: str) -> str:
    """The value of a ``"string"`` token (``raw`` includes the quotes), escapes decoded."""
    body = raw[1:-1] if len(raw) >= 2 and raw.endswith('"') else raw[1:]
    value = _ESCAPE.sub(_unescape, body)
    # escaped surrogate pairs ("\\uD83D\\uDE00") become one character, lone halves U+FFFD
    return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def _unescape(m: re.Match[str]) -> str:
    esc = m.group(1)
    if esc.startswith("u") and len(esc) > 1:
        code = int(esc[2:-1] if esc.startswith("u{") else esc[1:], 16)
        return chr(code) if code <= 0x10FFFF else "\ufffd"
    return _SIMPLE_ESCAPES.get(esc, esc)


def _docstring(token: Token | None) -> str | None:
    if token is None:
        return None
    value = block_string_value(token.text) if token.kind == BLOCK else string_value(token.text)
    first_paragraph = re.split(r"\n[ \t]*\n", value.strip(), maxsplit=1)[0].strip()
    return first_paragraph[:MAX_DOCSTRING] or None


# -- signatures ------------------------------------------------------------------------------

_NO_SPACE_AFTER = frozenset({"(", "[", "{", "@", "$"})
_NO_SPACE_BEFORE = frozenset({")", "]", "}", "!", ":", ","})
_OPENERS, _CLOSERS = frozenset("([{"), frozenset(")]}")


def render(tokens: list[Token]) -> str:
    """Tokens as one line of canonical GraphQL: comments dropped, whitespace normalised, and
    items that were separated by line breaks inside brackets separated by commas."""
    out: list[str] = []
    depth = 0
    prev: Token | None = None
    for t in tokens:
        text = " ".join(t.text.split()) if t.kind == BLOCK else t.text
        if prev is not None:
            if (
                depth > 0
                and t.line > prev.end_line
                and prev.text not in _OPENERS
                and prev.text not in ("=", ":", ",", "|", "&", "@", "$")
                and text not in _CLOSERS
                and text not in ("=", ":", ",", "|", "&", "!")
            ):
                out.append(", ")
            elif (
                prev.text not in _NO_SPACE_AFTER
                and text not in _NO_SPACE_BEFORE
                and not (text == "(" and prev.kind == NAME)  # 'posts(first: Int)'
            ):
                out.append(" ")
        out.append(text)
        if text in _OPENERS:
            depth += 1
        elif text in _CLOSERS:
            depth = max(0, depth - 1)
        prev = t
    return "".join(out)[:MAX_SIGNATURE]


# -- the reader ------------------------------------------------------------------------------


class _Reader:
    """One pass over the tokens. Every method advances or returns, so every loop ends."""

    def __init__(self, tokens: list[Token]):
        self.tokens = tokens
        self.pos = 0
        self.last_line = 1  # end line of the last token consumed
        self.defs: list[Definition] = []
        self.refs: list[Reference] = []
        self.problems: list[str] = []

    # cursor ---------------------------------------------------------------------------------

    def peek(self, ahead: int = 0) -> Token | None:
        i = self.pos + ahead
        return self.tokens[i] if i < len(self.tokens) else None

    def at(self, text: str, ahead: int = 0) -> bool:
        t = self.peek(ahead)
        return t is not None and t.kind == PUNCT and t.text == text

    def at_name(self, ahead: int = 0) -> bool:
        t = self.peek(ahead)
        return t is not None and t.kind == NAME

    def advance(self) -> Token:
        t = self.tokens[self.pos]
        self.pos += 1
        self.last_line = t.end_line
        return t

    def at_definition_start(self) -> bool:
        """A definition keyword at column 0 followed by a name (or ``@``/``{`` where the
        grammar allows it): the next definition, even inside a block left open."""
        t = self.peek()
        if t is None or t.kind != NAME or t.column != 0 or t.text not in DEFINITION_KEYWORDS:
            return False
        if self.at_name(1):
            return True
        if t.text == "directive":
            return self.at("@", 1)
        if t.text == "schema" or t.text in OPERATION_KEYWORDS:
            return self.at("{", 1) or self.at("@", 1)
        return False

    # output ---------------------------------------------------------------------------------

    def ref(self, token: Token, kind: str = "type") -> None:
        name = token.text
        if name.startswith("__") or (kind == "type" and name in BUILTIN_SCALARS):
            return
        self.refs.append(Reference(name, token.line, kind))

    def define(
        self, name: Token, kind: str, first: int, scope: str = "", doc: Token | None = None
    ) -> None:
        """Record a definition spanning tokens ``first`` to the last one consumed."""
        last = max(first, self.pos - 1)
        signature = render(self.tokens[first : last + 1])
        self.defs.append(
            Definition(
                name.text,
                kind,
                name.line,
                max(name.line, self.last_line),
                scope,
                signature,
                _docstring(doc),
            )
        )

    # pieces of syntax -----------------------------------------------------------------------

    def skip_group(self) -> None:
        """Skip a bracketed group (argument values, object and list literals) at the cursor."""
        depth = 0
        while (t := self.peek()) is not None:
            if depth > 0 and self.at_definition_start():
                return
            if t.kind == PUNCT and t.text in _OPENERS:
                depth += 1
            elif t.kind == PUNCT and t.text in _CLOSERS:
                depth -= 1
            self.advance()
            if depth <= 0:
                return

    def skip_value(self) -> None:
        t = self.peek()
        if t is None or self.at_definition_start():
            return
        if t.kind == PUNCT and t.text in _OPENERS:
            self.skip_group()
        elif t.kind == PUNCT and t.text == "$":
            self.advance()
            if self.at_name():
                self.advance()
        elif not (t.kind == PUNCT and t.text in _CLOSERS):
            self.advance()

    def type_reference(self) -> None:
        """``Name``, ``[Name!]!`` and so on: a reference to the named type."""
        while self.at("["):
            self.advance()
        if self.at_name() and not self.at_definition_start():
            self.ref(self.advance())
        while self.at("!") or self.at("]"):
            self.advance()

    def directives(self) -> None:
        """``@name(args)`` after a definition or a selection: a reference to the directive."""
        while self.at("@"):
            self.advance()
            if self.at_name() and not self.at_definition_start():
                name = self.advance()
                if name.text not in BUILTIN_DIRECTIVES:
                    self.ref(name, "call")
            if self.at("("):
                self.skip_group()

    def input_values(self) -> None:
        """``(name: Type = default @dir, ...)``: argument or variable definitions."""
        self.advance()  # '('
        while (t := self.peek()) is not None and not self.at_definition_start():
            if t.kind == PUNCT and t.text == ")":
                self.advance()
                return
            if t.kind == PUNCT and t.text == ":":
                self.advance()
                self.type_reference()
            elif t.kind == PUNCT and t.text == "=":
                self.advance()
                self.skip_value()
            elif t.kind == PUNCT and t.text == "@":
                self.directives()
            elif t.kind == PUNCT and t.text in ("{", "}"):
                return  # ')' is missing; leave the brace to the caller
            else:
                self.advance()

    def implements(self) -> None:
        self.advance()  # 'implements'
        while not self.at_definition_start():
            if self.at("&"):
                self.advance()
            elif self.at_name():
                self.ref(self.advance())
            else:
                return

    def block_end(self, what: str, opened: Token) -> None:
        """Consume the ``}`` closing a block, or note that it is missing."""
        if self.at("}"):
            self.advance()
        else:
            self.problems.append(f"'{{' of {what} at line {opened.line} is never closed")

    # definitions ----------------------------------------------------------------------------

    def document(self) -> None:
        while (t := self.peek()) is not None:
            doc = None
            if t.kind in (STRING, BLOCK):
                doc = self.advance()
                t = self.peek()
                if t is None:
                    return
            if t.kind == PUNCT and t.text == "{":
                self.selection_set()  # an anonymous query
            elif t.kind != NAME:
                self.advance()
            elif t.text in TYPE_KEYWORDS or t.text in ("schema", "directive"):
                self.type_system(self.pos, doc)
            elif t.text == "extend" and self.at_name(1):
                self.type_system(self.pos, None, extend=True)
            elif t.text in OPERATION_KEYWORDS:
                self.operation()
            elif t.text == "fragment":
                self.fragment()
            else:
                self.advance()

    def type_system(self, first: int, doc: Token | None, extend: bool = False) -> None:
        if extend:
            self.advance()  # 'extend'
        keyword = self.advance().text
        if keyword == "schema":
            self.schema(first, doc)
            return
        if keyword == "directive":
            self.directive_definition(first, doc)
            return
        if keyword not in TYPE_KEYWORDS or not self.at_name() or self.at_definition_start():
            return  # 'extend foo', a keyword without a name: nothing to define
        name = self.advance()
        if self.at_name() and self.peek().text == "implements":  # type: ignore[union-attr]
            self.implements()
        self.directives()
        if keyword == "union":
            self.union_members()
        elif keyword != "scalar" and self.at("{"):
            brace = self.pos
            opened = self.advance()
            if keyword == "enum":
                self.enum_values(name.text)
            else:
                self.fields(name.text)
            self.block_end(f"{keyword} {name.text}", opened)
            # the signature is the header; the span runs to the closing brace
            sig = render(self.tokens[first:brace])
            self.defs.append(
                Definition(
                    name.text,
                    SYMBOL_KINDS[keyword],
                    name.line,
                    max(name.line, self.last_line),
                    "",
                    sig,
                    _docstring(doc),
                )
            )
            return
        self.define(name, SYMBOL_KINDS[keyword], first, doc=doc)

    def union_members(self) -> None:
        if not self.at("="):
            return
        self.advance()
        while not self.at_definition_start():
            if self.at("|"):
                self.advance()
            elif self.at_name():
                self.ref(self.advance())
            else:
                return

    def fields(self, scope: str) -> None:
        """The body of a ``type``, ``interface`` or ``input``: field definitions."""
        while (t := self.peek()) is not None and not self.at_definition_start():
            if t.kind == PUNCT and t.text == "}":
                return
            doc = None
            if t.kind in (STRING, BLOCK):  # a description: it documents the field after it
                doc = self.advance()
                t = self.peek()
                if t is None or t.kind != NAME:
                    continue
            if t.kind == NAME and (self.at(":", 1) or self.at("(", 1)):
                first = self.pos
                name = self.advance()
                if self.at("("):
                    self.input_values()
                if self.at(":"):
                    self.advance()
                    self.type_reference()
                if self.at("="):
                    self.advance()
                    self.skip_value()
                self.directives()
                self.define(name, "field", first, scope, doc)
            else:
                self.advance()

    def enum_values(self, scope: str) -> None:
        while (t := self.peek()) is not None and not self.at_definition_start():
            if t.kind == PUNCT and t.text == "}":
                return
            doc = None
            if t.kind in (STRING, BLOCK):
                doc = self.advance()
                t = self.peek()
                if t is None or t.kind != NAME:
                    continue
            if t.kind == NAME:
                first = self.pos
                name = self.advance()
                self.directives()
                self.define(name, "constant", first, scope, doc)
            else:
                self.advance()

    def schema(self, first: int, doc: Token | None) -> None:
        keyword = self.tokens[self.pos - 1]
        self.directives()
        header_end = self.pos
        if self.at("{"):
            opened = self.advance()
            while (t := self.peek()) is not None and not self.at_definition_start():
                if t.kind == PUNCT and t.text == "}":
                    break
                if t.kind == PUNCT and t.text == ":":
                    self.advance()
                    if self.at_name():
                        self.ref(self.advance())
                else:
                    self.advance()
            self.block_end("schema", opened)
        sig = render(self.tokens[first:header_end])
        self.defs.append(
            Definition(
                "schema",
                SYMBOL_KINDS["schema"],
                keyword.line,
                max(keyword.line, self.last_line),
                "",
                sig,
                _docstring(doc),
            )
        )

    def directive_definition(self, first: int, doc: Token | None) -> None:
        if not self.at("@") or not self.at_name(1):
            return
        self.advance()
        name = self.advance()
        if self.at("("):
            self.input_values()
        if self.at_name() and self.peek().text == "repeatable":  # type: ignore[union-attr]
            self.advance()
        if self.at_name() and self.peek().text == "on":  # type: ignore[union-attr]
            self.advance()
            while not self.at_definition_start() and (self.at("|") or self.at_name()):
                location = self.advance()
                if location.kind == NAME and not self.at("|"):
                    break
        self.define(name, SYMBOL_KINDS["directive"], first, doc=doc)

    def operation(self) -> None:
        first = self.pos
        keyword = self.advance().text
        name = self.advance() if self.at_name() and not self.at_definition_start() else None
        if self.at("("):
            self.input_values()
        self.directives()
        header_end = self.pos
        if self.at("{"):
            self.selection_set()
        if name is not None:
            self._block_definition(name, keyword, first, header_end)

    def fragment(self) -> None:
        first = self.pos
        self.advance()  # 'fragment'
        if not self.at_name() or self.at_definition_start():
            return
        name = self.advance()
        if self.at_name() and self.peek().text == "on":  # type: ignore[union-attr]
            self.advance()
            if self.at_name() and not self.at_definition_start():
                self.ref(self.advance())
        self.directives()
        header_end = self.pos
        if self.at("{"):
            self.selection_set()
        self._block_definition(name, "fragment", first, header_end)

    def _block_definition(self, name: Token, keyword: str, first: int, header_end: int) -> None:
        self.defs.append(
            Definition(
                name.text,
                SYMBOL_KINDS[keyword],
                name.line,
                max(name.line, self.last_line),
                "",
                render(self.tokens[first:header_end]),
            )
        )

    def selection_set(self) -> None:
        """``{ field(args) { ... } ...Spread ... on Type { ... } }``, iteratively."""
        opened = self.advance()  # '{'
        depth = 1
        while (t := self.peek()) is not None:
            if self.at_definition_start():
                break
            if t.kind == PUNCT and t.text == "{":
                depth += 1
            elif t.kind == PUNCT and t.text == "}":
                depth -= 1
                if depth == 0:
                    self.advance()
                    return
            elif t.kind == PUNCT and t.text == "...":
                self.advance()
                if self.at_name() and self.peek().text == "on":  # type: ignore[union-attr]
                    self.advance()
                    if self.at_name():
                        self.ref(self.advance())
                elif self.at_name():
                    self.ref(self.advance(), "call")
                continue
            elif t.kind == PUNCT and t.text == "@":
                self.directives()
                continue
            self.advance()
        self.problems.append(f"selection set opened at line {opened.line} is never closed")


def import_comment(text: str, line: int) -> ImportComment | None:
    """``text`` (a comment without its ``#``) as an import, if it is one::

        import "./fragments.graphql"             graphql-tag / Apollo loader: everything
        import * from "./fragments.graphql"      graphql-import: everything
        import User, Post from '../types.graphql'  graphql-import: the listed names

    A hand-written scan rather than one regular expression: linear on any comment.
    """
    body = text.strip(" \t\ufeff")
    if not body.startswith("import") or body[6:7] not in (" ", "\t"):
        return None
    rest = body[6:].lstrip(" \t")
    quote = min((i for i in (rest.find('"'), rest.find("'")) if i >= 0), default=-1)
    if quote < 0:
        return None
    close = rest.find(rest[quote], quote + 1)
    path = rest[quote + 1 : close] if close > 0 else ""
    if not path.strip():
        return None
    head = rest[:quote].rstrip(" \t")
    if head:  # 'A, B from': the word 'from', after whitespace unless there are no names
        if head != "from" and not (head.endswith("from") and head[-5:-4] in (" ", "\t")):
            return None
        head = head[:-4]
    names = tuple(_IMPORTED_NAME.findall(head))
    return ImportComment(path, names or ("*",), line)


def _imports(comments: list[Comment]) -> list[ImportComment]:
    found = []
    for c in comments:
        imp = import_comment(c.text, c.line) if c.own_line else None
        if imp is not None:
            found.append(imp)
    return found


def parse_document(text: str) -> Document:
    """Read ``text`` (a whole ``.graphql`` file) into definitions, references and imports."""
    tokens, comments, problems = tokenize(text)
    reader = _Reader(tokens)
    reader.document()
    return Document(
        tuple(reader.defs),
        tuple(dict.fromkeys(reader.refs)),
        tuple(dict.fromkeys(_imports(comments))),
        tuple(problems + reader.problems),
    )
