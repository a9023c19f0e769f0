"""The sequences that make their items when read behave as the sequences their types declare."""

from __future__ import annotations

import json

from repomapper.definitions import FileRows, RowsAt
from repomapper.model import Tag
from repomapper.rowtext import RowTags, Text


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
