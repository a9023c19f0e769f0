"""A message the task shows (after an error class, or quoted) points at the code that prints
it: the definition holding that string is named evidence (repomapper.relevance.symbols)."""

from __future__ import annotations

from repomapper import RepoMap
from repomapper.cache import CacheKey
from repomapper.model import SymbolKind, Tag
from repomapper.relevance.lexical import LexicalIndex
from repomapper.relevance.messages import MAX_HOLDERS, message_files
from repomapper.relevance.query import MAX_MESSAGES, quoted_messages
from repomapper.relevance.symbol_weights import shipped_symbol_weights
from repomapper.relevance.symbols import (
    MAX_MESSAGE_HOLDERS,
    MESSAGE,
    score_symbols,
)

MESSAGE_WEIGHT = shipped_symbol_weights().message


def _fn(name: str, start: int, end: int, path: str = "m.py") -> Tag:
    return Tag(path, start, end, name, "def", SymbolKind.FUNCTION)


def test_messages_are_the_plain_word_runs_of_error_lines_and_quoted_text():
    text = (
        "Saving fails\n"
        "Traceback (most recent call last):\n"
        "ValueError: Unknown format code 'd' for object of type 'str'\n"
        'it also says "Cannot resolve keyword into field" and "too short"\n'
        "error: the connection was reset by peer 123 times\n"
        "ValueError: x\n"
    )
    assert quoted_messages(text) == (
        "Unknown format code",  # the values the program formatted in split the message
        "for object of type",
        "the connection was reset by peer",
        "Cannot resolve keyword into field",
    )
    assert quoted_messages("no message here, only `short` words") == ()
    # strings of pasted code or configuration are the reporter's values, not a message;
    # apostrophes inside words and escaped quotes of a printed string open no quote
    pasted = '```toml\nKEY="already set and tested in a script"\n```\n'
    assert quoted_messages(pasted + "it won't work, we can't say why at all") == ()
    assert quoted_messages("log: {'prompt': 'You\\'re an engineer. You can\\'t stop'}") == ()
    many = "\n".join(f"error: message number {'x' * i} has words" for i in range(40))
    assert len(quoted_messages(many)) == MAX_MESSAGES


def test_the_definition_holding_a_message_gets_named_evidence_once_per_message():
    text = (
        "def check(mode):\n"
        "    raise ValueError(f'Unknown widget mode {mode}: expected one of a, b')\n"
        "\n"
        "def other():\n"
        "    return 1\n"
    )
    defs = {"m.py": [_fn("check", 1, 2), _fn("other", 4, 5)]}
    messages = ("Unknown widget mode", "expected one of a, b")  # runs of one message
    got = score_symbols([("m.py", 1.0)], defs, {}, {}, lambda p: text.encode(), messages)
    assert got.scores == {("m.py", "check", 1): MESSAGE_WEIGHT}
    (reason,) = got.reasons[("m.py", "check", 1)]
    assert reason.signal == MESSAGE and reason.weight == MESSAGE_WEIGHT
    without = score_symbols([("m.py", 1.0)], defs, {}, {}, lambda p: text.encode())
    assert ("m.py", "check", 1) not in without.scores


def test_a_message_many_definitions_print_says_nothing():
    n = MAX_MESSAGE_HOLDERS + 1
    text = "".join(f"def f{i}():\n    log('could not open the file')\n" for i in range(n))
    defs = {"m.py": [_fn(f"f{i}", 2 * i + 1, 2 * i + 2) for i in range(n)]}
    got = score_symbols(
        [("m.py", 1.0)], defs, {}, {}, lambda p: text.encode(), ("could not open the file",)
    )
    assert got.scores == {}
    two = score_symbols(
        [("m.py", 1.0)],
        {"m.py": defs["m.py"][:2]},
        {},
        {},
        lambda p: text.encode(),
        ("could not open the file",),
    )
    assert two.scores == {
        ("m.py", "f0", 1): MESSAGE_WEIGHT / 2,
        ("m.py", "f1", 3): MESSAGE_WEIGHT / 2,
    }


def test_the_function_that_prints_the_message_leads_ranked_symbols(make_tree):
    root = make_tree(
        {
            "pkg/widgets.py": (
                "def render(mode):\n"
                "    if mode not in ('a', 'b'):\n"
                "        raise ValueError(f'Unknown widget mode {mode!r}: expected a or b')\n"
                "    return mode\n\n\n"
                "def render_all(modes):\n"
                "    return [render_widget_mode(m) for m in modes]\n"
            ),
            "pkg/util.py": "def render_widget_mode(m):\n    return m\n",
        }
    )
    result = RepoMap(root, 500, use_cache=False).map(
        task="Rendering a widget mode fails\n\nValueError: Unknown widget mode 'c': expected a or b"
    )
    first = result.ranked_symbols[0]
    assert (first.path, first.name) == ("pkg/widgets.py", "render")
    assert any(r.signal == MESSAGE for r in first.why)


def test_each_place_of_a_message_goes_to_the_definition_holding_its_line():
    """Lines are counted on from one place to the next: the second and third places land in
    their own definitions, and a place outside every definition points at none."""
    said = "    log('the same words over and over')\n"
    text = said + "def f():\n" + said + "    pass\n\ndef g():\n    x = 1\n" + said
    defs = {"m.py": [_fn("f", 2, 4), _fn("g", 6, 8)]}
    got = score_symbols(
        [("m.py", 1.0)],
        defs,
        {},
        {},
        lambda p: text.encode(),
        ("the same words over and over",),
    )
    half = MESSAGE_WEIGHT / 2
    assert got.scores == {("m.py", "f", 2): half, ("m.py", "g", 6): half}


def _indexed(files: dict[str, str]) -> LexicalIndex:
    index = LexicalIndex()
    keys = {p: CacheKey(p, 0, len(t), "fp", f"d{i}") for i, (p, t) in enumerate(files.items())}
    index.update(keys, {}, lambda p: files[p].encode())
    return index


def test_the_code_files_holding_a_message_get_the_file_feature():
    files = {
        "pkg/widgets.py": "raise ValueError(f'Unknown widget mode {m}: expected a or b')\n",
        "pkg/forms.py": "# Unknown mode of a widget: the words, not the message\n",
        "tests/test_widgets.py": "assert str(e) == 'Unknown widget mode c: expected a or b'\n",
        "pkg/many.py": "".join(f"x{i} = 'printed by {i} files here'\n" for i in range(3)),
    }
    for i in range(MAX_HOLDERS + 1):
        files[f"pkg/common{i}.py"] = "log('printed by many files here')\n"
    index = _indexed(files)
    messages = ("Unknown widget mode", "printed by many files here", "nowhere in the code at all")
    got = message_files(messages, index, {}, set(files), index.read)
    # the test repeating the message neither holds it nor dilutes the file that prints it;
    # a message more than MAX_HOLDERS code files print points at none of them
    assert got == {"pkg/widgets.py": (1.0, "Unknown widget mode")}
    two = {**files, "pkg/other.py": "raise KeyError('Unknown widget mode')\n"}
    other = _indexed(two)
    got = message_files(messages[:1], other, {}, set(two), other.read)
    assert got == {p: (0.5, "Unknown widget mode") for p in ("pkg/other.py", "pkg/widgets.py")}
    # files outside the ranked paths are not holders; no messages or no reader: nothing
    assert message_files(messages[:1], index, {}, {"pkg/forms.py"}, index.read) == {}
    assert message_files((), index, {}, set(files), index.read) == {}
    assert message_files(messages, index, {}, set(files), None) == {}


def test_the_file_that_prints_the_message_says_so_in_its_reasons(make_tree):
    root = make_tree(
        {
            "pkg/widgets.py": "def render(mode):\n    raise ValueError('Unknown widget mode')\n",
            "pkg/modes.py": "def widget_mode(mode):\n    return mode  # unknown widget mode\n",
        }
    )
    result = RepoMap(root, 500, use_cache=False).map(
        task="Widget mode\n\nValueError: Unknown widget mode"
    )
    by_path = {f.path: f for f in result.ranked_files}
    held = [r for r in by_path["pkg/widgets.py"].why if r.signal == MESSAGE]
    assert [r.detail for r in held] == ["Unknown widget mode"]
    assert not any(r.signal == MESSAGE for r in by_path["pkg/modes.py"].why)
