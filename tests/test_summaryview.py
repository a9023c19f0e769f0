"""Every file's summary as one mapping (repomapper.summaryview): the summaries of files a stored
state was made from are made when first read, once, and what the ranking asks of every file
(its backend, its diagnostics) is answered without making them."""

from __future__ import annotations

import json
import logging

from repomapper.model import Diagnostic, FileSymbols, Tag
from repomapper.summaryview import (
    HeadMade,
    SummaryView,
    all_diagnostics,
    changed_files,
    definitions_of,
    mapped_files,
    same_files,
    with_summaries,
)


def _heads(*paths: str, diagnostics: str = "[]") -> dict:
    return {p: ("python", "python", "", "", "", "", diagnostics) for p in paths}


def _counting(made: list[str]):
    def make(path, head, diagnostics):
        made.append(path)
        tag = Tag(path, 1, 1, path, "def")
        return FileSymbols(path, (tag,), (), (), (), head[0], head[1], diagnostics)

    return make


def test_a_summary_is_made_when_first_read_and_once():
    made: list[str] = []
    base = HeadMade(_heads("a.py", "b.py", "c.py"), _counting(made))
    view = SummaryView({p: base for p in ("a.py", "b.py", "c.py")})
    assert list(view) == ["a.py", "b.py", "c.py"] and len(view) == 3 and "b.py" in view
    assert made == []
    assert view["b.py"] is view["b.py"]
    assert made == ["b.py"]
    assert view.plugin("a.py") == "python" and made == ["b.py"]


def test_backends_and_diagnostics_come_from_the_heads_without_making_summaries():
    made: list[str] = []
    text = json.dumps([["generated", "marked as generated", "info"]])
    base = HeadMade({**_heads("a.py"), **_heads("b.py", diagnostics=text)}, _counting(made))
    other = FileSymbols(
        "c.txt", plugin=None, diagnostics=(Diagnostic("no_backend", "none", "c.txt"),)
    )
    view = SummaryView({"a.py": base, "b.py": base, "c.txt": other})
    generated = Diagnostic("generated", "marked as generated", "b.py", "info")
    assert all_diagnostics(view) == [generated, *other.diagnostics]
    assert list(mapped_files(view)) == ["a.py", "b.py"]
    assert made == []
    assert view["b.py"].diagnostics == (generated,)


def test_unreadable_stored_diagnostics_read_as_none_with_a_warning(caplog):
    base = HeadMade(_heads("a.py", diagnostics="[not json"), _counting([]))
    with caplog.at_level(logging.WARNING):
        assert SummaryView({"a.py": base}).diagnostics_of("a.py") == ()
    assert "a.py" in caplog.text


def test_what_changed_is_found_by_identity_without_making_the_others():
    made: list[str] = []
    paths = [f"m{i}.py" for i in range(6)]
    base = HeadMade(_heads(*paths), _counting(made))
    old = SummaryView(dict.fromkeys(paths, base))
    new_m2 = FileSymbols("m2.py", plugin="python")
    new = old.replacing({"m2.py": new_m2}, paths)
    assert same_files(old, new)
    assert changed_files(old, new) == ["m2.py"]
    assert made == ["m2.py"]  # the old summary of the changed file, compared by identity
    assert changed_files(new, new) == []
    # a summary made from the base and handed in as itself is the same summary
    m3 = old["m3.py"]
    assert changed_files(old, old.replacing({"m3.py": m3}, paths)) == []
    # views and plain mappings agree
    assert changed_files(dict(old), dict(new)) == ["m2.py"]
    assert not same_files(old, SummaryView(dict.fromkeys(paths[:-1], base)))


def test_a_replaced_summary_and_the_definitions_read_through_the_view():
    made: list[str] = []
    base = HeadMade(_heads("a.py", "b.py"), _counting(made))
    view = SummaryView({"a.py": base, "b.py": base})
    copy = FileSymbols("a.py", plugin="python")
    replaced = with_summaries(view, {"a.py": copy}, view)
    assert replaced["a.py"] is copy and list(replaced) == ["a.py", "b.py"]
    plain = {"a.py": view["a.py"]}
    assert with_summaries(plain, {"a.py": copy}, plain) == {"a.py": copy}
    defs = definitions_of(view)
    assert list(defs) == ["a.py", "b.py"] and made == ["a.py"]
    assert [t.name for t in defs["b.py"]] == ["b.py"]
    assert made == ["a.py", "b.py"]


def test_a_head_without_a_backend_is_not_mapped():
    heads = {**_heads("a.py"), "b.txt": (None, None, "", "", "", "", "[]")}
    base = HeadMade(heads, _counting([]))
    view = SummaryView({"a.py": base, "b.txt": base})
    assert not base.all_mapped
    assert list(mapped_files(view)) == ["a.py"]
    assert list(view.plugins()) == [("a.py", "python"), ("b.txt", None)]


def test_a_transient_read_makes_an_equal_summary_and_keeps_nothing():
    """A pass over every file (the lexical index's) reads each summary without the view
    keeping it: a large tree's every definition is never held at once; a summary made before
    is the one returned."""
    from repomapper.cache import CacheKey
    from repomapper.relevance.lexical import LexicalIndex

    made: list[str] = []
    base = HeadMade(_heads("a.py", "b.py"), _counting(made))
    view = SummaryView({"a.py": base, "b.py": base})
    kept = view["a.py"]
    assert view.transient("a.py") is kept
    assert view.transient("b.py") == view.transient("b.py") != view.transient("a.py")
    assert made == ["a.py", "b.py", "b.py"]
    index = LexicalIndex()
    index.update({p: CacheKey(p, 1, 1, "fp") for p in view}, view, lambda p: b"x = 1\n")
    assert index.indexed == 2 and base._made == {"a.py": kept}
    assert set(index.score({"py": 1})[0]) == {"a.py", "b.py"}
