"""The symbol table built as arrays over interned ids answers as the one built as dicts."""

import io
from dataclasses import replace
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper import tablearrays
from repomapper.cache import CacheKey
from repomapper.definitions import DefinitionIndex
from repomapper.graph import SymbolTable
from repomapper.graphstate import _ranked, build_state
from repomapper.index import RepoIndex
from repomapper.rank import FactorBlocks
from repomapper.snapshot import encode
from repomapper.tablearrays import build_arrays, table_of
from tests.test_graphstate import (
    FILES,
    KINDS,
    NAMES,
    drawn_boosts,
    inputs,
    repo_strategy,
    same,
    summary,
)


def same_table(a: SymbolTable, b: SymbolTable) -> None:
    assert {n: set(d) for n, d in a.defines.items()} == {n: set(d) for n, d in b.defines.items()}
    assert sorted(a.defines) == sorted(b.defines)
    assert {n: dict(r) for n, r in a.references.items()} == dict(b.references)
    assert dict(a.definitions) == dict(b.definitions)
    assert {k: set(v) for k, v in a.targets.items() if v} == {
        k: set(v) for k, v in b.targets.items() if v
    }
    assert set(a.unreferenced) == set(b.unreferenced)
    assert set(a.data_only) == set(b.data_only)
    assert dict(a.top_level) == dict(b.top_level)
    for name in b.defines:
        assert a.external_refs(name) == b.external_refs(name)
        for d in b.defines[name]:
            assert ((d, name) in a.unreferenced) == ((d, name) in b.unreferenced)
            assert ((d, name) in a.data_only) == ((d, name) in b.data_only)


@settings(max_examples=200, deadline=None)
@given(repo_strategy())
def test_the_array_table_answers_as_the_dict_table(files):
    resolve = inputs().target_resolver(RepoIndex(inputs().root, files))
    same_table(table_of(build_arrays(files, resolve), files), SymbolTable.build(files, resolve))


def test_names_are_ids_in_string_order_and_rows_follow_them():
    files = {
        "b.py": summary("b.py", [("zeta", "function"), ("Alpha", "class")], ["beta"], [None], []),
        "a.py": summary("a.py", [("beta", "variable")], ["zeta", "zeta", "Alpha"], [None] * 3, []),
    }
    arrays = build_arrays(files, None)
    assert arrays.files == ["a.py", "b.py"]
    assert arrays.names == ["Alpha", "beta", "zeta"]  # code point order, as sorted() gives
    assert arrays.def_file.tolist() == [1, 0, 1]
    assert arrays.def_data.tolist() == [False, True, False]
    assert arrays.ref_file.tolist() == [0, 1, 0] and arrays.ref_count.tolist() == [1, 1, 2]
    assert arrays.tl_names.tolist() == ["Alpha", "zeta"]
    assert table_of(arrays, files).external_refs("zeta") == {"a.py": 2}


def reference_state(files, inp):
    """The state as it was built before the arrays: the table as dicts, a block per
    identifier, the definition index per file, the imports as Counters."""
    index = RepoIndex(inp.root, files)
    table = SymbolTable.build(files, inp.target_resolver(index))
    imports = {}
    for p in sorted(files):
        found = inp.resolve_imports(p, files[p], index)
        if found:
            imports[p] = found
    blocks = FactorBlocks.build(table, inp.chat, inp.mentioned_idents)
    definitions = DefinitionIndex.build(table, files)
    return _ranked(files, inp, index, table, imports, blocks, definitions, "built")


@settings(max_examples=150, deadline=None)
@given(repo_strategy(), st.data())
def test_a_state_built_as_arrays_is_the_one_built_as_objects(files, data):
    built_as_objects(files, data)


def unresolved_repo_strategy():
    """Repositories whose references no backend resolved to a file: every name's block is
    laid out from the table's runs (see ``rank._laid_out``), most names referenced from
    several files."""

    def file(path):
        return st.builds(
            lambda defs, refs: summary(path, defs, refs, [None] * len(refs), []),
            st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(KINDS)), max_size=4),
            st.lists(st.sampled_from(NAMES), min_size=1, max_size=8),
        )

    return st.fixed_dictionaries({p: file(p) for p in FILES})


@settings(max_examples=60, deadline=None)
@given(st.one_of(repo_strategy(), unresolved_repo_strategy()), st.data())
def test_a_state_built_a_few_entries_at_a_time_is_the_one_built_as_objects(files, data):
    """The layout and the ranking's rounding done in chunks of three entries (a large tree's
    chunks are a million): the chunks' seams change nothing."""
    with patch.object(tablearrays, "ELEMENT_CHUNK", 3):
        built_as_objects(files, data)


def built_as_objects(files, data):
    chat, mentioned = drawn_boosts(data, 2)
    inp = inputs(chat, mentioned)
    built, reference = build_state(files, inp), reference_state(files, inp)
    same(built, reference)
    names = tuple(sorted(files))
    a = built.blocks._assembly(names, built.definitions)
    b = reference.blocks._assembly(names, reference.definitions)
    assert list(a.order) == list(b.order) and list(a.columns) == list(b.columns)
    for field in ("counts", "r_rows", "r_cols", "r_vals", "d_rows", "d_cols", "d_vals", "d_local"):
        assert np.array_equal(getattr(a, field), getattr(b, field)), field
    for field in ("I", "R", "D"):
        x, y = getattr(built.graph, field), getattr(reference.graph, field)
        assert np.array_equal(x.rows, y.rows) and np.array_equal(x.cols, y.cols), field
        assert np.array_equal(x.vals, y.vals), field
    assert np.array_equal(built.graph.out_weight, reference.graph.out_weight)


@settings(max_examples=60, deadline=None)
@given(repo_strategy(), st.data())
def test_a_built_state_is_stored_as_the_arrays_its_objects_would_give(files, data):
    chat, mentioned = drawn_boosts(data, 2)
    state = build_state(files, inputs(chat, mentioned))
    keys = {p: CacheKey(p, 0, 0, "fp", f"d{i}") for i, p in enumerate(files)}
    held = dict(np.load(io.BytesIO(encode(state, keys, frozenset()))))
    # the same state read through its mappings, as an updated one is written
    objects = replace(state, table=replace(state.table, arrays=None), imports=dict(state.imports))
    written = dict(np.load(io.BytesIO(encode(objects, keys, frozenset()))))
    assert held.keys() == written.keys()
    for name, array in written.items():
        assert np.array_equal(held[name], array), name


@pytest.mark.parametrize(
    "values", [[], ["a"], ["a", "bé", "", "c\udcff"], [f"n{i}" for i in range(7)]]
)
def test_strings_written_a_chunk_at_a_time_are_those_written_at_once(values, monkeypatch):
    from repomapper.snapshot.encode import _Strings
    from repomapper.stringarrays import joined

    monkeypatch.setattr(_Strings, "CHUNK", 2)
    out = io.BytesIO()
    _Strings(values).write(out)
    out.seek(0)
    assert np.array_equal(np.lib.format.read_array(out), joined(values))
    with pytest.raises(ValueError):
        _Strings([*values, "x\0y"]).write(io.BytesIO())


def test_names_at_ids_read_as_an_object_array_of_them_and_gather_once_when_read_wholesale():
    from repomapper.tablearrays import NamesAt, name_objects

    names = name_objects(["alpha", "beta", "gamma", "delta"])
    ids = np.array([2, 0, 0, 3, 1, 2, 3, 1], dtype=np.int32)
    at = NamesAt(ids, names)
    expected = names[ids]
    assert len(at) == 8 and at.shape == (8,)
    assert at[3] == "delta"
    assert at[0:1].tolist() == ["gamma"]  # a small read gathers only what it reads
    assert at._all is None
    assert at[np.array([7, 0])].tolist() == ["beta", "gamma"]
    assert at[1:7].tolist() == expected[1:7].tolist()  # most of them: gathered and kept
    assert at._all is not None
    assert at.tolist() == expected.tolist()
    assert np.concatenate([at[0:2], np.asarray(at)[2:]]).tolist() == expected.tolist()
    assert np.asarray(at, dtype=object).tolist() == expected.tolist()
