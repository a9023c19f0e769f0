"""The relevance model: each signal on a small repository, the map agreeing with the ranking,
and hostile task text."""

from __future__ import annotations

import time

import pytest

from repomapper import RepoMap
from repomapper.relevance import parse_task
from repomapper.relevance.explicit import PathIndex, find_explicit
from repomapper.relevance.lexical import LexicalIndex, file_terms
from repomapper.relevance.query import MAX_TASK_CHARS
from repomapper.relevance.roles import CODE, DOCS, EXAMPLE, TEST, VENDORED, file_role
from repomapper.relevance.roles import tested_stem as stem_under_test
from repomapper.relevance.terms import fold, identifier_terms, terms

FILES = [
    "src/sqlfluff/rules/L031.py",
    "src/sqlfluff/rules/L032.py",
    "src/pkg/utils.py",
    "tests/utils.py",
    "src/pkg/session_store.py",
    "a.py",
]


def explicit(text, files=FILES, defines=None, file_defs=None):
    return find_explicit(parse_task(text), PathIndex(files), defines or {}, file_defs or {})


# -- terms -----------------------------------------------------------------------------------
def test_identifiers_split_into_parts_and_plurals_fold():
    assert identifier_terms("JsonEncoder") == ["jsonencoder", "json", "encoder"]
    assert identifier_terms("get_select_statement_info")[1:] == ["select", "statement", "info"]
    assert fold("aliases") == "alias" and fold("classes") == "class" and fold("class") == "class"
    assert terms("the and of 42 x") == []


# -- explicit references ---------------------------------------------------------------------
def test_paths_suffixes_and_distinctive_base_names_are_named():
    ev = explicit("See rules/L032.py and also session_store.py; a.py and utils.py are too vague.")
    assert ev.named == {"src/sqlfluff/rules/L032.py", "src/pkg/session_store.py"}
    # utils.py names two files: each gets half of a base-name match, not a full one
    assert ev.file_score("src/pkg/utils.py") == pytest.approx(ev.file_score("tests/utils.py"))
    assert ev.file_score("src/pkg/utils.py") < ev.file_score("src/pkg/session_store.py")


def test_traceback_frames_lead_into_the_repository_and_the_innermost_weighs_most():
    files = [
        "astroid/brain/brain_builtin_inference.py",
        "astroid/raw_building.py",
        "astroid/other.py",
    ]
    text = (
        "Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/dist-packages/astroid/raw_building.py", line 3, in build\n'
        '  File "/usr/lib/python3/dist-packages/astroid/brain/brain_builtin_inference.py", line 9\n'
        "ValueError: boom\n"
    )
    ev = explicit(text, files)
    assert ev.named == {"astroid/raw_building.py", "astroid/brain/brain_builtin_inference.py"}
    assert ev.file_score("astroid/brain/brain_builtin_inference.py") > ev.file_score(
        "astroid/raw_building.py"
    )
    assert "astroid/other.py" not in ev.files


def test_the_words_of_a_written_path_are_not_also_stem_or_name_mentions():
    """A frame's path is evidence for its file once, by its position in the traceback: its
    folder and file names are not also counted as the reporter naming those stems."""
    files = ["pkg/linter/linter.py", "pkg/parser/helpers.py"]
    text = (
        "Traceback (most recent call last):\n"
        '  File "/home/u/pkg/linter/linter.py", line 3, in lint_string\n'
        '  File "/home/u/pkg/parser/helpers.py", line 9, in check\n'
        "RuntimeError: boom\n"
    )
    query = parse_task(text)
    assert "linter" not in query.words and "helpers" not in query.words
    assert {"lint_string", "check"} <= query.words  # the frames' function names still count
    ev = explicit(text, files, defines={"linter": {"pkg/linter/linter.py"}})
    signals = {s for s, _, _ in ev.files["pkg/linter/linter.py"]}
    assert signals == {"traceback"}
    assert ev.file_score("pkg/parser/helpers.py") > ev.file_score("pkg/linter/linter.py")
    # named outside a path, the same word is a mention again
    assert "linter" in parse_task(text + "The linter crashes.").words


def test_at_path_line_and_module_names():
    files = ["pvlib/tools.py", "pvlib/irradiance.py", "pkg/sub/__init__.py"]
    ev = explicit(
        "fails at pvlib/irradiance.py:120 when pvlib.tools.cosd is given; see pkg.sub",
        files,
        defines={"cosd": {"pvlib/tools.py"}},
    )
    assert {"pvlib/irradiance.py", "pvlib/tools.py", "pkg/sub/__init__.py"} <= ev.named
    assert ("pvlib/tools.py", "cosd") in ev.symbols


def test_a_common_stem_is_spread_over_its_files_not_given_to_each():
    files = [f"app{i}/models.py" for i in range(50)] + ["core/L031.py"]
    ev = explicit("models are wrong and L031 fires", files)
    assert ev.file_score("core/L031.py") > 0.5
    assert max(ev.file_score(f"app{i}/models.py") for i in range(50)) < 0.02


def test_specific_identifiers_outweigh_generic_ones():
    defines = {"dup_zz_mignotte_bound": {"poly/factor.py"}, "run": {f"m{i}.py" for i in range(20)}}
    ev = explicit("dup_zz_mignotte_bound is wrong when we run it", ["poly/factor.py"], defines)
    assert ev.file_score("poly/factor.py") == pytest.approx(0.5)
    assert max(ev.file_score(f"m{i}.py") for i in range(20)) < 0.05
    assert ("poly/factor.py", "dup_zz_mignotte_bound") in ev.symbols


def test_qualified_names_point_at_the_symbol_and_error_classes_count():
    defines = {
        "Session": {"s.py"},
        "request": {"s.py", "api.py"},
        "InvalidURLError": {"exceptions.py"},
    }
    ev = explicit(
        "`Session.request` raises InvalidURLError", ["s.py", "api.py", "exceptions.py"], defines
    )
    assert ev.file_score("s.py") > ev.file_score("api.py")
    assert ("s.py", "request") in ev.symbols
    assert any(sig == "error_class" for sig, _, _ in ev.files["exceptions.py"])


# -- lexical ---------------------------------------------------------------------------------
def test_bm25f_prefers_the_file_whose_names_and_text_match(tmp_path):
    from repomapper.model import FileSymbols, Tag

    def syms(path, *names):
        return FileSymbols(path, tuple(Tag(path, 1, 1, n, "def", "function") for n in names))

    data = {
        "pkg/aliases.py": (
            syms("pkg/aliases.py", "resolve_alias"),
            b"# Avoid using aliases in join condition\n",
        ),
        "pkg/joins.py": (syms("pkg/joins.py", "join"), b"def join(): pass\n"),
        "pkg/other.py": (syms("pkg/other.py", "unrelated"), b"x = 1\n"),
    }
    index = LexicalIndex()
    index.update(
        {p: _key(p) for p in data}, {p: s for p, (s, _) in data.items()}, lambda p: data[p][1]
    )
    scores, contrib = index.score(parse_task("Avoid using aliases in join condition").terms)
    assert max(scores, key=scores.get) == "pkg/aliases.py"
    assert "pkg/other.py" not in scores
    assert contrib["pkg/aliases.py"][0][0] in {"alias", "condition", "avoid"}
    # a changed file replaces its own postings only
    data["pkg/other.py"] = (syms("pkg/other.py", "condition_alias"), b"aliases aliases condition")
    index.update(
        {p: _key(p, 2) for p in data}, {p: s for p, (s, _) in data.items()}, lambda p: data[p][1]
    )
    assert index.indexed == 3 and "pkg/other.py" in index.score(parse_task("aliases").terms)[0]


def test_a_large_index_is_stored_a_batch_of_files_at_a_time(tmp_path, monkeypatch):
    """Files are indexed and stored a batch at a time (a large tree's postings are never all
    held at once), and the index is the one stored at once."""
    import repomapper.relevance.lexical as lexical
    from repomapper.cache import open_cache
    from repomapper.model import FileSymbols
    from tests.conftest import write_tree

    texts = {f"m{i}.py": f"def f{i}(): return shared_word + word_{i}\n".encode() for i in range(7)}
    keys = {p: _key(p) for p in texts}
    symbols = {p: FileSymbols(p) for p in texts}
    query = parse_task("shared_word word_3").terms
    at_once = LexicalIndex()
    at_once.update(keys, symbols, texts.__getitem__)
    monkeypatch.setattr(lexical, "STORED_BATCH", 3)
    cache = open_cache(write_tree(tmp_path / "r", {"a.py": ""}), tmp_path / "cache")
    try:
        batched = LexicalIndex(cache)
        stored: list[int] = []
        real = batched.store.replace
        batched.store.replace = lambda items: (stored.append(len(items)), real(items))[1]
        batched.update(keys, symbols, texts.__getitem__)
        assert stored == [3, 3, 1] and batched.indexed == 7
        assert batched.score(query) == at_once.score(query)
    finally:
        cache.close()


def _key(path, version=1):
    from repomapper.cache import CacheKey

    return CacheKey(path, version, version, "fp")


def test_file_terms_cover_path_names_docs_and_body():
    from repomapper.model import FileSymbols, Tag

    fs = FileSymbols(
        "a/b_c.py",
        (Tag("a/b_c.py", 1, 2, "JsonThing", "def", "class", docstring="Decodes gizmos"),),
    )
    ft = file_terms("a/b_c.py", fs, b"widget = 1  # frobnicate\n")
    assert ft.postings["json"][1] == 1 and ft.postings["gizmo"][2] == 1
    assert ft.postings["frobnicate"][3] == 1 and ft.postings["b_c"][0] == 1


# -- roles -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/pkg/mod.py", CODE),
        ("tests/test_mod.py", TEST),
        ("pkg/mod_test.go", TEST),
        ("src/app.spec.ts", TEST),
        ("examples/demo.py", EXAMPLE),
        ("docs/conf.py", DOCS),
        ("vendor/lib/x.go", VENDORED),
        ("third_party/tests/a.py", VENDORED),
    ],
)
def test_file_roles(path, role):
    assert file_role(path) == role


def test_the_module_a_test_file_tests():
    assert stem_under_test("tests/test_fields.py") == "fields"
    assert stem_under_test("pkg/mod_test.go") == "mod"
    assert stem_under_test("pkg/mod.py") is None


# -- the model through RepoMap -----------------------------------------------------------------
REPO = {
    "shop/pricing.py": "def apply_discount(total, pct):\n    '''Discount a receipt total.'''\n    return total\n\n"
    "def format_price(cents):\n    return str(cents)\n",
    "shop/cart.py": "from shop.pricing import apply_discount\n\nclass Cart:\n    def total(self):\n"
    "        return apply_discount(1, 2)\n",
    "shop/catalog.py": "class Catalog:\n    def find(self, name):\n        return name\n",
    "tests/test_pricing.py": "from shop.pricing import apply_discount\n\ndef test_discount_rounding():\n"
    "    assert apply_discount(10, 5) == 9  # receipt rounding discount\n",
    "examples/receipt_demo.py": "from shop.cart import Cart\n# receipt discount rounding demo\nprint(Cart().total())\n",
}


@pytest.fixture
def shop(make_tree):
    return make_tree(REPO, "shop")


def test_task_ranking_has_reasons_and_puts_code_before_its_tests(shop):
    ranked = RepoMap(shop, use_cache=False).rank(task="The receipt discount rounding is wrong")
    order = [f.path for f in ranked.files]
    assert order[0] == "shop/pricing.py"
    assert order.index("shop/pricing.py") < order.index("tests/test_pricing.py")
    assert order.index("shop/pricing.py") < order.index("examples/receipt_demo.py")
    signals = {r.signal for r in ranked.files[0].why}
    assert "lexical" in signals and "tests" in signals
    assert any(
        r.signal == "demoted" for f in ranked.files if f.path.startswith("tests/") for r in f.why
    )


def test_a_task_about_tests_does_not_demote_them(shop):
    ranked = RepoMap(shop, use_cache=False).rank(
        task="Test for discount rounding fails: test_discount_rounding"
    )
    top = ranked.files[0]
    assert top.path == "tests/test_pricing.py"
    assert not any(r.signal == "demoted" for r in top.why)


def test_graph_brings_the_callers_of_what_the_task_names(shop, monkeypatch):
    # the mechanism, under weights that count the graph (the shipped fit may weigh it little)
    import repomapper.stages.ranking as stage
    from repomapper.relevance import model
    from repomapper.relevance.weights import FEATURES, RankingWeights

    graph = RankingWeights({**dict.fromkeys(FEATURES, 1.0)}, 0.5)
    monkeypatch.setattr(
        stage, "rank_task", lambda *a, **kw: model.rank_task(*a, **kw, weights=graph)
    )
    with_graph = RepoMap(shop, use_cache=False).rank(task="apply_discount")
    cart = next(f for f in with_graph.files if f.path == "shop/cart.py")
    assert any(r.signal == "graph" for r in cart.why)
    without = RepoMap(shop, use_cache=False).rank(task="apply_discount", disabled_signals=["graph"])
    cart2 = next(f for f in without.files if f.path == "shop/cart.py")
    assert cart.score > cart2.score


def test_each_signal_can_be_switched_off(shop):
    rm = RepoMap(shop, use_cache=False)
    base = [r.signal for f in rm.rank(task="shop/catalog.py receipt").files for r in f.why]
    for signal, evidence in [("explicit", "path"), ("lexical", "lexical"), ("tests", "tests")]:
        off = [
            r.signal
            for f in rm.rank(task="shop/catalog.py receipt", disabled_signals=[signal]).files
            for r in f.why
        ]
        assert evidence in base and evidence not in off


def test_the_map_follows_the_ranking_and_shows_the_named_file(shop):
    rm = RepoMap(shop, 60, use_cache=False)
    result = rm.map(task="Catalog.find breaks in shop/catalog.py")
    assert result.ranked_files[0].path == "shop/catalog.py"
    assert result.map.startswith("shop/catalog.py:")
    assert "def find(self, name):" in result.map
    assert result.tokens <= 60


def test_symbols_the_task_names_come_first_in_their_file(shop):
    ranked = RepoMap(shop, use_cache=False).rank(task="format_price prints cents wrong")
    assert ranked.symbols_of("shop/pricing.py")[0][0] == "format_price"
    plain = RepoMap(shop, use_cache=False).rank()
    assert plain.symbols_of("shop/pricing.py")[0][0] == "apply_discount"  # the referenced one


def test_the_json_result_carries_why(shop):
    d = RepoMap(shop, 200, use_cache=False).map(task="apply_discount").to_dict()
    assert d["ranked_files"][0]["why"] and {"signal", "detail", "weight"} == set(
        d["ranked_files"][0]["why"][0]
    )


def test_lexical_index_lives_in_the_cache_and_is_updated_per_file(shop, tmp_path):
    rm = RepoMap(shop, cache_dir=tmp_path / "c")
    first = rm.rank(task="receipt discount")
    assert rm.state._lexical[1].indexed == len(first.mapped)
    rm2 = RepoMap(shop, cache_dir=tmp_path / "c")  # a new process reads the stored postings
    again = rm2.rank(task="receipt discount")
    assert rm2.state._lexical[1].indexed == 0
    assert [f.path for f in again.files] == [f.path for f in first.files]
    (shop / "shop/catalog.py").write_text(
        "class Catalog:\n    def receipt_discount(self):\n        pass\n"
    )
    rm2.rank(task="receipt discount")
    assert rm2.state._lexical[1].indexed == 1


# -- hostile task text -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "task",
    [
        "x" * 3_000_000,
        ("apply_discount " * 200_000),
        bytes(range(256)).decode("latin-1") * 4000,
        "\x00\x01\x02 \x1b[31m apply_discount \x7f",
        "the and of to in is it",
        "/" * 100_000 + "a.py",
        "a." * 100_000,
        "`" * 50_000,
        'File "' + "x" * 100_000,
    ],
    ids=[
        "megabytes",
        "repeated",
        "binary",
        "control",
        "stop-words",
        "slashes",
        "dots",
        "backticks",
        "frame",
    ],
)
def test_hostile_task_text_gives_a_map_quickly(shop, task):
    rm = RepoMap(shop, 200, use_cache=False)
    started = time.perf_counter()
    result = rm.map(task=task)
    assert time.perf_counter() - started < 20  # a guard against runaway patterns, not a benchmark
    assert result.map and result.tokens <= 200
    codes = {d.code for d in result.diagnostics}
    if len(task) > MAX_TASK_CHARS:
        assert "task_truncated" in codes
    if task == "the and of to in is it":
        assert "task_without_terms" in codes


def test_a_long_lived_repomap_re_extracts_only_changed_files(shop, tmp_path):
    rm = RepoMap(shop, 300, cache_dir=tmp_path / "c")
    first = rm.map(task="receipt discount")
    assert rm.last_stats["extracted"] == len(REPO)
    rm.map(task="catalog find")
    assert rm.last_stats.get("reused") == len(REPO)
    (shop / "shop/catalog.py").write_text(
        "class Catalog:\n    def find_receipt(self):\n        pass\n"
    )
    (shop / "shop/new.py").write_text("def brand_new_receipt():\n    pass\n")
    after = rm.map(task="receipt discount brand_new_receipt")
    assert rm.last_stats["extracted"] == 2 and rm.last_stats["reused"] == len(REPO) - 1
    assert "def brand_new_receipt" in after.map
    fresh = RepoMap(shop, 300, use_cache=False).map(task="receipt discount brand_new_receipt")
    assert after.map == fresh.map and after.ranked_files == fresh.ranked_files
    assert first.map != after.map
