import logging
import math
import os
from pathlib import Path

import networkx as nx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from repomapper.graph import SymbolTable, build_graph, identifier_multiplier, is_well_named
from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import DEF, REF, FileExtraction, FileSymbols, Tag
from repomapper.rank import factor_graph, pagerank, personalization, rank_definitions
from repomapper.registry import PluginConfig, PluginSet
from repomapper.repomap import RepoMap


def ex(path, defs=(), refs=()):
    tags = [Tag(path, i + 1, i + 1, n, DEF, "function") for i, n in enumerate(defs)]
    tags += [Tag(path, 100 + i, 100 + i, n, REF, "call") for i, n in enumerate(refs)]
    return FileSymbols.from_extraction(FileExtraction(path, tuple(tags), plugin="t"))


def weights(graph, src, dst):
    """(identifier, weight) per name on the src -> dst edges; imports show as ("", weight)."""
    out = []
    for u, v, key, d in graph.edges(keys=True, data=True):
        if (u, v) == (src, dst):
            out += sorted(d["idents"].items()) if key == "refs" else [("", d["weight"])]
    return sorted(out)


@pytest.mark.parametrize(
    "ident,expected",
    [
        ("process_data", True),
        ("processData", True),
        ("process-data", True),
        ("process", False),
        ("PROCESSDATA", False),
        ("short_x", False),
    ],
)
def test_well_named(ident, expected):
    assert is_well_named(ident) is expected


def test_aider_multipliers():
    m = frozenset({"mentioned_thing"})
    assert identifier_multiplier("process_data", 1, frozenset()) == 10
    assert identifier_multiplier("mentioned_thing", 1, m) == 100
    assert identifier_multiplier("_private_helper", 1, frozenset()) == pytest.approx(1.0)
    assert identifier_multiplier("fmt", 6, frozenset()) == pytest.approx(0.1)
    assert identifier_multiplier("fmt", 5, frozenset()) == 1


def test_edge_weights_follow_reference_counts_and_chat():
    files = {
        "main.py": ex("main.py", refs=["process_data"] * 4),
        "utils.py": ex("utils.py", defs=["process_data"]),
        "other.py": ex("other.py", refs=["process_data"]),
    }
    table = SymbolTable.build(files)
    g = build_graph(files, table, {}, chat_files=frozenset({"main.py"}))
    assert weights(g, "main.py", "utils.py") == [
        ("process_data", pytest.approx(10 * 50 * math.sqrt(4)))
    ]
    assert weights(g, "other.py", "utils.py") == [("process_data", pytest.approx(10.0))]


def test_unreferenced_definitions_have_no_self_loops_and_imports_add_edges():
    files = {"a.py": ex("a.py", defs=["lonely"], refs=["lonely"]), "b.py": ex("b.py")}
    table = SymbolTable.build(files)
    g = build_graph(files, table, {"b.py": {"a.py": 4}})
    assert weights(g, "a.py", "a.py") == []  # self-references do not count
    assert table.unreferenced == {("a.py", "lonely")}
    assert weights(g, "b.py", "a.py") == [("", 2.0)]
    fg = factor_graph(files, table, {"b.py": {"a.py": 4}})
    ranking = rank_definitions(fg, table, pagerank(fg, {}))
    assert [d[:2] for d in ranking.definitions] == [("a.py", "lonely")]


def test_targets_narrow_edges_to_the_resolved_definer():
    files = {
        "pkg/mod.py": ex("pkg/mod.py", defs=["run_task"]),
        "other/mod2.py": ex("other/mod2.py", defs=["run_task"]),
        "user.py": FileSymbols.from_extraction(
            FileExtraction(
                "user.py",
                (Tag("user.py", 3, 3, "run_task", REF, "call", target="pkg.mod.run_task"),),
                plugin="python_libcst",  # the backend that reports targets resolves them
            )
        ),
    }
    resolve = RepoMap(Path("."), python_backend="libcst").target_resolver(RepoIndex(".", files))
    g = build_graph(files, SymbolTable.build(files, resolve), {})
    assert weights(g, "user.py", "pkg/mod.py") and not weights(g, "user.py", "other/mod2.py")


def test_personalization_scheme():
    files = ["main.py", "src/utils.py", "setup.py", "x.py"]
    p = personalization(
        files, frozenset({"main.py"}), frozenset({"src/utils.py"}), frozenset({"setup"})
    )
    assert p == {"main.py": 25.0, "src/utils.py": 25.0, "setup.py": 25.0}
    # a mentioned identifier names a file by its stem or name, not by a directory it is in
    p = personalization(files, frozenset(), frozenset(), frozenset({"src", "x.py"}))
    assert p == {"x.py": 25.0}


def test_pagerank_ranks_the_most_referenced_file_first_and_is_deterministic():
    files = {
        "core.py": ex("core.py", defs=["central_thing"]),
        **{f"user{i}.py": ex(f"user{i}.py", refs=["central_thing"]) for i in range(5)},
        "leaf.py": ex("leaf.py", defs=["leaf_function"], refs=["central_thing"]),
    }
    table = SymbolTable.build(files)
    g = factor_graph(files, table, {})
    ranks = pagerank(g, {})
    assert max(ranks, key=ranks.get) == "core.py"
    ranking = rank_definitions(g, table, ranks)
    assert ranking.definitions[0][:2] == ("core.py", "central_thing")
    again = SymbolTable.build(files)
    g2 = factor_graph(files, again, {})
    assert rank_definitions(g2, again, pagerank(g2, {})) == ranking


def test_chat_file_personalization_pulls_its_dependencies_up():
    files = {
        "a.py": ex("a.py", defs=["alpha_function"]),
        "b.py": ex("b.py", defs=["beta_function"]),
        "c.py": ex("c.py", refs=["alpha_function", "alpha_function"]),
        "d.py": ex("d.py", refs=["alpha_function"]),
        "chat.py": ex("chat.py", refs=["beta_function"]),
    }
    table = SymbolTable.build(files)
    plain = pagerank(factor_graph(files, table, {}), {})
    assert plain["a.py"] > plain["b.py"]
    chat = frozenset({"chat.py"})
    g = factor_graph(files, table, {}, chat_files=chat)
    boosted = pagerank(g, personalization(files, chat, frozenset(), frozenset()))
    assert boosted["b.py"] > boosted["a.py"]


def _random_repo(seed):
    import random

    rnd = random.Random(seed)
    names = [f"name_{i}" if i % 3 else f"n{i}" for i in range(25)]
    files = {}
    for f in range(12):
        path = f"pkg/f{f}.py"
        files[path] = ex(
            path,
            defs=rnd.sample(names, rnd.randint(0, 4)),
            refs=rnd.choices(names, k=rnd.randint(0, 12)),
        )
    imports = {
        f"pkg/f{rnd.randrange(12)}.py": {f"pkg/f{rnd.randrange(12)}.py": rnd.randint(1, 3)}
        for _ in range(6)
    }
    return files, imports


@pytest.mark.parametrize("seed", range(8))
def test_factored_pagerank_equals_networkx_on_the_explicit_graph(seed):
    files, imports = _random_repo(seed)
    table = SymbolTable.build(files)
    chat = frozenset({"pkg/f0.py"})
    mentioned = frozenset({"name_4"})
    pers = personalization(files, chat, frozenset(), mentioned)
    explicit = build_graph(files, table, imports, chat, mentioned)
    expected = nx.pagerank(
        explicit,
        weight="weight",
        personalization=pers or None,
        dangling=pers or None,
        tol=1e-12,
        max_iter=1000,
    )
    got = pagerank(factor_graph(files, table, imports, chat, mentioned), pers)
    for f in files:
        assert got[f] == pytest.approx(expected[f], rel=1e-5, abs=1e-7)
    # and the per-identifier distribution matches the explicit edges
    fg = factor_graph(files, table, imports, chat, mentioned)
    ranking = dict(
        ((f, i), r) for f, i, r in rank_definitions(fg, table, expected, mentioned).definitions
    )
    manual = {}
    for src in explicit.nodes:
        out = list(explicit.out_edges(src, keys=True, data=True))
        total = sum(d["weight"] for *_, d in out)
        for _, dst, key, d in out:
            if key == "refs":
                for ident, w in d["idents"].items():
                    manual[(dst, ident)] = manual.get((dst, ident), 0) + expected[src] * w / total
    for k, v in manual.items():
        boost = 10 if k[1] in mentioned else 1
        assert ranking[k] >= v * boost * (1 - 1e-6)


def _owned_by(plugin: str, target: str) -> dict[str, FileSymbols]:
    """``pkg/mod.py`` and ``other/mod2.py`` both define ``run_task``; ``user.py`` (extracted by
    ``plugin``) references it with the qualified ``target``."""
    tag = Tag("user.py", 3, 3, "run_task", REF, "call", target=target)
    return {
        "pkg/mod.py": ex("pkg/mod.py", defs=["run_task"]),
        "other/mod2.py": ex("other/mod2.py", defs=["run_task"]),
        "user.py": FileSymbols.from_extraction(FileExtraction("user.py", (tag,), plugin=plugin)),
    }


class DotSlashTargets:
    """A backend whose targets are paths (``pkg/mod.py#run_task``), not Python names."""

    def __init__(self, raises: bool = False, answer=None):
        self.raises = raises
        self.answer = answer
        self.calls: list[tuple[str, str]] = []

    @hookimpl
    def resolve_target(self, file_path, target, index):
        self.calls.append((file_path, target))
        if self.raises:
            raise RuntimeError("boom")
        if self.answer is not None:
            return self.answer
        path = target.split("#", 1)[0]
        return [path] if path in index.files else []


def _resolver(backend, name="paths"):
    plugins = PluginSet(PluginConfig(python_backend="libcst"))
    plugins.pm.register(backend, name=name)
    return RepoMap(Path("."), plugins=plugins)


def test_targets_are_resolved_by_the_backend_that_owns_the_file_not_as_python():
    backend = DotSlashTargets()
    files = _owned_by("paths", "other/mod2.py#run_task")
    rm = _resolver(backend)
    table = SymbolTable.build(files, rm.target_resolver(RepoIndex(".", files)))
    assert backend.calls == [("user.py", "other/mod2.py#run_task")]
    assert table.chosen_definers("user.py", "run_task") == ["other/mod2.py"]
    # a Python-looking target from this backend is not read with Python's rules by the core
    files = _owned_by("paths", "pkg.mod.run_task")
    table = SymbolTable.build(files, rm.target_resolver(RepoIndex(".", files)))
    assert table.chosen_definers("user.py", "run_task") == ["other/mod2.py", "pkg/mod.py"]


def test_python_targets_resolve_only_through_a_python_backend():
    files = _owned_by("python_libcst", "pkg.mod.run_task")
    rm = _resolver(DotSlashTargets())
    table = SymbolTable.build(files, rm.target_resolver(RepoIndex(".", files)))
    assert table.chosen_definers("user.py", "run_task") == ["pkg/mod.py"]
    # a backend without the hook leaves every definer linked
    files = _owned_by("python_ast", "pkg.mod.run_task")
    rm = RepoMap(Path("."), plugins=PluginSet(PluginConfig()))
    table = SymbolTable.build(files, rm.target_resolver(RepoIndex(".", files)))
    assert table.chosen_definers("user.py", "run_task") == ["other/mod2.py", "pkg/mod.py"]


@pytest.mark.parametrize(
    "backend",
    [
        DotSlashTargets(raises=True),
        DotSlashTargets(answer="pkg/mod.py"),  # a string, not a sequence of paths
        DotSlashTargets(answer=["../etc/passwd", 3, "nowhere.py"]),
    ],
)
def test_a_failing_or_garbage_resolver_keeps_every_definer(backend, caplog):
    files = _owned_by("paths", "pkg/mod.py#run_task")
    rm = _resolver(backend)
    with caplog.at_level(logging.WARNING, logger="repomapper.repomap"):
        table = SymbolTable.build(files, rm.target_resolver(RepoIndex(".", files)))
    assert table.chosen_definers("user.py", "run_task") == ["other/mod2.py", "pkg/mod.py"]
    if backend.raises:
        assert "user.py: resolving target 'pkg/mod.py#run_task' failed: boom" in caplog.text


@given(st.lists(st.text("ab._-", min_size=1, max_size=6), min_size=1, max_size=4))
def test_path_parts_are_the_name_and_stem_pathlib_gives(parts):
    from pathlib import PurePosixPath

    from repomapper.rank import path_parts

    parts = [x for x in parts if x not in (".", "..")]  # mapped paths are normalised
    path = "/".join(parts)
    p = PurePosixPath(path)
    if parts:
        assert path_parts(path) == frozenset((p.name, p.stem))


def test_page_ranked_files_read_as_the_tuple_they_stand_for():
    from repomapper.model import RankedFile, Reason
    from repomapper.ranked import PageRankedFiles

    ranks = {"b.py": 0.5, "a.py": 0.5, "c.py": 0.9}
    lazy = PageRankedFiles(ranks)
    made = tuple(
        RankedFile(f, r, (Reason("pagerank", "reference graph", r),))
        for f, r in [("c.py", 0.9), ("a.py", 0.5), ("b.py", 0.5)]
    )
    assert len(lazy) == 3 and tuple(lazy) == made and lazy == made and lazy == list(made)
    assert lazy[0] == made[0] and lazy[-1] == made[-1] and lazy[:2] == made[:2]
    assert lazy == PageRankedFiles(dict(ranks)) and lazy != made[:2]


@given(
    st.dictionaries(
        st.text("abc./", min_size=1, max_size=4),
        st.sampled_from([0.0, 0.25, 0.5, 1e-9, 0.75]),
        min_size=1,
        max_size=12,
    )
)
def test_page_ranked_files_made_at_once_are_the_files_made_one_by_one(ranks):
    import dataclasses

    from repomapper.model import RankedFile, Reason
    from repomapper.ranked import PageRankedFiles, files_made

    order = sorted(ranks.items(), key=lambda x: (-x[1], x[0]))  # best first, ties by path
    expected = tuple(
        RankedFile(f, r, (Reason("pagerank", "reference graph", r),)) for f, r in order
    )
    lazy = PageRankedFiles(ranks)
    made = files_made(lazy)
    assert type(made) is tuple and made == expected == tuple(lazy)
    assert all(type(f) is RankedFile and type(f.why[0]) is Reason for f in made)
    with pytest.raises(dataclasses.FrozenInstanceError):
        made[0].score = 1.0  # type: ignore[misc]  # still frozen
    assert files_made(list(expected)) == expected


def test_ranked_files_made_without_init_are_the_same_frozen_values():
    import dataclasses

    from repomapper.model import RankedFile, Reason, made_ranked_file, made_reason

    why = (made_reason("pagerank", "reference graph", 0.25),)
    made = made_ranked_file("a.py", 0.25, why)
    plain = RankedFile("a.py", 0.25, (Reason("pagerank", "reference graph", 0.25),))
    assert made == plain and hash(made) == hash(plain) and repr(made) == repr(plain)
    assert RankedFile.from_dict(plain.to_dict()) == plain
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.score = 1.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        why[0].weight = 1.0  # type: ignore[misc]


@given(
    st.lists(
        st.tuples(
            st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 3.5]), st.integers(0, 4), st.booleans()
        ),
        max_size=12,
    )
)
def test_task_map_streams_start_lazily_and_merge_in_key_order(rows):
    """ranked._merged against heapq.merge over every stream, on streams shaped like a task map's
    (the k-th item of a file with score s at position pos has key (-s / (k + 1), pos, k); a file
    whose first item was shown already starts at k = 1)."""
    import heapq

    from repomapper.model import RankedFile
    from repomapper.ranked import _merged

    files = [(pos, RankedFile(f"f{pos}.py", score)) for pos, (score, _, _) in enumerate(rows)]

    def stream(pos, rf):
        _, n, skip_first = rows[pos]
        for k in range(1 if skip_first else 0, max(n, 1)):
            yield (-rf.score / (k + 1), pos, k), (rf.path, k)

    expected = [item for _, item in heapq.merge(*(stream(p, rf) for p, rf in files))]
    got = list(_merged(files, stream))
    assert got == expected
    taken = list(_merged(files, stream))[:3]  # a consumer that stops early...
    assert taken == expected[:3]


@given(
    st.lists(
        st.tuples(
            # 0.1 + 0.2 and 0.3 round to one score, 1/3 and 0.333333333333 too: ties made by
            # the rounding, across the head's bound
            st.sampled_from([0.0, 1e-9, 0.25, 0.1 + 0.2, 0.3, 1 / 3, 0.333333333333, 2.0]),
            st.integers(0, 5),
        ),
        min_size=1,
        max_size=300,
    ),
    st.integers(1, 40),
)
def test_pair_order_head_is_the_start_of_the_whole_order(pairs, head):
    """The first pairs, rounded and sorted alone, are the start of the full sort of the rounded
    scores (ties at the head's last score included), and a lazily ordered RankedPairs reads as
    the eagerly ordered one."""
    import numpy as np

    from repomapper.rank import PairOrder, RankedPairs, stable_array

    raw = np.array([s for s, _ in pairs], dtype=np.float64)
    scores = stable_array(raw)
    pair_file = np.array([f for _, f in pairs], dtype=np.int32)
    file_scores = np.array([0.3, 0.1, 0.3, 0.0, 0.9, 0.2])
    expected = np.lexsort((-file_scores[pair_file], -scores))
    order = PairOrder(raw, file_scores, pair_file, head)  # small: the partition runs
    start = order.head()
    assert len(start) >= min(head, len(pairs))
    assert start.tolist() == expected[: len(start)].tolist()
    assert order.scores(start).tolist() == scores[start].tolist()
    assert order.all().tolist() == expected.tolist()

    files = np.array([f"f{i}.py" for i in range(6)], dtype=object)
    names = np.array([f"n{i}" for i in range(len(pairs))], dtype=object)
    kept = np.arange(len(pairs), dtype=np.int32)
    eager = RankedPairs(files, pair_file[expected], names, kept[expected], scores[expected])
    lazy = RankedPairs.ordered(
        files, pair_file, names, kept, PairOrder(raw, file_scores, pair_file, head)
    )
    assert len(lazy) == len(eager)
    assert lazy[0] == eager[0] and lazy[-1] == eager[-1] and lazy[:head] == eager[:head]
    assert list(lazy) == list(eager) and lazy.ranks().tolist() == eager.ranks().tolist()


def test_pair_order_head_holds_the_scores_the_rounding_ties():
    """0.3 and 0.1 + 0.2 round to one score: a head cut at the latter holds the former too."""
    import numpy as np

    from repomapper.rank import PairOrder, stable_array

    raw = np.array([0.3] * 5 + [0.1 + 0.2] * 5 + [2.0] * 3 + [0.0] * 50)
    pair_file = np.array([(i * 7) % 6 for i in range(len(raw))], dtype=np.int32)
    file_scores = np.array([0.3, 0.1, 0.3, 0.0, 0.9, 0.2])
    expected = np.lexsort((-file_scores[pair_file], -stable_array(raw)))
    start = PairOrder(raw, file_scores, pair_file, 4).head()
    assert len(start) == 13 and start.tolist() == expected[:13].tolist()


def test_an_edit_that_keeps_the_ranking_keeps_the_ranked_files(tmp_path, monkeypatch):
    """A long-lived map whose file ranks an edit left as they were answers with the same
    ranked files (made once: on a large tree a hundred thousand objects per call)."""
    cache, tmp_path = tmp_path / "cache", tmp_path / "repo"
    tmp_path.mkdir()
    (tmp_path / "a.py").write_text("def used():\n    return 1\n")
    (tmp_path / "b.py").write_text("from a import used\n\n\ndef caller():\n    return used()\n")
    for i in range(8):  # (an update, not a rebuild: one changed file of many)
        (tmp_path / f"c{i}.py").write_text(f"def helper_{i}():\n    return {i}\n")
    for path in tmp_path.glob("*.py"):  # written well before the maps (settled stats)
        os.utime(path, ns=(1_600_000_000_000_000_000, 1_600_000_000_000_000_000))
    rm = RepoMap(tmp_path, cache_dir=cache)
    first = rm.map()
    (tmp_path / "b.py").write_text(
        "from a import used\n\n\ndef caller():\n    # a comment\n    return used()\n"
    )
    second = rm.map()
    assert second.ranked_files == first.ranked_files
    assert second.ranked_files[0] is first.ranked_files[0]
    # a name nothing references: every file's rank stays, and so do the files made for it
    (tmp_path / "b.py").write_text(
        "from a import used\n\n\ndef caller():\n    return used()\n\n\ndef spare():\n    pass\n"
    )
    from repomapper import graphstate

    walks, roles = [], []
    real_walk, real_roles = graphstate.pagerank, graphstate.role_weights
    monkeypatch.setattr(graphstate, "pagerank", lambda *a: walks.append(1) or real_walk(*a))
    monkeypatch.setattr(graphstate, "role_weights", lambda *a: roles.append(1) or real_roles(*a))
    third = rm.map()
    assert list(rm.state.graphs._states.values())[0].how.startswith("updated")
    assert third.ranked_files[0] is first.ranked_files[0]
    assert not walks and not roles  # (the walk over the files is the one before)
    fresh = RepoMap(tmp_path, use_cache=False).map()
    assert (fresh.map, fresh.ranked_files, fresh.ranked_symbols) == (
        third.map,
        third.ranked_files,
        third.ranked_symbols,
    )
    assert any(s.name == "spare" for s in third.ranked_symbols)
    # a reference that moves the ranks: the files are made again
    (tmp_path / "b.py").write_text(
        "from a import used\nfrom c0 import helper_0\n\n\ndef caller():\n"
        "    return used() + helper_0()\n"
    )
    fourth = rm.map()
    assert walks and roles  # (a reference moves rank between files: walked again)
    assert fourth.ranked_files != first.ranked_files
    assert fourth.ranked_files[0] is not first.ranked_files[0]
    rm.close()


@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 9), st.floats(0.001, 50.0)),
        min_size=1,
        max_size=80,
    ),
    st.sampled_from(["column", "row", "neither"]),
)
def test_a_large_sparse_matrix_multiplies_through_scipy_to_the_same_bits(entries, by):
    """Past CSR_ENTRIES entries sorted by column or by row, ``M.T @ w`` goes through scipy's
    compressed kernels: the same sums, to the last bit, as the entries added in their order;
    other entries keep the plain product."""
    import numpy as np

    from repomapper import rank

    if by != "neither":  # (stable: a column's or row's entries keep their order)
        entries = sorted(entries, key=lambda e: e[1] if by == "column" else e[0])
    rows = np.array([r for r, _, _ in entries], dtype=np.int32)
    cols = np.array([c for _, c, _ in entries], dtype=np.int32)
    vals = np.array([v for _, _, v in entries], dtype=np.float64)
    w = np.array([0.1, 1 / 3, 2.5, 1e-7, 0.7, 3.0, 0.2])
    expected = np.bincount(cols, vals * w[rows], minlength=10)
    old = rank.CSR_ENTRIES
    rank.CSR_ENTRIES = 1
    try:
        m = rank.Coo(rows, cols, vals, (7, 10))
        assert m.tdot(w).tolist() == expected.tolist()  # the first product: numpy's
        got = m.tdot(w)
        either = bool((cols[1:] >= cols[:-1]).all() or (rows[1:] >= rows[:-1]).all())
        assert (m._transposed is not None) == either
    finally:
        rank.CSR_ENTRIES = old
    assert got.tolist() == expected.tolist()


@given(
    st.lists(
        st.tuples(st.integers(0, 6), st.integers(0, 9), st.floats(0.001, 50.0)),
        min_size=1,
        max_size=80,
    ),
    st.lists(st.integers(0, 9), max_size=12),
    st.booleans(),
)
def test_some_columns_of_a_product_are_the_whole_product_s_to_the_same_bits(
    entries, columns, by_column
):
    """``tdot_at`` reads only the asked columns' entries when the entries are sorted by
    column (else it takes them from the whole product): the same sums, to the last bit."""
    import numpy as np

    from repomapper import rank

    if by_column:
        entries = sorted(entries, key=lambda e: e[1])
    rows = np.array([r for r, _, _ in entries], dtype=np.int32)
    cols = np.array([c for _, c, _ in entries], dtype=np.int32)
    vals = np.array([v for _, _, v in entries], dtype=np.float64)
    w = np.array([0.1, 1 / 3, 2.5, 1e-7, 0.7, 3.0, 0.2])
    asked = np.array(columns, dtype=np.int32)
    m = rank.Coo(rows, cols, vals, (7, 10))
    whole = np.bincount(cols, vals * w[rows], minlength=10)
    assert m.tdot_at(w, asked).tolist() == whole[asked].tolist()
