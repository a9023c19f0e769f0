import json
import pickle

from repomapper.cache import _dumps
from repomapper.model import FileExtraction, FileSymbols, Tag
from repomapper.namecounts import NameCounts


def test_name_counts_read_as_the_pairs_they_were_made_from():
    pairs = (("alpha", 2), ("beta", 1), ("gamma", 7))
    nc = NameCounts(pairs)
    assert nc == pairs and pairs == nc and nc == list(pairs)
    assert nc != (("alpha", 2), ("beta", 1))
    assert len(nc) == 3 and nc[1] == ("beta", 1) and nc[-1] == ("gamma", 7)
    assert nc[1:] == pairs[1:]
    assert dict(nc) == dict(pairs) and list(nc) == list(pairs)
    assert NameCounts(pairs) == nc and NameCounts([]) == ()


def test_names_arriving_from_separate_pickles_are_one_string():
    # each batch from a worker is its own pickle: without interning, every batch brings its own
    # copy of every name
    first = pickle.loads(pickle.dumps(NameCounts([("".join(["sh", "ared"]), 1)])))
    second = pickle.loads(pickle.dumps(NameCounts([("".join(["sha", "red"]), 3)])))
    assert first == (("shared", 1),) and second == (("shared", 3),)
    assert first.names[0] is second.names[0]


def test_an_extracted_summary_is_compact_and_still_encodes_as_json():
    tags = tuple(
        Tag("a.py", line, line, name, kind)
        for line, (name, kind) in enumerate(
            [("f", "def"), ("g", "ref"), ("g", "ref"), ("h", "ref")]
        )
    )
    fs = FileSymbols.from_extraction(FileExtraction("a.py", tags))
    assert isinstance(fs.references, NameCounts)
    assert fs.references == (("g", 2), ("h", 1))
    assert json.loads(_dumps({"c": fs.references})) == {"c": [["g", 2], ["h", 1]]}


def test_name_counts_travel_as_their_columns_and_keep_large_counts():
    counts = NameCounts([("a", 1), ("b", 1 << 40)])
    assert list(pickle.loads(pickle.dumps(counts))) == [("a", 1), ("b", 1 << 40)]
    assert pickle.loads(pickle.dumps(NameCounts([]))) == NameCounts([])
