"""A task map in a new process from the stored ranking state (repomapper.snapshot): the same
bytes as a map ranked from scratch, and never used for files it was not made from."""

from __future__ import annotations

import os

import pytest

from repomapper import snapshot
from repomapper.repomap import RepoMap
from tests.conftest import write_tree

TASKS = [
    "The receipt discount rounding is wrong in apply_discount",
    'Traceback (most recent call last):\n  File "/srv/app/shop/cart.py", line 5, in total\n'
    "ValueError: bad total",
    "the and of",  # only stop words: ranked as without a task
]


@pytest.fixture
def shop(tmp_path):
    from tests.test_relevance import REPO

    return write_tree(tmp_path / "shop", REPO)


def later(path, text: str) -> None:
    path.write_text(text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))


@pytest.mark.parametrize("task", TASKS)
def test_a_task_map_from_the_stored_state_is_the_one_ranked_from_scratch(shop, tmp_path, task):
    cache = tmp_path / "cache"
    first = RepoMap(shop, cache_dir=cache)
    first.map(task="an earlier task")  # builds the state and stores it
    first.close()
    fresh = RepoMap(shop, cache_dir=cache)
    got = fresh.map(task=task)
    assert fresh.last_stats.get("snapshot") == 1
    expected = RepoMap(shop, use_cache=False).map(task=task)
    assert got.to_dict() == expected.to_dict()
    assert got.map == expected.map


def test_a_changed_file_ranks_from_scratch(shop, tmp_path):
    cache = tmp_path / "cache"
    RepoMap(shop, cache_dir=cache).map(task="an earlier task")
    later(
        shop / "shop" / "catalog.py",
        "class Catalog:\n    def lookup_discount(self):\n        pass\n",
    )
    fresh = RepoMap(shop, cache_dir=cache)
    got = fresh.map(task="lookup_discount in the catalog")
    assert fresh.last_stats.get("snapshot") is None
    assert got.map == RepoMap(shop, use_cache=False).map(task="lookup_discount in the catalog").map


def test_a_damaged_snapshot_is_a_miss(shop, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    RepoMap(shop, cache_dir=cache).map(task="an earlier task")
    monkeypatch.setattr(snapshot, "decode", lambda text: None)
    fresh = RepoMap(shop, cache_dir=cache)
    got = fresh.map(task=TASKS[0])
    assert fresh.last_stats.get("snapshot") is None
    assert got.map == RepoMap(shop, use_cache=False).map(task=TASKS[0]).map


@pytest.mark.parametrize("data", [b"", b"not an archive", b"PK\x03\x04\n", b"\x00" * 64, "text"])
def test_unreadable_snapshot_data_decodes_to_nothing(data):
    assert snapshot.decode(data) is None


def test_the_snapshot_holds_the_state_it_was_made_from(shop, tmp_path):
    import numpy as np

    rm = RepoMap(shop, cache_dir=tmp_path / "cache")
    rm.rank()
    state = rm._graph
    snap = snapshot.decode(snapshot.encode(state))
    assert snap is not None and snap.files == tuple(state.graph.files)
    assert snap.prior == state.prior and snap.ranking == state.ranking
    for name in ("R", "D", "I"):
        assert np.array_equal(
            getattr(snap.graph, name).toarray(), getattr(state.graph, name).toarray()
        )
    assert np.array_equal(snap.graph.out_weight, state.graph.out_weight)
    assert dict(snap.defines) == {n: frozenset(d) for n, d in state.table.defines.items()}
    table = snapshot.definitions_table(state.files, snap)
    assert dict(table.definitions) == dict(state.table.definitions)
    assert ("shop/pricing.py", "nowhere") not in table.definitions


def test_a_long_lived_repomap_keeps_its_snapshot_until_a_file_changes(shop, tmp_path):
    cache = tmp_path / "cache"
    RepoMap(shop, cache_dir=cache).map(task="an earlier task")
    rm = RepoMap(shop, cache_dir=cache)
    for task in TASKS[:2]:
        got = rm.map(task=task)
        assert rm.last_stats.get("snapshot") == 1 and rm._graph is None
        assert got.map == RepoMap(shop, use_cache=False).map(task=task).map
    later(shop / "shop" / "pricing.py", "def apply_discount(total, pct):\n    return total * pct\n")
    got = rm.map(task=TASKS[0])
    assert rm.last_stats.get("snapshot") is None and rm._graph is not None  # built, then updated
    assert got.map == RepoMap(shop, use_cache=False).map(task=TASKS[0]).map
    rm.close()


def test_a_map_without_a_task_stores_no_state(shop, tmp_path):
    cache = tmp_path / "cache"
    RepoMap(shop, cache_dir=cache).map()
    fresh = RepoMap(shop, cache_dir=cache)
    fresh.map(task=TASKS[0])
    assert fresh.last_stats.get("snapshot") is None  # built here, and stored for the next task
    again = RepoMap(shop, cache_dir=cache)
    again.map(task=TASKS[1])
    assert again.last_stats.get("snapshot") == 1


def test_a_repository_keeps_one_state_snapshot(shop, tmp_path):
    import sqlite3

    cache = tmp_path / "cache"
    RepoMap(shop, cache_dir=cache).map(task="an earlier task")
    later(shop / "shop" / "catalog.py", "class Catalog:\n    def other(self):\n        pass\n")
    rm = RepoMap(shop, cache_dir=cache)
    rm.map(task="another task")
    rm.close()
    found = 0
    for db in cache.rglob("*.sqlite3"):
        with sqlite3.connect(db) as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
            if "maps" in tables:
                found += conn.execute(
                    "SELECT COUNT(*) FROM maps WHERE key LIKE ?", (snapshot.KEY_PREFIX + "%",)
                ).fetchone()[0]
    assert found == 1
