"""The graph state updated per changed file equals the state built from scratch."""

from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper.graphstate import StateInputs, build_state, update_state
from repomapper.model import DEF, REF, FileExtraction, FileSymbols, Import, Tag

NAMES = ["alpha", "beta", "gamma_value", "DeltaThing", "_eps", "zeta_function", "eta"]
KINDS = ["function", "class", "variable", "method"]
FILES = [f"pkg/m{i}.py" for i in range(6)]


def summary(path, defs, refs, targets, imports):
    tags = [
        Tag(path, i + 1, i + 1, n, DEF, kind, "C" if kind == "method" else "")
        for i, (n, kind) in enumerate(defs)
    ]
    tags += [
        Tag(path, 100 + i, 100 + i, n, REF, "call", target=f"{t}:{n}" if t else None)
        for i, (n, t) in enumerate(zip(refs, targets, strict=True))
    ]
    imps = tuple(Import(path, f, line_number=200 + i) for i, f in enumerate(imports))
    return FileSymbols.from_extraction(FileExtraction(path, tuple(tags), imps, plugin="t"))


def file_strategy(path):
    refs = st.lists(st.sampled_from(NAMES), max_size=8)
    return st.builds(
        lambda defs, refs, targets, imports: summary(
            path, defs, refs, (targets * 8)[: len(refs)], imports
        ),
        st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(KINDS)), max_size=4),
        refs,
        st.lists(st.sampled_from([None, *FILES]), min_size=1, max_size=3),
        st.lists(st.sampled_from(FILES), max_size=2),
    )


def repo_strategy():
    return st.fixed_dictionaries({p: file_strategy(p) for p in FILES})


def inputs(chat=frozenset(), mentioned=frozenset()):
    def imports_of(path, fs, index):
        return Counter(i.source for i in fs.imports if i.source in index.files and i.source != path)

    def targets(index):
        return lambda fs, target: (
            (target.split(":")[0],) if target.split(":")[0] in index.files else ()
        )

    return StateInputs(Path("."), imports_of, targets, chat, frozenset(), mentioned)


def drawn_boosts(data, most):
    """Chat files and mentioned names drawn for a call (at most ``most`` of each)."""
    chat = frozenset(data.draw(st.lists(st.sampled_from(FILES), max_size=most)))
    mentioned = frozenset(data.draw(st.lists(st.sampled_from(NAMES), max_size=most)))
    return chat, mentioned


def same(a, b):
    # a name's definers are a collection (a set, or a tuple for one definer)
    assert {n: set(d) for n, d in a.table.defines.items()} == {
        n: set(d) for n, d in b.table.defines.items()
    }
    assert a.table.references == b.table.references
    assert dict(a.table.definitions) == dict(b.table.definitions)
    assert {k: v for k, v in a.table.targets.items() if v} == {
        k: v for k, v in b.table.targets.items() if v
    }
    assert a.table.unreferenced == b.table.unreferenced
    assert a.table.data_only == b.table.data_only
    assert a.table.top_level == b.table.top_level
    assert dict(a.imports) == dict(b.imports)
    assert list(a.graph.columns) == list(b.graph.columns)
    for m in ("R", "D", "I"):
        assert np.array_equal(getattr(a.graph, m).toarray(), getattr(b.graph, m).toarray())
    assert a.prior == b.prior
    assert a.ranking == b.ranking
    assert a.by_file == b.by_file


@settings(max_examples=150, deadline=None)
@given(repo_strategy(), st.data())
def test_update_equals_build(before, data):
    chat, mentioned = drawn_boosts(data, 1)
    state = build_state(before, inputs(chat, mentioned))
    files = dict(before)
    for _ in range(data.draw(st.integers(1, 3))):  # a few edits in a row, each checked
        for path in data.draw(st.lists(st.sampled_from(FILES), max_size=2, unique=True)):
            files[path] = data.draw(file_strategy(path))
        if data.draw(st.booleans()):  # the next call asks with other chat files and mentions
            chat, mentioned = drawn_boosts(data, 2)
        state = update_state(state, dict(files), inputs(chat, mentioned))
        same(state, build_state(dict(files), inputs(chat, mentioned)))


def test_unchanged_files_keep_the_state_and_a_changed_file_set_rebuilds():
    files = {p: summary(p, [("alpha", "function")], ["beta"], [None], []) for p in FILES}
    state = build_state(files, inputs())
    assert update_state(state, dict(files), inputs()) is state
    edited = {**files, FILES[0]: summary(FILES[0], [("beta", "class")], ["alpha"], [None], [])}
    assert update_state(state, edited, inputs()).how.startswith("updated (1 changed)")
    assert update_state(state, edited, inputs(chat=frozenset({FILES[1]}))).how.startswith("updated")
    fewer = {p: fs for p, fs in files.items() if p != FILES[-1]}
    assert update_state(state, fewer, inputs()).how == "built"


def test_an_earlier_state_is_not_changed_by_an_update():
    files = {
        p: summary(p, [("alpha", "function")], ["beta", "alpha"], [None, None], []) for p in FILES
    }
    state = build_state(files, inputs())
    snapshot = (dict(state.table.references), set(state.table.unreferenced), state.ranking)
    edited = {**files, FILES[0]: summary(FILES[0], [("beta", "class")], ["alpha"], [None], [])}
    update_state(state, edited, inputs())
    assert (dict(state.table.references), set(state.table.unreferenced), state.ranking) == snapshot


def test_a_long_lived_repomap_updates_its_state_and_answers_as_a_fresh_one(pyrepo, tmp_path):
    from repomapper import RepoMap

    rm = RepoMap(pyrepo, 400, cache_dir=tmp_path / "c")
    before = rm.map()
    target = sorted(p for p in pyrepo.rglob("*.py") if p.stat().st_size > 200)[0]
    target.write_text(target.read_text() + "\n\ndef freshly_added_helper(x):\n    return x\n")
    for task in (None, "freshly_added_helper"):
        after = rm.map(task=task)
        assert rm.graph_state.how == "updated (1 changed)"  # the second call reuses the update
        fresh = RepoMap(pyrepo, 400, use_cache=False).map(task=task)
        assert (after.map, after.ranked_files, after.ranked_symbols) == (
            fresh.map,
            fresh.ranked_files,
            fresh.ranked_symbols,
        )
    assert before.ranked_files != after.ranked_files


def test_a_changed_configuration_file_rebuilds_the_state(tmp_path):
    """Backends read files that are not mapped to resolve imports (tsconfig.json paths, go.mod):
    a long-lived RepoMap and the MCP tools' tables must see their changes too."""
    import json
    import os

    from repomapper import RepoMap
    from repomapper.stages import current_tables

    root = tmp_path / "web"
    (root / "src" / "one").mkdir(parents=True)
    (root / "src" / "two").mkdir(parents=True)
    (root / "src" / "one" / "fmt.ts").write_text("export function fmt(x: number) { return x; }\n")
    (root / "src" / "two" / "fmt.ts").write_text("export function fmt(x: number) { return x; }\n")
    (root / "src" / "app.ts").write_text('import { fmt } from "@lib/fmt";\nfmt(1);\n')
    config = root / "tsconfig.json"

    def point_at(folder: str, tick: int) -> None:
        paths = {"@lib/*": [f"src/{folder}/*"]}
        config.write_text(json.dumps({"compilerOptions": {"baseUrl": ".", "paths": paths}}))
        os.utime(config, ns=(tick * 10**9, tick * 10**9))  # a distinct mtime, whatever the clock

    point_at("one", 1)
    rm = RepoMap(root, 300, use_cache=False)
    live = RepoMap(root, use_cache=False).state
    assert rm.rank().imports["src/app.ts"] == {"src/one/fmt.ts": 1}
    assert current_tables(live).imports["src/app.ts"] == {"src/one/fmt.ts": 1}
    point_at("two", 2)
    ranked = rm.rank()
    assert ranked.imports["src/app.ts"] == {"src/two/fmt.ts": 1} and rm.graph_state.how == "built"
    assert current_tables(live).imports["src/app.ts"] == {"src/two/fmt.ts": 1}


def test_resolved_imports_are_remembered_between_processes(pyrepo, tmp_path, monkeypatch):
    from repomapper import RepoMap
    from repomapper.state.repository import Resolvers

    calls: list[str] = []
    real = Resolvers.file_imports

    def counting(self, path, fs, index):
        calls.append(path)
        return real(self, path, fs, index)

    monkeypatch.setattr(Resolvers, "file_imports", counting)
    cache = tmp_path / "c"
    first = RepoMap(pyrepo, 300, cache_dir=cache).rank()
    assert calls and first.imports
    calls.clear()
    again = RepoMap(pyrepo, 300, cache_dir=cache).rank()  # a new process on a warm cache
    assert calls == [] and again.imports == first.imports
    orders = pyrepo / "shop" / "orders.py"
    orders.write_text(orders.read_text() + "\nimport shop.catalog\n")
    edited = RepoMap(pyrepo, 300, cache_dir=cache).rank()
    assert calls == ["shop/orders.py"] and "shop/catalog.py" in edited.imports["shop/orders.py"]
    fresh = RepoMap(pyrepo, 300, use_cache=False).rank()
    assert edited.imports == fresh.imports and edited.definitions == fresh.definitions


def test_spliced_definition_arrays_equal_built_ones():
    """An edit that changes how many names an early file defines shifts every later pair: the
    arrays spliced from the previous index must equal those built from scratch."""
    from repomapper.definitions import DefinitionIndex
    from repomapper.graph import SymbolTable

    def files_with(first_defs):
        out = {FILES[0]: summary(FILES[0], first_defs, ["alpha"], [None], [])}
        for i, p in enumerate(FILES[1:], 1):
            out[p] = summary(
                p, [(f"top_{i}", "function"), ("beta", "class")], ["gamma_value"], [None], []
            )
        return out

    before = files_with([("alpha", "function")])
    table = SymbolTable.build(before)
    index = DefinitionIndex.build(table, before)
    assert index.arrays.top_ids.size  # made, so the next version splices from it
    after = files_with([("alpha", "function"), ("aardvark", "class"), ("zeta_function", "class")])
    new_table, touched = table.updated(before, after, [FILES[0]])
    spliced = index.updated(new_table, table, after, [FILES[0]], touched).arrays
    built = DefinitionIndex.build(new_table, after).arrays
    for name in (
        "offsets",
        "top_offsets",
        "pair_file",
        "kind",
        "unreferenced",
        "top_ids",
        "top_file",
        "top_count",
        "idents",
        "file_names",
    ):
        assert np.array_equal(getattr(spliced, name), getattr(built, name)), name
    assert spliced.idents.tolist() == built.idents.tolist()


def test_an_edit_that_keeps_a_files_imports_does_not_resolve_them_again():
    asked: list[str] = []

    def imports_of(path, fs, index):
        asked.append(path)
        return Counter(i.source for i in fs.imports if i.source in index.files and i.source != path)

    def resolving():
        return replace(inputs(), resolve_imports=imports_of)

    def with_imports(path, defs, imports):
        fs = summary(path, defs, ["beta"], [None], [])
        return replace(fs, imports=tuple(Import(path, src, line_number=1) for src in imports))

    files = {p: with_imports(p, [("alpha", "function")], [FILES[1]]) for p in FILES}
    state = build_state(files, resolving())
    asked.clear()
    same_imports = {**files, FILES[0]: with_imports(FILES[0], [("gamma", "class")], [FILES[1]])}
    kept = update_state(state, same_imports, resolving())
    assert asked == [] and kept.imports[FILES[0]] == Counter({FILES[1]: 1})
    other = {**files, FILES[0]: with_imports(FILES[0], [("alpha", "function")], [FILES[2]])}
    moved = update_state(kept, other, resolving())
    assert asked == [FILES[0]] and moved.imports[FILES[0]] == Counter({FILES[2]: 1})
    same(moved, build_state(other, resolving()))


def test_an_edit_that_keeps_a_files_names_touches_nothing_and_one_that_adds_a_name_moves_the_rest():
    files = {
        p: summary(
            p, [("alpha", "function"), ("gamma", "class")], ["beta", "alpha"], [None, None], []
        )
        for p in FILES
    }
    state = build_state(files, inputs())
    body_only = {
        **files,
        FILES[0]: replace(
            files[FILES[0]],
            definitions=tuple(
                replace(t, start_line=t.start_line + 5, end_line=t.end_line + 5)
                for t in files[FILES[0]].definitions
            ),
        ),
    }
    table, touched = state.table.updated(files, body_only, [FILES[0]])
    assert touched == frozenset()
    kept = update_state(state, body_only, inputs())
    assert kept.graph is state.graph and kept.ranking is state.ranking  # nothing to rank again
    assert kept.table.definitions[(FILES[0], "alpha")][0].start_line == 6  # the new tags
    same(kept, build_state(body_only, inputs()))
    added = {
        **files,
        FILES[0]: summary(
            FILES[0],
            [("alpha", "function"), ("beta", "function"), ("gamma", "class")],
            ["beta", "alpha"],
            [None, None],
            [],
        ),
    }
    _, touched = state.table.updated(files, added, [FILES[0]])
    assert touched == {"alpha", "beta", "gamma"}  # gamma's position in the file's row moved
    same(update_state(state, added, inputs()), build_state(added, inputs()))


#: a file whose role weighs its definitions down (a test file)
TEST_FILE = "tests/test_m6.py"


def raw_strategy():
    """Per file, what :func:`summary` is made from (so a test can edit a file's definitions),
    a test file among them."""
    return st.fixed_dictionaries(
        {
            p: st.tuples(
                st.lists(st.tuples(st.sampled_from(NAMES), st.sampled_from(KINDS)), max_size=4),
                st.lists(st.sampled_from(NAMES), max_size=8),
                st.lists(st.sampled_from([None, *FILES]), min_size=1, max_size=3),
                st.lists(st.sampled_from(FILES), max_size=2),
            )
            for p in [*FILES, TEST_FILE]
        }
    )


def made(path, raw):
    defs, refs, targets, imports = raw
    return summary(path, defs, refs, (targets * 8)[: len(refs)], imports)


@settings(max_examples=60, deadline=None)
@given(raw_strategy(), st.data())
def test_an_edit_that_keeps_the_walk_ranks_only_its_files_pairs_again(raw, data):
    """Definitions of names nothing references, added or taken away, leave the walk over the
    files as it was; the ranking then recomputes only the edited files' pairs, and every
    pair's rank equals a state built from scratch, to the bit."""
    from repomapper import graphstate, rank

    calls: dict[str, int] = {"again": 0, "walks": 0}
    real_again, real_walk = rank._pair_ranks_again, graphstate.pagerank

    def again(*a):
        calls["again"] += 1
        return real_again(*a)

    def walk(*a):
        calls["walks"] += 1
        return real_walk(*a)

    rank._pair_ranks_again, graphstate.pagerank = again, walk
    try:
        _edit_lonely_names(raw, data, calls)
    finally:
        rank._pair_ranks_again, graphstate.pagerank = real_again, real_walk


def _edit_lonely_names(raw, data, calls):
    chat, mentioned = drawn_boosts(data, 1)
    raw = {p: (list(d), r, t, i) for p, (d, r, t, i) in raw.items()}
    state = build_state({p: made(p, v) for p, v in raw.items()}, inputs(chat, mentioned))
    state.ranking  # noqa: B018 (computed, so that the next update can reuse its pairs)
    for step in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from([*FILES, TEST_FILE]))
        defs = raw[path][0]
        if defs and defs[-1][0].startswith("lonely") and data.draw(st.booleans()):
            defs.pop()
        else:
            at = data.draw(st.integers(0, len(defs)))
            defs.insert(at, (f"lonely_{step}", data.draw(st.sampled_from(KINDS))))
        files = dict(state.files)
        files[path] = made(path, raw[path])
        walks, again = calls["walks"], calls["again"]
        state = update_state(state, files, inputs(chat, mentioned))
        mine = state.ranking.pairs
        if state.how.startswith("updated") and calls["walks"] == walks:
            assert calls["again"] == again + 1  # the walk was kept: only the file's pairs
        fresh = build_state(dict(files), inputs(chat, mentioned))
        same(state, fresh)
        theirs = fresh.ranking.pairs
        assert mine is not None and theirs is not None
        assert np.array_equal(mine.ranked, theirs.ranked)
        assert np.array_equal(mine.received, theirs.received)
