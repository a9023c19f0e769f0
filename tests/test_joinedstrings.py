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
    data, ends = _written(values)
    strings = JoinedStrings(data, ends)
    few = strings.take(np.array([5, 7]))
    assert few.tolist() == ["n0005", "n0007"] and strings._all is None
    many = strings.take(np.arange(0, 1000, 2))
    assert many.tolist() == values[::2] and strings._all is not None
    assert strings.take(np.arange(1000) % 2 == 0).tolist() == values[::2]


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
