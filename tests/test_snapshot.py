"""The ranking state stored in the cache (repomapper.snapshot): a new process loads it, updates
it by the files changed since, and answers with the same bytes as a map ranked from scratch;
a state that cannot be used (another file set, other files that are not mapped, a damaged or
missing row) is built again."""

from __future__ import annotations

import os
import sqlite3
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from repomapper import snapshot
from repomapper.repomap import RepoMap
from tests.conftest import write_tree
from tests.test_relevance import REPO

TASKS = [
    None,
    "The receipt discount rounding is wrong in apply_discount",
    'Traceback (most recent call last):\n  File "/srv/app/shop/cart.py", line 5, in total\n'
    "ValueError: bad total",
    "the and of",  # only stop words: ranked as without a task
]

#: versions a file may be edited to: definitions added, removed and renamed, references and
#: imports changed, a file emptied
VERSIONS = {
    "shop/pricing.py": [
        REPO["shop/pricing.py"],
        "def apply_discount(total, pct):\n    return round_receipt(total)\n\n"
        "def round_receipt(x):\n    return x\n",
        "RATE = 3\n\nclass Pricing:\n    def format_price(self, cents):\n        return cents\n",
        "",
    ],
    "shop/cart.py": [
        REPO["shop/cart.py"],
        "from shop.catalog import Catalog\n\nclass Cart:\n    def total(self):\n"
        "        return Catalog().find(format_price(1))\n",
        "import shop.pricing\n\ndef apply_discount(x, y):\n    return shop.pricing.apply_discount(x, y)\n",
    ],
    "shop/catalog.py": [
        REPO["shop/catalog.py"],
        "class Catalog:\n    def find(self, name):\n        return round_receipt(name)\n"
        "    def lookup_discount(self):\n        return apply_discount(1, 1)\n",
    ],
}


#: the shop and modules that use it: an update takes a quarter of the files at most
TREE = {
    **REPO,
    **{
        f"shop/extra_{i}.py": f"from shop.pricing import apply_discount\n\n"
        f"def helper_{i}(total):\n    return apply_discount(total, {i}) + helper_{(i + 1) % 8}(0)\n"
        for i in range(8)
    },
}


@pytest.fixture
def shop(tmp_path):
    return write_tree(tmp_path / "shop", TREE)


def later(path: Path, text: str) -> None:
    """Write ``text`` with a later mtime (an edit seen by stat, however fast the test runs)."""
    path.write_text(text)
    st_ = path.stat()
    os.utime(path, ns=(st_.st_atime_ns, st_.st_mtime_ns + 3_000_000_000))


def keys_of(rm: RepoMap, ranked) -> dict:
    extractor = rm.state.extractor()
    extractor.prepare(rm.root, ranked.all_entries)
    return {e.path: extractor.key(e) for e in ranked.all_entries}


def scratch(root: Path, task: str | None):
    return RepoMap(root, use_cache=False).map(task=task)


def same(got, expected) -> None:
    assert got.map == expected.map
    assert got.to_dict() == expected.to_dict()


@pytest.mark.parametrize("task", TASKS)
def test_a_map_from_the_stored_state_is_the_one_ranked_from_scratch(shop, tmp_path, task):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map(task="an earlier task")  # builds the state and stores it
        assert first.last_stats.get("stored_state") is None
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map(task=task)
        assert fresh.last_stats.get("stored_state") == 1 and fresh.graph_state.how == "stored"
    same(got, scratch(shop, task))


@pytest.mark.parametrize("task", TASKS[:2])
def test_a_new_process_updates_the_stored_state_by_the_changed_files(shop, tmp_path, task):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])
    later(shop / "shop" / "pricing.py", VERSIONS["shop/pricing.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map(task=task)
        assert fresh.last_stats.get("stored_state") == 1
        assert fresh.graph_state.how == "updated (2 changed)"
    same(got, scratch(shop, task))


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.lists(
            st.tuples(st.sampled_from(sorted(VERSIONS)), st.integers(0, 3)),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=3,
    )
)
def test_any_edits_in_new_processes_answer_as_from_scratch(edits):
    with tempfile.TemporaryDirectory() as tmp:
        root = write_tree(Path(tmp) / "shop", TREE)
        cache = Path(tmp) / "cache"
        with RepoMap(root, cache_dir=cache) as first:
            first.map()
        for step in edits:  # each step: some files edited, then a new process maps
            for path, version in step:
                versions = VERSIONS[path]
                later(root / path, versions[version % len(versions)])
            with RepoMap(root, cache_dir=cache) as fresh:
                ranked = fresh.rank(task=TASKS[1])
                assert fresh.last_stats.get("stored_state") == 1
                got = fresh.map()  # replayed when the files are back to a version mapped before
            same(got, scratch(root, None))
            expected = RepoMap(root, use_cache=False).rank(task=TASKS[1])
            assert [(f.path, f.score) for f in ranked.files] == [
                (f.path, f.score) for f in expected.files
            ]


def test_a_long_lived_repomap_from_the_stored_state_updates_like_a_fresh_one(shop, tmp_path):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    with RepoMap(shop, cache_dir=cache) as rm:
        rm.map(task=TASKS[1])
        assert rm.last_stats.get("stored_state") == 1
        for path, version in [("shop/pricing.py", 1), ("shop/cart.py", 2), ("shop/pricing.py", 2)]:
            later(shop / path, VERSIONS[path][version])
            for task in TASKS[:2]:
                same(rm.map(task=task), scratch(shop, task))
            assert rm.graph_state.how == "updated (1 changed)"


def test_another_file_set_builds_the_state_and_stores_it_again(shop, tmp_path):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    write_tree(
        shop, {"shop/refunds.py": "def refund(total):\n    return apply_discount(total, 0)\n"}
    )
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map()
        assert fresh.last_stats.get("stored_state") is None and fresh.graph_state.how == "built"
    same(got, scratch(shop, None))
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as again:  # the new file set's state was stored
        same(again.map(), scratch(shop, None))
        assert again.last_stats.get("stored_state") == 1


def test_a_changed_file_that_is_not_mapped_builds_the_state(shop, tmp_path):
    write_tree(shop, {"NOTES.unmappable": "first\n"})
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        ranked = first.rank()
        assert "NOTES.unmappable" not in ranked.mapped
    later(shop / "NOTES.unmappable", "second\n")
    with RepoMap(shop, cache_dir=cache) as fresh:
        fresh.map()
        assert fresh.last_stats.get("stored_state") is None and fresh.graph_state.how == "built"


def test_a_changed_file_whose_old_summary_is_gone_builds_the_state(shop, tmp_path):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    for db in cache.rglob("content*.sqlite3"):
        with sqlite3.connect(db) as conn:
            conn.execute("DELETE FROM blobs WHERE path = 'shop/catalog.py'")
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map()
        assert fresh.last_stats.get("stored_state") is None and fresh.graph_state.how == "built"
    same(got, scratch(shop, None))


def test_the_old_rows_a_stored_state_is_updated_from_outlive_the_content_tables_bound(
    shop, tmp_path, monkeypatch
):
    """A file edited since the state was stored no longer refers to its old row, but the state
    does: the table's bound evicts other rows first, so the next edit still updates the state
    (the kernel rebuilt it for four minutes on the second edit after a stored state)."""
    import repomapper.cache as cache_module

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    with sqlite3.connect(cache / "content.sqlite3") as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM blobs").fetchone()
    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", rows)  # full: each new row evicts one
    for version in (1, 2):
        later(shop / "shop" / "pricing.py", VERSIONS["shop/pricing.py"][version])
        with RepoMap(shop, cache_dir=cache) as fresh:
            got = fresh.map()
            assert fresh.graph_state.how == "updated (1 changed)"
        same(got, scratch(shop, None))


def test_more_changed_files_than_an_update_takes_build_the_state(shop, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    monkeypatch.setattr(snapshot, "MAX_CHANGED", 1)
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        same(fresh.map(), scratch(shop, None))
        assert fresh.graph_state.how == "built"


def test_a_stored_state_the_calls_keep_updating_is_built_again(shop, tmp_path, monkeypatch):
    """Each new process updates a stored state by every file changed since it was stored:
    once the updates of the calls since add up to more than its drift limit, the next call
    builds the state and stores it, and the calls after it update nothing; the maps are the
    ones ranked from scratch throughout."""
    from repomapper.cache import open_cache

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    monkeypatch.setattr(snapshot, "MAX_CHANGED", 2)
    monkeypatch.setattr(snapshot, "DRIFT_SHARE", 0.0)  # a limit of two file updates
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])

    def state_file() -> Path:
        c = open_cache(shop, cache)
        try:
            return c.state_path  # type: ignore[attr-defined]
        finally:
            c.close()

    stored_before = state_file().stat().st_mtime_ns
    hows = []
    for task in TASKS:  # each call another task: none is replayed from the map memo
        with RepoMap(shop, cache_dir=cache) as fresh:
            same(fresh.map(task=task), scratch(shop, task))
            hows.append(fresh.graph_state.how)
    assert hows == ["updated (1 changed)", "updated (1 changed)", "built", "stored"]
    assert state_file().stat().st_mtime_ns != stored_before


def test_updates_are_counted_per_stored_state():
    """The updates counted start again for a state of another identity, and after a reset."""
    from repomapper.cache import TagCache

    cache = TagCache()
    assert cache.add_state_drift("a", 3) == 3
    assert cache.add_state_drift("a", 2) == 5
    assert cache.add_state_drift("b", 1) == 1
    cache.reset_state_drift()
    assert cache.add_state_drift("b", 4) == 4
    cache.meta["state_drift"] = "b not-a-count"
    assert cache.add_state_drift("b", 1) == 1


def test_a_damaged_stored_state_is_a_miss(shop, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    monkeypatch.setattr(snapshot, "decode", lambda data, **_: None)
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map(task=TASKS[1])
        assert fresh.last_stats.get("stored_state") is None
    same(got, scratch(shop, TASKS[1]))


@pytest.mark.parametrize("data", [b"", b"not an archive", b"PK\x03\x04\n", b"\x00" * 64, "text"])
def test_unreadable_state_data_decodes_to_nothing(data):
    assert snapshot.decode(data) is None


def test_a_stored_state_whose_arrays_disagree_is_a_miss(shop, tmp_path):
    import io

    import numpy as np

    rm = RepoMap(shop, use_cache=False)
    ranked = rm.rank()
    keys = keys_of(rm, ranked)
    data = snapshot.encode(rm.graph_state, keys, frozenset())
    assert snapshot.decode(data) is not None
    with np.load(io.BytesIO(bytes(data)), allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    for name, bad in [
        ("def_at", arrays["def_at"][:-1]),
        ("def_at", arrays["def_at"] + 1),  # not from zero
        ("ref_at", arrays["ref_at"].astype(np.float64)),
        ("tl_at", arrays["tl_at"][:-1]),
        ("tg_files_at", arrays["tg_files_at"][1:]),
        ("ref_file", arrays["ref_file"] + 1000),
        ("prior", arrays["prior"][:1]),
        ("prior_stable", arrays["prior_stable"][:-1]),
        ("version", arrays["version"] + 1),
        ("r_rows", arrays["r_rows"] - 1000),
        ("d_local", arrays["d_local"] + 1000),
        ("di_top_ids", arrays["di_top_ids"] + 1000),
        ("imp_target", arrays["imp_target"] + 1000),
        ("tl_names", arrays["tl_names"] + 100000),
        ("names", arrays["names"][::-1]),  # reversed: not sorted any more
        ("name_ends", arrays["name_ends"][:-1]),
        ("name_ends", arrays["name_ends"] - 1),  # not where the separators are
        ("name_ends", arrays["name_ends"][::-1]),
        ("role_weights", arrays["role_weights"][:-1]),
        ("role_weights", arrays["role_weights"] * np.nan),
        ("role_weights", arrays["role_weights"] + 1),
        ("pair_raw", arrays["pair_raw"][:-1]),
        ("pair_raw", arrays["pair_raw"] - 1),
        ("pair_raw", arrays["pair_raw"] * np.inf),
        ("pair_received", arrays["pair_received"].astype(np.int8)),
    ]:
        out = io.BytesIO()
        np.savez(out, **{**arrays, name: bad})
        stored = snapshot.decode(out.getvalue())
        state = rm.graph_state
        inputs = rm.state.graphs.inputs(*state.boosts, state.context)
        loaded = (
            None if stored is None else snapshot.load(stored, state.files, {}, inputs, frozenset())
        )
        assert loaded is None, name


def _state_file(shop, tmp_path):
    """The shop's encoded state, and the file it was written to."""
    rm = RepoMap(shop, use_cache=False)
    ranked = rm.rank()
    data = bytes(snapshot.encode(rm.graph_state, keys_of(rm, ranked), frozenset()))
    path = tmp_path / "state.npz"
    path.write_bytes(data)
    return data, path


def test_a_stored_state_on_disk_is_mapped_and_read_as_the_same_arrays(shop, tmp_path):
    import io
    import zipfile

    import numpy as np

    data, path = _state_file(shop, tmp_path)
    in_memory = snapshot.decode(data)
    with open(path, "rb") as f:
        mapped = snapshot.decode(f)
    assert in_memory is not None and mapped is not None
    assert mapped.a.keys() == in_memory.a.keys()
    for k, v in in_memory.a.items():
        assert np.array_equal(mapped.a[k], v) and mapped.a[k].dtype == v.dtype, k
        assert not mapped.a[k].flags.writeable  # a view of the file, never written through
    # cut short, or holding an array of objects: a miss, as numpy.load(allow_pickle=False)
    path.write_bytes(data[: len(data) // 2])
    with open(path, "rb") as f:
        assert snapshot.decode(f) is None
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive, archive.open("x.npy", "w") as member:
        np.lib.format.write_array(member, np.array([1, "a"], dtype=object), allow_pickle=True)
    path.write_bytes(out.getvalue())
    with open(path, "rb") as f:
        assert snapshot.decode(f) is None


def test_a_state_the_cache_wrote_is_checked_by_its_checksum_not_name_by_name(shop, tmp_path):
    import struct
    import zipfile

    data, path = _state_file(shop, tmp_path)
    with open(path, "rb") as f:
        assert snapshot.decode(f, own=True) is not None
    # one byte of the names changed (their order with it): the checksum no longer holds
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("names.npy")
    damaged = bytearray(data)
    head = info.header_offset
    name_len, extra_len = struct.unpack("<HH", data[head + 26 : head + 30])
    at = head + 30 + name_len + extra_len + info.file_size - 2  # the last name's last letter
    assert data[at] not in (0, 0x01)
    damaged[at] ^= 0x01
    path.write_bytes(bytes(damaged))
    with open(path, "rb") as f:  # the archive itself still reads, the names do not
        assert snapshot.decode(f) is not None
    path.write_bytes(bytes(damaged))
    with open(path, "rb") as f:
        assert snapshot.decode(f, own=True) is None


def test_the_stored_state_holds_the_state_it_was_made_from(shop, tmp_path):
    import numpy as np

    from repomapper.graphstate import update_state

    rm = RepoMap(shop, use_cache=False)
    ranked = rm.rank()
    state = rm.graph_state
    keys = keys_of(rm, ranked)
    stored = snapshot.decode(snapshot.encode(state, keys, frozenset()))
    assert stored is not None and snapshot.changed_files(stored, keys) == []
    inputs = rm.state.graphs.inputs(*state.boosts, state.context)
    loaded = snapshot.load(stored, state.files, {}, inputs, frozenset())
    assert loaded is not None and update_state(loaded, state.files, inputs) is loaded
    assert loaded.prior == state.prior and loaded.ranking == state.ranking
    assert loaded.imports == state.imports
    for name in ("R", "D", "I"):
        assert np.array_equal(
            getattr(loaded.graph, name).toarray(), getattr(state.graph, name).toarray()
        )
    again = loaded.blocks.factored(loaded.graph.files, loaded.imports, loaded.definitions)
    assert np.array_equal(again.I.toarray(), state.graph.I.toarray())  # kept import rows
    assert np.array_equal(again.R.toarray(), state.graph.R.toarray())
    t, u = loaded.table, state.table
    assert dict(t.defines) == {n: frozenset(d) for n, d in u.defines.items()}
    assert dict(t.references) == {n: dict(r) for n, r in u.references.items()}
    assert dict(t.targets) == {k: frozenset(v) for k, v in u.targets.items() if v}
    assert dict(t.top_level) == dict(u.top_level)
    assert dict(t.definitions) == dict(u.definitions)
    for name, definers in u.defines.items():
        for d in definers:
            assert ((d, name) in t.unreferenced) == ((d, name) in u.unreferenced)
            assert ((d, name) in t.data_only) == ((d, name) in u.data_only)
        block = loaded.blocks.blocks.get(name)
        assert block == state.blocks.blocks.get(name)
    for f in state.definitions.files:
        assert loaded.definitions.rows[f] == state.definitions.rows[f]


def test_a_repository_keeps_one_stored_state_beside_its_database(shop, tmp_path):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map(task="an earlier task")
    write_tree(shop, {"shop/more.py": "def more():\n    pass\n"})
    with RepoMap(shop, cache_dir=cache) as rm:
        rm.map(task="another task")
    assert len(list(cache.rglob("*.state.npz"))) == 1
    assert not list(cache.rglob("*.tmp"))


def test_a_state_that_cannot_be_written_leaves_nothing_behind(shop, tmp_path, monkeypatch):
    def refuse(out, *args):
        out.write(b"half")
        raise ValueError("a name holds a NUL character")

    monkeypatch.setattr(snapshot, "write", refuse)
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as rm:
        same(rm.map(), scratch(shop, None))
    assert not list(cache.rglob("*.state.npz")) and not list(cache.rglob("*.tmp"))


def test_the_graph_view_from_the_stored_state_is_the_one_from_scratch(shop, tmp_path):
    from repomapper.graphview import build_repo_graph, render_graph

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = render_graph(build_repo_graph(fresh), "json")
        assert fresh.last_stats.get("stored_state") == 1
    expected = render_graph(build_repo_graph(RepoMap(shop, use_cache=False)), "json")
    assert got == expected


def _summaries(mapped) -> dict:
    return {
        p: (tuple(fs.definitions), tuple(fs.references), tuple(fs.targets), tuple(fs.imports))
        for p, fs in sorted(mapped.items())
    }


@pytest.mark.parametrize("one_by_one", [0, 1, 64])
def test_summaries_read_when_needed_equal_those_read_at_once(
    shop, tmp_path, monkeypatch, one_by_one
):
    from repomapper import cache as cache_module

    monkeypatch.setattr(cache_module._DeferredTexts, "ONE_BY_ONE", one_by_one)
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        deferred = fresh.rank().mapped
        assert fresh.last_stats.get("stored_state") == 1
        got = _summaries(deferred)
    expected = _summaries(RepoMap(shop, use_cache=False).rank().mapped)
    assert got == expected


def test_summaries_are_read_after_the_cache_is_closed(shop, tmp_path):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    with RepoMap(shop, cache_dir=cache) as fresh:
        mapped = fresh.rank().mapped
    assert _summaries(mapped) == _summaries(RepoMap(shop, use_cache=False).rank().mapped)


def test_a_summary_gone_from_the_cache_reads_as_empty_with_a_warning(shop, tmp_path, caplog):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    with RepoMap(shop, cache_dir=cache) as fresh:
        mapped = fresh.rank().mapped
        for db in cache.rglob("content*.sqlite3"):
            with sqlite3.connect(db) as conn:
                conn.execute("DELETE FROM blobs WHERE path = 'shop/catalog.py'")
        with caplog.at_level("WARNING"):
            assert tuple(mapped["shop/catalog.py"].definitions) == ()
        assert "no longer in the cache" in caplog.text


def test_a_map_whose_sections_were_counted_before_needs_no_tokenizer(shop, tmp_path, monkeypatch):
    pytest.importorskip("tiktoken")
    from repomapper.snapshot import stored
    from repomapper.tokens import _Cl100kCounter

    monkeypatch.setattr(stored, "NEAR_TOP", 0)  # every file of the tiny shop is near the top

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache, token_counter=_Cl100kCounter()) as first:
        before = first.map()
    later(shop / "shop" / "catalog.py", REPO["shop/catalog.py"] + "\n# a comment at the end\n")
    counter = _Cl100kCounter()
    with RepoMap(shop, cache_dir=cache, token_counter=counter) as fresh:
        got = fresh.map()
        assert fresh.last_stats.get("stored_state") == 1
    assert counter._encode is None  # every section's count was remembered
    expected = RepoMap(shop, use_cache=False).map()
    assert got.map == expected.map and got.tokens == expected.tokens == before.tokens


def test_sections_counted_before_are_priced_without_rendering_them(shop, tmp_path, monkeypatch):
    pytest.importorskip("tiktoken")
    from repomapper import render
    from repomapper.tokens import _Cl100kCounter

    rendered: list[str] = []
    real = render.render_file

    def counting(path, *args, **kwargs):
        rendered.append(path)
        return real(path, *args, **kwargs)

    monkeypatch.setattr(render, "render_file", counting)
    hour_ago = time.time_ns() - 3600 * 10**9  # digests taken now are settled: well after
    for f in shop.rglob("*.py"):
        os.utime(f, ns=(hour_ago, hour_ago))
    cache = tmp_path / "cache"
    with RepoMap(shop, 120, cache_dir=cache, token_counter=_Cl100kCounter()) as first:
        before = first.map()
    searched = len(rendered)
    rendered.clear()
    with RepoMap(shop, 120, cache_dir=cache, token_counter=_Cl100kCounter()) as again:
        got = again.map(force_refresh=True)
    assert got.map == before.map and got.tokens == before.tokens
    # only the final map's sections are rendered (once each), not every candidate's
    shown = {line[:-1] for line in got.map.splitlines() if line.endswith(".py:")}
    assert sorted(rendered) == sorted(shown) and len(rendered) < searched
    # an edited file is priced by rendering it again, and the map is the one from scratch
    edited_file = shop / "shop" / "cart.py"
    edited_file.write_text(VERSIONS["shop/cart.py"][1])
    os.utime(edited_file, ns=(hour_ago, hour_ago + 10**9))
    with RepoMap(shop, 120, cache_dir=cache, token_counter=_Cl100kCounter()) as edited:
        after = edited.map(force_refresh=True)
    expected = RepoMap(shop, 120, use_cache=False).map()
    assert after.map == expected.map and after.tokens == expected.tokens


def test_a_callers_counter_is_asked_every_time(shop, tmp_path):
    asked: list[str] = []

    def count(text: str) -> int:
        asked.append(text)
        return len(text.split())

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache, token_counter=count) as first:
        first.map()
    n = len(asked)
    assert n > 0
    with RepoMap(shop, cache_dir=cache, token_counter=count) as again:
        again.map(force_refresh=True)
    assert len(asked) == 2 * n


def _rows_read(monkeypatch) -> list[str]:
    """The paths whose rows the cache's table is asked for (texts left out: a lookup's)."""
    from repomapper.cache import SqliteTagCache

    asked: list[str] = []
    original = SqliteTagCache._rows_of

    def recording(self, keys, full, light=False):
        asked.extend(k.path for k in keys)
        return original(self, keys, full, light)

    monkeypatch.setattr(SqliteTagCache, "_rows_of", recording)
    return asked


def _heads(mapped) -> dict:
    return {p: (fs.plugin, fs.language, fs.diagnostics) for p, fs in sorted(mapped.items())}


GENERATED = {
    **TREE,
    "shop/made.py": "# Generated by protoc. DO NOT EDIT.\nVALUE = 1\n",
    # no backend answers these
    "notes/todo.unmappedext": "nothing answers for this\n",
    "data/blob.bin": "a\x00b\n",
}


def test_a_new_process_reads_the_rows_of_the_changed_files_only(tmp_path, monkeypatch):
    """The stored state knows each of its files' backend, language and diagnostics, the files
    no backend answered included: a new process reads from the cache's table only the rows of
    the files changed since (the kernel read 66,712 rows for one edit, then the 11,500 rows of
    its files no backend answers), and its summaries, diagnostics and map are those from
    scratch."""
    shop = write_tree(tmp_path / "shop", GENERATED)
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    asked = _rows_read(monkeypatch)
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map(task=TASKS[1])
        ranked = fresh.rank()
        mapped, found = ranked.mapped, ranked.diagnostics
        assert fresh.graph_state.how == "updated (1 changed)"
        scratch_ranked = RepoMap(shop, use_cache=False).rank()
        assert _heads(mapped) == _heads(scratch_ranked.mapped)
        assert any(d.code == "generated" for d in mapped["shop/made.py"].diagnostics)
        assert _summaries(mapped) == _summaries(scratch_ranked.mapped)
    assert set(asked) == {"shop/cart.py"}  # its new row (a miss) and its old one
    same(got, scratch(shop, TASKS[1]))
    assert found == scratch_ranked.diagnostics
    assert ("no_backend", "notes/todo.unmappedext") in {(d.code, d.path) for d in found}


def test_the_rows_of_files_no_backend_answers_go_with_the_stored_state(tmp_path):
    """Their rows are among those the stored state was made from: an eviction that reaches
    one stops the state vouching for the rows (see keeps_state_rows)."""
    from repomapper.cachedir import _state_rows

    shop = write_tree(tmp_path / "shop", GENERATED)
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    (state,) = cache.glob("*.state.npz")
    assert {p for p, _, _ in _state_rows(state)} >= {"notes/todo.unmappedext", "shop/cart.py"}


def test_an_eviction_of_rows_no_stored_state_was_made_from_keeps_it_vouching(
    shop, tmp_path, monkeypatch
):
    """Another code version's rows of the same files (the same path and content, other
    backends' fingerprint) go first and leave the stored state's rows alone."""
    import repomapper.cache as cache_module

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    with sqlite3.connect(cache / "content.sqlite3") as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM blobs").fetchone()
        conn.execute(
            "INSERT INTO blobs SELECT path, digest, 'older code', 0, plugin, language, defs,"
            " refs, summary, imports, diagnostics FROM blobs"
        )
    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", rows + 1)
    monkeypatch.setattr(cache_module, "EVICT_SLACK", 0.0)
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as evicting:
        evicting.map()
    with sqlite3.connect(cache / "content.sqlite3") as conn:
        assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone() == (rows + 1,)
    asked = _rows_read(monkeypatch)
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        assert fresh.state.cache.keeps_state_rows()
        got = fresh.map()
    assert set(asked) == {"shop/cart.py", "shop/catalog.py"}  # changed since the state
    same(got, scratch(shop, None))


def test_a_state_whose_rows_may_be_gone_has_its_files_rows_read(shop, tmp_path, monkeypatch):
    """An eviction that reached rows a repository refers to, a content table made afresh or a
    state another cache wrote (a bundle's): the rows are read from the table, as before."""
    import repomapper.cache as cache_module

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    with RepoMap(shop, cache_dir=cache) as again:
        assert again.state.cache.keeps_state_rows()
    with sqlite3.connect(cache / "content.sqlite3") as conn:
        (rows,) = conn.execute("SELECT COUNT(*) FROM blobs").fetchone()
    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", rows - 3)  # the state's own rows go
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as evicting:
        evicting.map()
    monkeypatch.setattr(cache_module, "MAX_CONTENT_ROWS", 10**6)
    asked = _rows_read(monkeypatch)
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][2])
    with RepoMap(shop, cache_dir=cache) as fresh:
        assert not fresh.state.cache.keeps_state_rows()
        got = fresh.map()
    assert len(asked) > 1
    same(got, scratch(shop, None))
    # the state built again vouches for its rows; a content table made afresh does not
    with RepoMap(shop, cache_dir=cache) as rebuilt:
        assert rebuilt.state.cache.keeps_state_rows()
    (cache / "content.sqlite3").unlink()
    for stale in cache.glob("content.sqlite3-*"):
        stale.unlink()
    with RepoMap(shop, cache_dir=cache) as emptied:
        assert not emptied.state.cache.keeps_state_rows()
        same(emptied.map(), scratch(shop, None))


def test_a_new_process_keeps_the_stored_walk_and_roles_for_a_name_nothing_references(
    tmp_path, monkeypatch
):
    """A stored state keeps each file's role weight with its ranks: a new process whose edit
    adds a function nothing calls neither walks the graph nor asks the files' roles again,
    and answers as from scratch (a test file and a generated one weigh below code); with the
    stored pairs' ranks, it ranks again only the edited file's pairs."""
    from repomapper import graphstate, rank

    tree = {**GENERATED, "tests/test_cart.py": "from shop.cart import Cart\n\nCart().total()\n"}
    shop = write_tree(tmp_path / "shop", tree)
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    later(
        shop / "shop" / "cart.py", REPO["shop/cart.py"] + "\n\ndef spare_helper():\n    return 0\n"
    )
    asked: list[str] = []
    walk, roles = graphstate.pagerank, graphstate.role_weights
    again = rank._pair_ranks_again
    monkeypatch.setattr(graphstate, "pagerank", lambda *a: asked.append("walk") or walk(*a))
    monkeypatch.setattr(graphstate, "role_weights", lambda *a: asked.append("roles") or roles(*a))
    monkeypatch.setattr(rank, "_pair_ranks_again", lambda *a: asked.append("pairs") or again(*a))
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map()
        assert fresh.graph_state.how == "updated (1 changed)"
        assert fresh.graph_state.rankings.weights  # (read from the stored state)
    # the stored pair ranks: only the edited file's pairs were ranked again
    assert asked == ["pairs"]
    asked.clear()
    expected = scratch(shop, None)
    assert asked  # (from scratch: walked and asked)
    same(got, expected)
    assert any(s.name == "spare_helper" for s in got.ranked_symbols)


def test_a_new_process_gives_back_the_stored_pages_it_has_read_or_copied(
    shop, tmp_path, monkeypatch
):
    """The stored state's arrays are views of its file: once checked (the load), copied into a
    spliced layout or definition index (an edit that adds a definition), their pages are
    given back (see repomapper.mappedpages), and the map is the one from scratch."""
    from repomapper import definitions, mappedpages, rank
    from repomapper.snapshot import stored

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    given: dict[str, list[bool]] = {}

    def spy(where: str):
        def give_back(*arrays):
            given.setdefault(where, []).extend(
                mappedpages._mapping_of(a) is not None for a in arrays if a is not None
            )
            return mappedpages.give_back(*arrays)

        return give_back

    monkeypatch.setattr(stored, "give_back", spy("load"))
    monkeypatch.setattr(rank, "give_back", spy("layout"))
    monkeypatch.setattr(definitions, "give_back", spy("definitions"))
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])  # adds a method
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map()
        assert fresh.graph_state.how == "updated (1 changed)"
    same(got, scratch(shop, None))
    assert set(given) == {"load", "layout", "definitions"}
    # the load gives back every array of the file; the splices the stored arrays they copied
    assert all(given["load"]) and any(given["layout"]) and any(given["definitions"])


def test_a_state_built_from_cached_summaries_reads_their_texts_when_it_parses_them(
    shop, tmp_path, monkeypatch
):
    """Without a stored state (a new release of the graph code, more changed files than an
    update takes), a new process builds the state from every file's cached summary: the
    lookup reads the rows without their texts, which are read in chunks as the build parses
    them and let go then (the kernel's texts read at once were a third of such a run's
    memory), and the map is the one from scratch."""
    from repomapper import cache as cache_module

    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    for stored_state in cache.glob("*.state.npz"):
        stored_state.unlink()
    later(shop / "shop" / "catalog.py", REPO["shop/catalog.py"] + "\n# a comment\n")
    looked_up: list[bool] = []
    rows_of = cache_module.SqliteTagCache._rows_of

    def spy(self, keys, full, light=False):
        looked_up.append(light)
        return rows_of(self, keys, full, light)

    monkeypatch.setattr(cache_module.SqliteTagCache, "_rows_of", spy)
    with RepoMap(shop, cache_dir=cache) as fresh:
        got = fresh.map()
        assert fresh.graph_state.how == "built"
        assert fresh.last_stats.get("cached") == len(TREE) - 1
    assert looked_up == [True]
    same(got, scratch(shop, None))


def _made_of(files) -> tuple[int, int]:
    """(summaries made, summaries a view holds unmade or made from heads)."""
    from repomapper.summaryview import HeadMade, SummaryView

    assert isinstance(files, SummaryView)
    bases = {id(s): s for p in files if isinstance(s := files.slot(p), HeadMade)}
    return sum(len(b._made) for b in bases.values()), sum(
        isinstance(files.slot(p), HeadMade) for p in files
    )


def test_a_new_process_makes_only_the_summaries_it_reads(tmp_path):
    """A new process that updates the stored state makes the summaries of the changed files
    and of those its map shows, not of every file (a large tree's 78,000 objects were a
    second of each call): ranking makes none of the others. It answers as from scratch."""
    tree = {
        **TREE,
        **{
            f"shop/more/mod_{i}.py": f"from shop.pricing import apply_discount\n\n"
            f"def more_{i}(total):\n    return apply_discount(total, {i})\n"
            for i in range(60)
        },
    }
    shop = write_tree(tmp_path / "shop", tree)
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        ranked = fresh.rank()
        assert fresh.graph_state.how == "updated (1 changed)"
        assert _made_of(fresh.graph_state.files) == (0, len(tree) - 1)
        assert _made_of(ranked.mapped) == (0, len(tree) - 1)
        got = fresh.map()
    same(got, scratch(shop, None))


def test_a_large_trees_stored_state_is_updated_by_a_share_of_its_files():
    assert snapshot.max_changed(10) == snapshot.MAX_CHANGED
    assert snapshot.max_changed(2_800) == snapshot.MAX_CHANGED
    assert snapshot.max_changed(66_750) == 667  # the kernel's mapped files
    assert snapshot.drift_limit(10) == snapshot.MAX_CHANGED
    assert snapshot.drift_limit(66_750) == 3_337  # about one build's cost in updates


def test_more_changed_files_than_the_least_limit_update_a_large_enough_state(
    shop, tmp_path, monkeypatch
):
    cache = tmp_path / "cache"
    with RepoMap(shop, cache_dir=cache) as first:
        first.map()
    monkeypatch.setattr(snapshot, "MAX_CHANGED", 1)
    monkeypatch.setattr(snapshot, "MAX_CHANGED_SHARE", 0.5)  # half of the shop's files
    later(shop / "shop" / "catalog.py", VERSIONS["shop/catalog.py"][1])
    later(shop / "shop" / "cart.py", VERSIONS["shop/cart.py"][1])
    with RepoMap(shop, cache_dir=cache) as fresh:
        same(fresh.map(), scratch(shop, None))
        assert fresh.graph_state.how == "updated (2 changed)"


def test_the_changed_files_of_the_same_keys_are_compared_once(shop, tmp_path):
    """A call that loads a stored state asks which files changed twice (to know whether it
    can update it, then to update it): asked again with the same keys, the answer is the
    one found, and with a changed key it is found again."""
    data, _ = _state_file(shop, tmp_path)
    stored = snapshot.decode(data)
    assert stored is not None
    rm = RepoMap(shop, use_cache=False)
    keys = keys_of(rm, rm.rank())
    assert snapshot.changed_files(stored, keys) == []
    first = stored.last_changed
    assert snapshot.changed_files(stored, dict(keys)) == [] and stored.last_changed is first
    path = sorted(stored.files)[0]
    edited = {**keys, path: keys[path]._replace(digest="other")}
    assert snapshot.changed_files(stored, edited) == [path]
    answer = snapshot.changed_files(stored, edited)
    answer.append("x")  # (each caller gets its own list)
    assert snapshot.changed_files(stored, edited) == [path]
    assert snapshot.changed_files(stored, {p: k for p, k in keys.items() if p != path}) is None
