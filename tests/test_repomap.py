import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper import RepoMap
from repomapper.tokens import default_counter
from tests.conftest import git


def test_map_of_fixture_repo_ranks_the_core_and_stays_in_budget(pyrepo, tmp_path):
    rm = RepoMap(pyrepo, 400, cache_dir=tmp_path / "c")
    r = rm.map()
    assert 0 < r.tokens <= 400 == r.budget
    assert default_counter().count(r.map) == r.tokens
    top = [f.path for f in r.ranked_files[:3]]
    assert "shop/catalog.py" in top and "shop/money.py" in top
    assert "class Catalog:" in r.map and "def format_price(cents: int) -> str:" in r.map


def test_get_repo_map_mirrors_aider(pyrepo):
    rm = RepoMap(pyrepo, map_tokens=1024, use_cache=False)
    text = rm.get_repo_map(
        chat_files=[str(pyrepo / "shop/orders.py")],
        other_files=[str(p) for p in sorted(pyrepo.rglob("*.py"))],
    )
    assert "shop/orders.py" not in text
    assert "shop/catalog.py:" in text


def test_byte_identical_across_runs_and_cache_states(pyrepo, tmp_path):
    import json

    def out(root, **kw):
        return json.dumps(RepoMap(root, 300, **kw).map().to_dict(), sort_keys=True)

    cache = tmp_path / "cache"
    outs = [out(pyrepo, cache_dir=cache) for _ in range(3)]  # cold, then warm
    outs.append(out(pyrepo, use_cache=False, jobs=2))
    # touched: an edit and its undo leave the map as it was, in a new process and a live one
    live = RepoMap(pyrepo, 300, use_cache=False)  # no memo: each call ranks (incrementally)
    live.map()
    money = pyrepo / "shop/money.py"
    original = money.read_text()
    money.write_text(original + "\n\ndef while_touched():\n    pass\n")
    assert out(pyrepo, cache_dir=cache) != outs[0] and live.map().to_dict()
    money.write_text(original)
    outs.append(out(pyrepo, cache_dir=cache))
    outs.append(json.dumps(live.map().to_dict(), sort_keys=True))
    assert live.graph_state.how.startswith("updated")
    clone = tmp_path / "clone"  # cloned: another directory, the same cache
    shutil.copytree(pyrepo, clone)
    outs.append(out(clone, cache_dir=cache))
    outs.append(out(clone, use_cache=False))
    assert all(o == outs[0] for o in outs)


def test_git_and_walk_give_the_same_map(pyrepo, tmp_path):
    walked = RepoMap(pyrepo, 300, use_cache=False).map().map
    copy = tmp_path / "gitcopy"
    shutil.copytree(pyrepo, copy)
    git(copy, "init", "-q")
    git(copy, "add", ".")
    git(copy, "commit", "-qm", "x")
    assert RepoMap(copy, 300, use_cache=False).map().map == walked


def test_deleted_file_after_extraction_still_renders(pyrepo, tmp_path):
    rm = RepoMap(pyrepo, 2000, cache_dir=tmp_path / "c")
    rm.map()
    other = sorted(str(p) for p in pyrepo.rglob("*.py"))
    (pyrepo / "shop/money.py").unlink()
    r = rm.map(other_files=other)
    assert any(d.path == "shop/money.py" for d in r.diagnostics)
    assert r.map


def test_embedder_token_counter(pyrepo):
    r = RepoMap(pyrepo, 50, token_counter=lambda s: len(s.split()), use_cache=False).map()
    assert r.tokenizer.startswith("custom:") and len(r.map.split()) == r.tokens <= 50


@settings(max_examples=15)
@given(st.integers(min_value=1, max_value=3000))
def test_budget_is_a_hard_cap(budget):
    from tests.conftest import FIXTURES

    r = RepoMap(FIXTURES / "pyrepo", budget, use_cache=False, jobs=1).map()
    assert r.tokens <= budget
    assert default_counter().count(r.map) == r.tokens


_names = st.sampled_from(
    ["alpha_handler", "beta", "GammaService", "_delta", "epsilon_value", "zeta"]
)


@settings(max_examples=10)
@given(
    st.lists(
        st.tuples(st.lists(_names, max_size=3), st.lists(_names, max_size=5)),
        min_size=1,
        max_size=6,
    ),
    st.integers(min_value=20, max_value=400),
)
def test_maps_are_deterministic_for_any_repository(tmp_path_factory, files, budget):
    root = tmp_path_factory.mktemp("gen")
    for i, (defs, refs) in enumerate(files):
        body = "".join(f"def {d}():\n    return 1\n\n" for d in sorted(set(defs)))
        body += "".join(f"{r}()\n" for r in refs)
        (root / f"m{i}.py").write_text(body)
    first = RepoMap(root, budget, use_cache=False, jobs=1).map().to_dict()
    cache = tmp_path_factory.mktemp("cache")
    second = RepoMap(root, budget, cache_dir=cache).map().to_dict()
    third = RepoMap(root, budget, cache_dir=cache).map().to_dict()  # memoised replay
    assert first == second == third
    assert first["tokens_estimated"] <= budget


def test_explicit_files_get_the_same_checks_as_discovered_ones(pyrepo, tmp_path):
    import os

    secret = tmp_path / "secret.py"
    secret.write_text("def leaked_secret_function():\n    pass\n")
    os.symlink(secret, pyrepo / "escape.py")
    rm = RepoMap(pyrepo, 2000, use_cache=False)
    r = rm.map(
        chat_files=["escape.py"], other_files=["escape.py", "shop/money.py", "missing.py", "shop"]
    )
    codes = {(d.code, d.path) for d in r.diagnostics}
    escaped = [d for d in r.diagnostics if d.code == "symlink_outside_root"]
    assert escaped and escaped[0].paths == ("escape.py",)
    assert ("unreadable", "missing.py") in codes and ("not_a_file", "shop") in codes
    assert "leaked_secret_function" not in r.map
    assert [f.path for f in r.ranked_files] == ["shop/money.py"]


def test_force_refresh_ranks_again_instead_of_replaying(pyrepo, tmp_path, monkeypatch):
    rm = RepoMap(pyrepo, 512, cache_dir=tmp_path / "c")
    first = rm.get_repo_map()
    assert rm.get_repo_map() == first and rm.last_stats.get("memoised") == 1
    from repomapper.stages import mapping

    rendered = []
    real = mapping.render
    monkeypatch.setattr(mapping, "render", lambda *a: rendered.append(1) or real(*a))
    assert rm.get_repo_map(force_refresh=True) == first
    assert rendered == [1] and "memoised" not in rm.last_stats
    assert rm.get_repo_map() == first and rendered == [1]  # the refreshed map is memoised again


def test_nonsensical_numbers_are_refused(pyrepo):
    for kwargs in ({"max_file_size": -1}, {"jobs": 0}, {"map_tokens": 0}):
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            RepoMap(pyrepo, **{"map_tokens": 10, **kwargs})


def test_stage_timer_counts_nested_stages_once():
    import time

    from repomapper.timings import StageTimer

    t = StageTimer()
    start = time.perf_counter()
    with t.stage("rank"):
        time.sleep(0.01)
        with t.stage("graph"):
            time.sleep(0.02)
    elapsed = time.perf_counter() - start
    assert [s for s, _ in t.ordered()] == ["graph", "rank"]
    assert t.seconds["graph"] >= 0.02 and t.seconds["rank"] >= 0.01
    assert t.seconds["graph"] + t.seconds["rank"] <= elapsed  # the inner stage is not counted twice
    assert t.describe().startswith("graph 0.0")
    t.reset()
    assert t.describe() == ""


def test_a_fresh_clone_a_branch_switch_and_a_same_size_edit_use_content_keys(pyrepo, tmp_path):
    import os

    cache = tmp_path / "cache"
    first = RepoMap(pyrepo, 300, cache_dir=cache).map(task="receipt total")
    clone = tmp_path / "clone"
    shutil.copytree(pyrepo, clone)  # new mtimes, another root: nothing to go by but content
    rm = RepoMap(clone, 300, cache_dir=cache)
    assert rm.map(task="receipt total").to_dict() == first.to_dict()
    assert rm.last_stats.get("memoised") == 1  # the map itself was replayed
    rm.map(task="something else entirely")
    assert rm.last_stats["extracted"] == 0 and rm.last_stats["cached"] > 0

    # a branch switched away and back: both versions of the file stay cached
    money = clone / "shop/money.py"
    original = money.read_text()
    money.write_text(original + "\n\ndef on_the_branch():\n    return 1\n")
    assert "on_the_branch" in RepoMap(clone, 2000, cache_dir=cache).map().map
    money.write_text(original)
    back = RepoMap(clone, 300, cache_dir=cache)
    back.map(task="back on main")
    assert back.last_stats["extracted"] == 0

    # same size, same mtime, other content (a coarse-clock file system): still seen
    stat = money.stat()
    money.write_text(original[:-1] + "#")
    os.utime(money, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert money.stat().st_size == stat.st_size
    again = RepoMap(clone, 300, cache_dir=cache)
    again.map(task="back on main")
    assert again.last_stats["extracted"] == 1


def test_a_map_that_names_its_root_is_not_replayed_for_a_clone(tmp_path):
    cache = tmp_path / "cache"
    one, two = tmp_path / "one", tmp_path / "two"
    for root in (one, two):
        root.mkdir()
        (root / "notes.txt").write_text("nothing to map here\n")
    first = RepoMap(one, 300, cache_dir=cache).map(other_files=[])
    second = RepoMap(two, 300, cache_dir=cache).map(other_files=[])
    assert any(str(one) in d.message for d in first.diagnostics)
    assert all(str(one) not in d.message for d in second.diagnostics)
    assert any(str(two) in d.message for d in second.diagnostics)
