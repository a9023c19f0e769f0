"""A stored state's names, decoded one at a time or split in bulk, read as the strings the
state was written from."""

import io
import zipfile

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomapper.joinedstrings import JoinedStrings, separators
from repomapper.snapshot.encode import _names
from repomapper.stringarrays import joined

# names as a repository's symbols come: any text but NUL, undecodable bytes (surrogate
# escapes) included
NAMES = st.lists(
    st.text(st.characters(blacklist_characters="\0", blacklist_categories=["Cs"]), max_size=12)
    | st.sampled_from(["caf\udce9", "", "\udcff\udc80x"]),
    max_size=40,
)


def _written(values):
    """The names and their ends as a stored state's archive holds them."""
    out = {}
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as archive:
        for name, array in _names(values):
            with archive.open(f"{name}.npy", "w") as member:
                if hasattr(array, "write"):
                    array.write(member)
                else:
                    np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)
    with np.load(io.BytesIO(buf.getvalue()), allow_pickle=False) as z:
        out = {k: z[k] for k in z.files}
    return out["names"], out["name_ends"]


@given(NAMES)
def test_written_names_read_back_one_at_a_time_and_in_bulk(values):
    data, ends = _written(values)
    assert np.array_equal(data, joined(values))
    strings = JoinedStrings(data, ends)
    assert len(strings) == len(values)
    assert [strings[i] for i in range(len(values))] == values
    if values:
        assert strings[-1] == values[-1]
        assert strings[np.int32(0)] == values[0]
    ids = np.arange(len(values))[::-1].copy()
    assert strings.take(ids).tolist() == values[::-1]
    assert strings[ids].tolist() == values[::-1]
    assert strings[1:3] == values[1:3]
    assert strings.strings() == values
    assert list(strings) == values
    # read again after the bulk split: the same strings
    assert [strings[i] for i in range(len(values))] == values
    assert strings.take(ids).tolist() == values[::-1]


def test_the_ends_of_names_written_in_several_chunks(monkeypatch):
    from repomapper.snapshot.encode import _Strings

    monkeypatch.setattr(_Strings, "CHUNK", 3)
    values = ["a", "bb", "", "dddd", "é", "ff", "g"]
    data, ends = _written(values)
    assert ends.tolist() == separators(data.tobytes())[:-1].tolist() + [len(data)]
    assert JoinedStrings(data, ends).strings() == values
    assert [JoinedStrings(data, ends)[i] for i in range(7)] == values


def test_a_large_read_splits_every_name_once():
    values = [f"n{i:04d}" for i in range(1000)]
    strings = _column(values)
    many = strings.take(np.arange(0, 1000, 2))
    assert many.tolist() == values[::2] and strings._all is not None


@pytest.mark.parametrize(
    "ends",
    [
        [1, 1, 5],  # not increasing
        [1, 3, 4],  # not ending where the data does
        [1, 3, 9],  # past it
        [-1, 3, 5],
    ],
)
def test_ends_that_do_not_fit_the_bytes_are_refused(ends):
    data = joined(["a", "b", "c"])
    with pytest.raises(ValueError):
        JoinedStrings(data, np.array(ends, dtype=np.int64))


def test_ends_of_another_type_are_refused():
    data = joined(["a", "b"])
    with pytest.raises(ValueError):
        JoinedStrings(data, np.array([1.0, 3.0]))
    with pytest.raises(ValueError):
        JoinedStrings(data.astype(np.int16), np.array([1, 3]))
    with pytest.raises(ValueError):
        JoinedStrings(data, np.zeros(0, dtype=np.int64))


def test_an_index_out_of_range_is_an_index_error():
    strings = JoinedStrings(joined(["a", "b"]), np.array([1, 3]))
    with pytest.raises(IndexError):
        strings[2]
    with pytest.raises(IndexError):
        strings[-3]


def _column(values):
    data, ends = _written(values)
    return JoinedStrings(data, ends)


def test_interned_names_give_the_column_s_ids_and_new_ids_after_them():
    from repomapper.joinedstrings import InternedNames

    names = InternedNames(_column(["alpha", "beta", "gamma"]))
    assert [names.id_of(n) for n in ("alpha", "gamma", "beta")] == [0, 2, 1]
    assert names.id_of("delta") == 3 and names.id_of("aaa") == 4
    assert names.id_of("delta") == 3 and len(names) == 5
    assert names[1] == "beta" and names[np.int64(4)] == "aaa"
    assert names[np.array([4, 0, 3, 2])].tolist() == ["aaa", "alpha", "delta", "gamma"]
    assert names[np.array([2, 0])].tolist() == ["gamma", "alpha"]


def test_many_lookups_split_the_names_once_and_find_the_same():
    values = [f"n{i:05d}" for i in range(2048)]
    strings = _column(values)
    assert len(values) * JoinedStrings.DECODE_SHARE == 128  # about 11 lookups' probes
    for i in (0, 1000, 2047):
        assert strings.index_of(values[i]) == i
    assert strings.index_of("n00000x") is None and strings.index_of(3) is None
    assert strings._all is None
    for i in range(2048):  # past the share: split, then searched as a list
        assert strings.index_of(values[i]) == i
    assert strings._all is not None
    assert strings.index_of("zzz") is None


def test_reads_one_at_a_time_are_counted_until_the_names_are_split():
    values = [f"n{i:04d}" for i in range(1000)]  # a share of 62
    strings = _column(values)
    assert strings.take(np.array([5, 7])).tolist() == ["n0005", "n0007"]
    assert strings[3:8] == values[3:8] and strings[9] == "n0009"
    assert strings._all is None
    for i in range(0, 1000, 20):  # 50 more: 58 read
        assert strings[i] == values[i]
    assert strings._all is None
    assert strings.take(np.arange(10)).tolist() == values[:10]  # 68: split
    assert strings._all is not None
    first, again = strings.take(np.array([4])), strings.take(np.array([4]))
    assert first[0] is again[0]  # (the split's strings, not new ones per read)
    assert strings.take(np.arange(1000) % 2 == 0).tolist() == values[::2]


@pytest.mark.parametrize("interned", [True, False])
def test_a_splice_by_ids_reads_as_the_splice_of_the_names(interned):
    from repomapper.joinedstrings import InternedNames
    from repomapper.tablearrays import NameRuns, NamesAt, name_objects

    values = ["a", "b", "c", "d", "e", "f"]
    ids = np.array([0, 0, 1, 3, 4, 4, 5], dtype=np.int32)
    old = (
        NamesAt(ids, InternedNames(_column(values)))
        if interned
        else name_objects([values[i] for i in ids])
    )
    runs = NameRuns(old)
    runs.keep(old, 0, 3)
    runs.add(["c", "c"])  # a name the column has
    runs.add(["cc"])  # one it lacks
    runs.keep(old, 4, 7)
    got = runs.joined()
    assert isinstance(got, NamesAt) == interned
    assert list(np.asarray(got)) == ["a", "a", "b", "c", "c", "cc", "e", "e", "f"]
    assert [got[i] for i in range(9)] == ["a", "a", "b", "c", "c", "cc", "e", "e", "f"]
    if interned:
        assert got.ids.tolist() == [0, 0, 1, 2, 2, 6, 4, 4, 5]


@pytest.mark.parametrize("values", [[], [""], ["", ""], ["a"], ["", "b"], ["path", "", "fp"]])
def test_split_with_a_count_tells_one_empty_string_from_none(values):
    from repomapper.stringarrays import split

    assert split(joined(values), len(values)) == values
    if values != [""]:
        assert split(joined(values)) == values


def test_triples_are_read_three_at_a_time_and_a_partial_one_refused():
    from repomapper.stringarrays import triples

    assert triples(joined(["a", "", "f", "b", "d", "g"])) == [("a", "", "f"), ("b", "d", "g")]
    assert triples(joined([])) == []
    with pytest.raises(ValueError):
        triples(joined(["a", "b"]))


def test_a_stored_row_gives_a_name_s_position_by_its_id_without_making_names():
    """An edit lays out again every identifier of the file it changed; the definers of each
    are asked where the identifier stands among their definitions. A stored row answers from
    its name ids: a common identifier's thousands of definers made every name of a large
    tree before (each row made decodes its names, and past a share they are all split)."""
    from repomapper.definitions import DefinitionIndex, FileRows, RowsAt
    from repomapper.joinedstrings import InternedNames
    from repomapper.tablearrays import NamesAt

    values = [f"n{i:04d}" for i in range(1000)]  # a share of 62 reads
    files = [f"f{i:03d}.c" for i in range(120)]
    # each file defines the common name n0000 and two of its own
    ids = np.array([[0, 1 + 2 * i, 2 + 2 * i] for i in range(len(files))], dtype=np.int32)
    names = InternedNames(_column(values))
    added = names.id_of("zz_new")  # a name an update met (after the column's)
    ids[7, 2] = added
    column = names.column
    index = DefinitionIndex.of_columns(
        files,
        np.full(len(files), 3),
        np.zeros(len(files), dtype=np.int64),
        NamesAt(ids.ravel(), names),
        np.ones(ids.size),
        np.zeros(ids.size, dtype=bool),
        np.zeros(0, dtype=np.int64),
    )
    rows = RowsAt(index.files, index.rows)
    assert [rows.position(i, "n0000") for i in range(len(files))] == [0] * len(files)
    assert rows.position(5, "n0012") == 2 and rows.position(7, "zz_new") == 2
    for missing in ("n0012", "nope"):
        with pytest.raises(KeyError):
            rows.position(3, missing)
    assert column._all is None  # (a row made for each definer would have split them all)
    made = rows[5]
    assert isinstance(made, FileRows) and made.position["n0012"] == rows.position(5, "n0012")
    index.rows["f005.c"] = FileRows(
        ("n0000", "other"), (1.0, 1.0), (), (False, False), {"n0000": 0, "other": 1}
    )
    assert rows.position(5, "other") == 1  # a row an update set on top is read as it is
    with pytest.raises(KeyError):
        rows.position(5, "n0012")
