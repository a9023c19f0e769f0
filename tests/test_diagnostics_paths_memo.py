from hypothesis import given, settings
from hypothesis import strategies as st

from repomapper.diagnostics import MAX_LISTED_PATHS, summarise
from repomapper.memo import map_digest, remember, replay
from repomapper.model import Diagnostic
from repomapper.paths import entries_for, relative_to_root
from repomapper.repomap import RepoMap


def test_common_per_file_codes_become_one_diagnostic_listing_the_files():
    diags = [Diagnostic("no_backend", "no backend", f"f{i:03}.xyz", "info") for i in range(60)]
    diags += [Diagnostic("parse_error", "bad", "a.py"), Diagnostic("parse_error", "bad", "a.py")]
    diags += [Diagnostic("no_files_matched", "none", severity="error")]
    out = summarise(diags)
    assert [d.code for d in out] == ["no_files_matched", "parse_error", "no_backend"]
    summary = out[-1]
    assert summary.path is None and len(summary.paths) == MAX_LISTED_PATHS
    assert (
        summary.message.startswith("60 file(s) have no backend")
        and "first 50 listed" in summary.message
    )


def test_a_code_reported_for_many_files_becomes_one_diagnostic_quoting_its_messages():
    from repomapper.contract.envelope import diagnostic_file_count

    n = MAX_LISTED_PATHS + 7
    diags = [Diagnostic("parse_error", "syntax errors", f"src/f{i:03}.c") for i in range(n - 2)]
    diags += [Diagnostic("parse_error", "cannot parse", "a.py", "error")]
    diags += [Diagnostic("parse_error", "half parsed", "b.h")]
    diags += [Diagnostic("decode_error", "not UTF-8", "c.c")]  # few: stays per file
    out = summarise(diags)
    assert [(d.code, d.path) for d in out] == [("parse_error", None), ("decode_error", "c.c")]
    crowded = out[0]
    assert crowded.severity == "error"  # the group's most severe
    assert crowded.message == (
        f"{n} files: syntax errors ({n - 2}); cannot parse (1); half parsed (1); "
        f"first {MAX_LISTED_PATHS} listed"
    )
    assert crowded.paths == tuple(sorted(d.path for d in diags[:-1]))[:MAX_LISTED_PATHS]
    assert diagnostic_file_count(out, "parse_error") == n
    # exactly the limit: every file keeps its own line
    few = summarise(diags[:MAX_LISTED_PATHS])
    assert len(few) == MAX_LISTED_PATHS and all(d.path for d in few)


def test_a_summary_is_remembered_by_what_it_was_made_of():
    """The same diagnostics (the very objects, or equal ones) give the summary made before;
    others are summarised afresh, and the remembered ones are the latest few."""
    from repomapper import diagnostics

    many = [Diagnostic("parse_partial", f"{i % 3} error(s)", f"f{i}.c") for i in range(200)]
    first = summarise(many)
    assert summarise(list(many)) is first
    equal = [Diagnostic(d.code, d.message, d.path) for d in many]
    assert summarise(equal) is first
    changed = [*many[:-1], Diagnostic("parse_partial", "9 error(s)", "f199.c")]
    other = summarise(changed)
    assert other is not first and other != first and "1 other message(s)" in other[0].message
    assert summarise(many) is first
    for n in range(diagnostics.REMEMBERED):
        summarise(many[: 100 + n])
    again = summarise(many)
    assert again == first and again is not first  # let go: made afresh, the same value


def test_a_map_of_many_broken_files_says_so_in_one_line(make_tree, tmp_path):
    files = {f"pkg/m{i:03}.py": "def ok(:\n" for i in range(MAX_LISTED_PATHS + 5)}
    files["pkg/good.py"] = "def good():\n    return 1\n"
    root = make_tree(files)
    with RepoMap(root, 300, cache_dir=tmp_path / "c") as rm:
        result = rm.map()
    broken = [d for d in result.diagnostics if d.code == "parse_error"]
    assert len(broken) == 1 and broken[0].message.startswith(f"{MAX_LISTED_PATHS + 5} files: ")
    assert "good" in result.map


def test_named_files_are_checked_and_kept_inside_the_root(make_tree, tmp_path):
    root = make_tree({"a.py": "x = 1\n", "d/b.py": "y = 2\n"}).resolve()
    (tmp_path / "out.py").write_text("z = 3\n")
    assert relative_to_root(root, root / "d" / ".." / "a.py") == "a.py"
    assert relative_to_root(root, tmp_path / "out.py") is None
    diags: list[Diagnostic] = []
    got = entries_for(
        root, ["d/b.py", str(root / "a.py"), "d", "gone.py", tmp_path / "out.py"], 10**6, diags
    )
    assert [e.path for e in got] == ["a.py", "d/b.py"]
    assert [(d.code, d.path) for d in diags] == [
        ("not_a_file", "d"),
        ("unreadable", "gone.py"),
        ("outside_root", str(tmp_path / "out.py")),
    ]


def test_the_memo_replays_only_an_unchanged_map(pyrepo, tmp_path):
    rm = RepoMap(pyrepo, 300, cache_dir=tmp_path / "c")
    result = rm.map()
    entries, _, _ = rm.collect()
    from repomapper.extract import Extractor

    ex = Extractor(rm.plugins, rm.cache)
    settings = rm.settings()
    digest = map_digest(settings, rm.state, ex, entries, (), frozenset())
    assert digest == map_digest(rm.settings(), rm.state, ex, entries, (), frozenset())
    tasked = rm.settings(task="a task")
    assert digest != map_digest(tasked, rm.state, ex, entries, (), frozenset())
    remember(rm.cache, digest, result)
    assert replay(rm.cache, digest) == result
    assert replay(rm.cache, "0" * 64) is None


def test_ranked_files_are_a_tuple_however_the_map_was_made(pyrepo, tmp_path):
    """Fresh, replayed from the memo, or ranked for a task: the same plain tuple, so
    ``isinstance(x, tuple)`` and ``x + ()`` do not depend on how the map was made."""
    rm = RepoMap(pyrepo, 300, cache_dir=tmp_path / "c")
    fresh = rm.map()
    tasked = rm.map(task="format_price shows the wrong CURRENCY_SYMBOL")
    assert len(tasked.ranked_files) > 1 and any(f.why for f in tasked.ranked_files)
    for n, result in enumerate((fresh, tasked)):
        digest = str(n) * 64
        remember(rm.cache, digest, result)
        again = replay(rm.cache, digest)
        assert again == result and again.to_dict() == result.to_dict()
        for made in (result, again):
            assert isinstance(made.ranked_files, tuple)
            assert made.ranked_files + () == result.ranked_files
            assert isinstance(made.ranked_symbols, tuple)


_SCORES = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 0.25]),
    st.integers(-3, 3),
    st.floats(allow_nan=False, width=64),
)


@st.composite
def _ranked_file(draw):
    from repomapper.model import RankedFile, Reason

    path, score = draw(st.text(min_size=1, max_size=6)), draw(_SCORES)
    plain = (Reason("pagerank", "reference graph", score),)
    other = st.lists(
        st.builds(
            Reason,
            st.sampled_from(["pagerank", "lexical", "path"]),
            st.sampled_from(["reference graph", "x"]),
            _SCORES,
        ),
        max_size=3,
    ).map(tuple)
    return RankedFile(path, score, draw(st.one_of(st.just(plain), other)))


@settings(max_examples=60, deadline=None)
@given(st.lists(_ranked_file(), max_size=8))
def test_a_stored_map_replays_as_the_same_value_and_the_same_json(files):
    """Ranked files are stored as columns, a file's one PageRank reason as null: the replay is
    the same value with the same JSON, signs of zero and integer scores included."""
    import json

    from repomapper.cache import TagCache
    from repomapper.model import MapResult

    result = MapResult("m", 1, "cl100k_base", True, 100, 3, 1, ranked_files=tuple(files))
    cache = TagCache()
    remember(cache, "d" * 64, result)
    again = replay(cache, "d" * 64)
    assert again == result
    assert json.dumps(again.to_dict()) == json.dumps(result.to_dict())


def test_a_stored_map_with_malformed_columns_is_not_replayed():
    import json

    from repomapper.cache import TagCache
    from repomapper.memo import stored_map
    from repomapper.model import MapResult, RankedFile

    result = MapResult("m", 1, "t", True, 100, 1, 1, ranked_files=(RankedFile("a.py", 1.0),))
    cache = TagCache()
    remember(cache, "d" * 64, result)
    good = json.loads(cache.get_shared_map("d" * 64))
    assert stored_map(json.dumps(good)) == result
    bad_columns = [
        {"path": ["a.py", "b.py"], "score": [1.0], "why": [None]},
        {"path": [1], "score": [1.0], "why": [None]},
        {"path": ["a.py"], "score": ["1"], "why": [None]},
        {"path": ["a.py"], "score": [1.0], "why": [[["only", "two"]]]},
        [{"path": "a.py", "score": 1.0, "why": []}],
    ]
    for columns in bad_columns:
        cache.put_shared_map("e" * 64, json.dumps({**good, "ranked_files": columns}))
        assert replay(cache, "e" * 64) is None, columns
