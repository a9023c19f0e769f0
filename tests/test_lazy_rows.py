"""The sequences that make their items when read behave as the sequences their types declare."""

from __future__ import annotations

import json
import pickle
import sys

from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper.definitions import FileRows, RowsAt
from repomapper.model import NameFacts, Tag, name_facts
from repomapper.rowtext import Deferred, RowTags, Text


def _rows_text() -> str:
    tag = Tag("a.py", 3, 5, "f", "def", "function", "", "def f()", None, None)
    return json.dumps([tag.to_row()])


class _Interleaved(RowTags):
    """Another reader finishes making the items after this one found them unmade and before
    it goes on: two threads reading one row at once."""

    __slots__ = ("_raced",)

    def __init__(self, path: str, text: Text) -> None:
        super().__init__(path, text)
        self._raced = False

    def _make(self, source: Text) -> tuple[Tag, ...]:
        if not self._raced:
            self._raced = True
            assert len(self._all()) == 1  # the other reader, to the end
        return super()._make(source)


def test_a_row_read_by_two_readers_at_once_keeps_its_items() -> None:
    rows = _Interleaved("a.py", _rows_text)
    assert [t.name for t in rows] == ["f"]
    assert [t.name for t in rows] == ["f"]  # not replaced by an empty row


def test_a_row_made_by_another_reader_gives_its_facts() -> None:
    rows = RowTags("a.py", _rows_text())
    assert rows.facts() == [("f", "function", "")]
    assert len(rows) == 1
    assert rows.facts() == [("f", "function", "")]


def test_rows_at_slices_as_a_sequence() -> None:
    a = FileRows(("x",), (1.0,), (0,), (False,), {"x": 0})
    b = FileRows(("y",), (1.0,), (), (True,), {"y": 0})
    at = RowsAt(["b.py", "a.py"], {"a.py": a, "b.py": b})
    assert at[0] is b
    assert list(at[0:2]) == [b, a]
    assert list(at[1:]) == [a]
    assert list(reversed(at)) == [a, b]


_FIELD = st.one_of(st.none(), st.integers(0, 9), st.sampled_from(["f", "g", "function", "", "C"]))


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.lists(st.lists(_FIELD, min_size=0, max_size=11), max_size=4),
        st.lists(st.text(max_size=6), max_size=3),
        st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
        st.integers(),
        st.none(),
    )
)
def test_facts_read_from_rows_are_the_facts_of_the_tags_they_make(rows: object) -> None:
    text = json.dumps(rows)
    made = RowTags("a.py", text)
    try:
        expected = [(t.name, str(t.symbol_kind), t.scope) for t in made]
    except TypeError:  # str() of a kind that is not one: the tags' facts are not defined
        return
    assert RowTags("a.py", text).facts() == expected


def test_a_text_that_can_be_read_again_is_let_go_once_its_facts_are_read() -> None:
    reads: list[int] = []

    def again() -> str:
        reads.append(1)
        return _rows_text()

    rows = RowTags("a.py", _rows_text(), again)
    assert rows.facts() == [("f", "function", "")]
    assert rows._text is again and reads == []  # the text is gone, nothing read yet
    assert [t.name for t in rows] == ["f"] and reads == [1]  # a map shows the file


def test_a_row_that_came_with_its_name_facts_lets_its_text_go_unread() -> None:
    reads: list[int] = []

    def again() -> str:
        reads.append(1)
        return _rows_text()

    facts = RowTags("a.py", _rows_text()).name_facts()
    # a worker sends the facts with the text; pickled, the names arrive interned
    sent = pickle.loads(pickle.dumps(RowTags("a.py", _rows_text(), names=facts)))
    assert sent.name_facts() == facts
    made = NameFacts(("".join(["inter", "ned_name"]),), b"\x00", b"\x01")
    assert pickle.loads(pickle.dumps(made)).names[0] is sys.intern("interned_name")
    sent.refetch_with(again)
    assert sent._text is again and reads == []  # let go without parsing it
    assert sent.name_facts() == facts and reads == []
    assert [t.name for t in sent] == ["f"] and reads == [1]  # a map shows the file
    empty = RowTags("b.py", "[]", names=RowTags("b.py", "[]").name_facts())
    empty.refetch_with(again)
    assert list(empty) == [] and reads == [1]  # no definitions: nothing to read again


def test_a_deferred_rows_parts_are_handed_out_once_and_read_again_when_asked_again() -> None:
    fetched: list[int] = []

    def fetch() -> tuple[str, str, str]:
        fetched.append(1)
        return ("D", "S", "I")

    row = Deferred("a.py", fetch)
    assert (row.definitions(), row.summary()) == ("D", "S") and len(fetched) == 1
    assert row.imports() == "I" and len(fetched) == 1
    assert row._texts is None  # every part handed out: nothing kept
    assert row.definitions() == "D" and len(fetched) == 2


def test_name_facts_of_a_row_are_those_of_its_tags() -> None:
    tags = [
        Tag("a.py", 1, 1, "f", "def", "function", "", None, None, None),
        Tag("a.py", 2, 2, "X", "def", "constant", "", None, None, None),
        Tag("a.py", 3, 3, "f", "def", "variable", "C", None, None, None),
        Tag("a.py", 4, 4, "m", "def", "method", "C", None, None, None),
        Tag("a.py", 5, 5, "X", "def", "field", "C", None, None, None),
    ]
    rows = RowTags("a.py", json.dumps([t.to_row() for t in tags]))
    facts = rows.name_facts()
    assert facts == name_facts((t.name, t.symbol_kind, t.scope) for t in tags)
    assert (facts.names, list(facts.data), list(facts.top)) == (
        ("f", "X", "m"),
        [0, 1, 0],  # f is also a function; X only data
        [1, 0, 0],  # m is scoped
    )
    assert rows.name_facts() is facts


def test_a_cold_map_keeps_no_definitions_text_of_a_file_it_does_not_show(pyrepo, tmp_path) -> None:
    from repomapper import RepoMap

    rm = RepoMap(pyrepo, 64, cache_dir=tmp_path / "c")
    result = rm.map()
    rows = [fs.definitions for fs in rm.graph_state.files.values()]
    assert rows and all(isinstance(r, RowTags) for r in rows)
    kept = [r for r in rows if isinstance(r._text, str)]
    assert not kept  # each text read for the table was let go (a shown file's was parsed)
    again = RepoMap(pyrepo, 64, cache_dir=tmp_path / "c", state=None).map()
    assert (again.map, again.ranked_symbols) == (result.map, result.ranked_symbols)
    rm.close()
