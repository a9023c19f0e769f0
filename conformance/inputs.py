"""The inputs the properties are checked on: fixed ones, and hypothesis strategies.

Generated inputs are arbitrary text, code-like text (brackets, quotes, keywords of several
languages, unicode and control characters), arbitrary bytes, and mutations of the fixture files:
truncation, byte flips, insertions, deleted and duplicated lines.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from hypothesis import strategies as st

_CODE_ALPHABET = list("abcxyzABCXYZ_019 \t\n\r(){}[]<>:;,.=+-*/\\#@$%&|!?'\"`~") + [
    "def ",
    "class ",
    "fn ",
    "func ",
    "end",
    "import ",
    "from ",
    "include",
    "é",
    "π",
    "\u2028",
    "\x00",
    "\ufeff",
    "𝔘",
    "\x0c",
]
_INSERTS = (
    "\n",
    "(",
    ")",
    "{",
    "}",
    "[",
    "]",
    '"',
    "'",
    "`",
    "/*",
    "*/",
    "#",
    "//",
    "\\",
    "\t",
    "\r",
    "\x00",
    "é",
    "\u2028",
    "𝔘",
    "\ufeff",
    "<",
    ">",
    "end\n",
    ":",
    ";",
)
_MUTATIONS = ("truncate", "flip", "insert", "unicode", "delete_line", "duplicate_line")


def code_text() -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(_CODE_ALPHABET), max_size=120).map("".join)


@st.composite
def mutated(draw: Callable[..., Any], seeds: Sequence[bytes]) -> bytes:
    """A fixture with one to three small mutations."""
    data = bytearray(draw(st.sampled_from(list(seeds))))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(_MUTATIONS))
        pos = draw(st.integers(0, len(data)))
        if op == "truncate":
            del data[pos:]
        elif op == "flip" and pos < len(data):
            data[pos] ^= draw(st.integers(1, 255))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(_INSERTS)).encode("utf-8")
        elif op == "unicode":
            data[pos:pos] = draw(st.text(min_size=1, max_size=3)).encode("utf-8", "surrogatepass")
        elif op in ("delete_line", "duplicate_line"):
            start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end + 1
            if op == "delete_line":
                del data[start:end]
            else:
                data[start:start] = data[start:end]
    return bytes(data)


def input_strategies(seeds: Sequence[bytes]) -> list[tuple[str, st.SearchStrategy[bytes]]]:
    found: list[tuple[str, st.SearchStrategy[bytes]]] = [
        (
            "text",
            st.one_of(st.text(max_size=200), code_text()).map(
                lambda s: s.encode("utf-8", "surrogatepass")
            ),
        ),
        ("bytes", st.binary(max_size=300)),
    ]
    if seeds:
        found.append(("mutation", mutated(seeds)))
    return found


def fixed_inputs(seeds: Sequence[bytes]) -> list[bytes]:
    """Inputs every plugin is run on before any generated one: the edge cases, the fixtures."""
    return [b"", b"\n", b"   \n\t\n", b"\xff\xfe\x00", *seeds]
