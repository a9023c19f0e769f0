"""The fitted combination: the weights file, its loader, the features it weighs, and the
benchmark split it is fitted and judged on."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from types import MappingProxyType

import pytest

import repomapper.stages.ranking as ranking_stage
from repomapper import RepoMap
from repomapper.codedigest import MADE_BY, _selected
from repomapper.relevance import model
from repomapper.relevance.query import parse_task
from repomapper.relevance.weights import (
    FEATURES,
    GRAPH_FEATURES,
    WEIGHTS_FILE,
    LanguageWeights,
    RankingWeights,
    WeightsError,
    family_of,
    load_weights_file,
    parse_weights,
    shipped_weights,
)

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _doc(**over: object) -> dict:
    doc: dict = {"weights": dict.fromkeys(FEATURES, 1.0), "role_factor": 0.5}
    doc.update(over)
    return doc


# -- the weights file ------------------------------------------------------------------------
def test_the_shipped_weights_are_valid_and_say_what_they_were_fitted_on():
    lw = shipped_weights()
    for w in (lw.default, *lw.groups.values()):
        assert set(w.weights) == set(FEATURES)
        assert all(v >= 0 for v in w.weights.values()) and 0 < w.role_factor <= 1
    raw = json.loads(WEIGHTS_FILE.read_text(encoding="utf-8"))
    assert "fitted_on" in raw and raw["fitted_on"]["split"]
    assert raw["fitted_on"]["language_groups"]


@pytest.mark.parametrize(
    "doc, says",
    [
        ([], "not a JSON object"),
        ({"role_factor": 0.5}, "no 'weights'"),
        (_doc(weights={"explicit": 1.0}), "missing"),
        (_doc(weights={**dict.fromkeys(FEATURES, 1.0), "nope": 1.0}), "unknown ['nope']"),
        (_doc(weights={**dict.fromkeys(FEATURES, 1.0), "lex_plain": -1}), "'lex_plain'"),
        (_doc(weights={**dict.fromkeys(FEATURES, 1.0), "tests": math.inf}), "'tests'"),
        (_doc(weights={**dict.fromkeys(FEATURES, 1.0), "tests": "1"}), "'tests'"),
        (_doc(weights={**dict.fromkeys(FEATURES, 1.0), "tests": True}), "'tests'"),
        (_doc(weights=dict.fromkeys(FEATURES, 0.0)), "every weight is 0"),
        (_doc(role_factor=0), "role_factor"),
        (_doc(role_factor=1.5), "role_factor"),
    ],
)
def test_a_broken_weights_document_is_a_clear_error(doc, says):
    with pytest.raises(WeightsError, match=None) as err:
        parse_weights(doc, "w.json")
    assert says in str(err.value) and "w.json" in str(err.value)


def test_an_unreadable_or_invalid_file_names_itself(tmp_path):
    with pytest.raises(WeightsError, match="cannot read"):
        load_weights_file(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    with pytest.raises(WeightsError, match="bad.json: not valid JSON"):
        load_weights_file(bad)


def test_the_score_is_the_weighted_sum_in_feature_order():
    w = parse_weights(
        _doc(weights={**dict.fromkeys(FEATURES, 0.0), "explicit": 2.0, "tests": 0.5}), "x"
    ).default
    assert w.score({"explicit": 0.25, "tests": 1.0, "lex_plain": 9.0}) == 1.0


# -- language groups --------------------------------------------------------------------------
def _grouped(**groups: object) -> dict:
    return _doc(groups=groups)


def _set(families: list[str], value: float = 0.25, role: float = 0.75) -> dict:
    return {"families": families, "weights": dict.fromkeys(FEATURES, value), "role_factor": role}


def test_a_files_language_group_picks_its_weights_and_others_fall_back_to_the_default():
    lw = parse_weights(_grouped(other=_set(["jvm", "js_ts"]), c=_set(["c_cpp"], 2.0)), "w.json")
    assert lw.for_path("src/Lombok.java").weights["explicit"] == 0.25
    assert lw.for_path("lib/index.d.ts") is lw.groups["other"]
    assert lw.for_path("src/server.H").weights["explicit"] == 2.0  # extensions without case
    assert lw.for_path("src/server.H").role_factor == 0.75
    # a family no group lists, and a file of no family, use the default set
    for path in ("pkg/mod.py", "main.go", "README.md", "Makefile"):
        assert lw.for_path(path) is lw.default and lw.group_of(path) is None
    assert lw.group_of("a/B.kt") == "other"
    assert family_of("a/b.pyi") == "python" and family_of("a/b.txt") is None


def test_a_document_without_groups_scores_every_file_with_its_one_set():
    lw = parse_weights(_doc(), "w.json")
    assert not lw.groups and lw.for_path("x.java") is lw.default


@pytest.mark.parametrize(
    "groups, says",
    [
        ([], "'groups' must be an object"),
        ({"other": []}, "group 'other': not a JSON object"),
        ({"other": {**_set(["jvm"]), "families": []}}, "non-empty list"),
        ({"other": {**_set(["jvm"]), "families": "jvm"}}, "non-empty list"),
        ({"other": _set(["java"])}, "unknown family 'java'"),
        ({"a": _set(["jvm"]), "b": _set(["go", "jvm"])}, "'jvm' is also in group 'a'"),
        ({"other": {**_set(["jvm"]), "role_factor": 2}}, "group 'other': 'role_factor'"),
        ({"other": {"families": ["go"], "role_factor": 0.5}}, "group 'other': no 'weights'"),
        (
            {"other": {**_set(["go"]), "weights": {"explicit": 1.0}}},
            "group 'other': weights must name exactly",
        ),
    ],
)
def test_a_broken_group_is_a_clear_error_that_names_it(groups, says):
    with pytest.raises(WeightsError) as err:
        parse_weights(_doc(groups=groups), "w.json")
    assert says in str(err.value) and "w.json" in str(err.value)


def test_the_weights_file_is_in_the_code_digest_of_memoised_maps():
    assert "relevance/weights.json" in _selected(MADE_BY["map"])


# -- the features, through the ranking stage ---------------------------------------------------
REPO = {
    "shop/pricing.py": "def apply_discount(total, pct):\n    '''Discount a receipt total.'''\n"
    "    return total\n",
    "shop/cart.py": "from shop.pricing import apply_discount\n\nclass Cart:\n    def total(self):\n"
    "        return apply_discount(1, 2)\n",
    "shop/catalog.py": "class Catalog:\n    def find(self, name):\n        return name\n",
    "shop/receipt.py": "def render():\n    return 'receipt'\n",
    "tests/test_pricing.py": "from shop.pricing import apply_discount\n\ndef test_discount():\n"
    "    assert apply_discount(10, 5) == 9\n",
}


@pytest.fixture
def shop(make_tree):
    return make_tree(REPO, "shop")


def _rank_with(monkeypatch, root, task, **kwargs):
    """RepoMap.rank with extra keyword arguments handed to rank_task; its TaskRanking too."""
    original = model.rank_task
    seen = []

    def wrapped(*a, **kw):
        result = original(*a, **kw, **kwargs)
        seen.append(result)
        return result

    monkeypatch.setattr(ranking_stage, "rank_task", wrapped)
    ranked = RepoMap(root, use_cache=False).rank(task=task)
    return ranked, seen[-1]


def test_features_are_returned_on_request_and_only_then(shop, monkeypatch):
    task = "apply_discount in shop/pricing.py rounds the receipt wrong"
    _, plain = _rank_with(monkeypatch, shop, task)
    assert plain.features == {}
    _, tr = _rank_with(monkeypatch, shop, task, features=True)
    f = tr.features
    assert f["ex_path"]["shop/pricing.py"] > 0 and f["explicit"]["shop/pricing.py"] > 0
    assert f["ex_name"]["shop/pricing.py"] > 0
    assert "shop/cart.py" in f["graph_plain"] or "shop/cart.py" in f["graph_hub"]
    assert f["tests"]["shop/pricing.py"] > 0
    assert f["demoted"] == {"tests/test_pricing.py": 1.0}
    assert sorted(f["hub"].values())[0] == 0.0 and max(f["hub"].values()) == 1.0
    # the hub split keeps the whole lexical score
    for p in set(f["lex_plain"]) | set(f["lex_hub"]):
        total = f["lex_plain"].get(p, 0.0) + f["lex_hub"].get(p, 0.0)
        assert total <= 1.0 + 1e-9 and total > 0


def test_every_feature_shows_under_a_reason():
    """A fitted feature's share of a file's score shows under a reason of its own, unless its
    signal writes its own reasons; none is left without (nor named twice)."""
    from repomapper.relevance.model import _OWN_REASONS, _REASON_OF_FEATURE

    assert set(_REASON_OF_FEATURE) | _OWN_REASONS == set(FEATURES)
    assert not set(_REASON_OF_FEATURE) & _OWN_REASONS
    assert set(FEATURES) >= GRAPH_FEATURES
    assert {_REASON_OF_FEATURE[f] for f in GRAPH_FEATURES} == {"graph"}


def test_the_ranking_follows_the_weights_it_is_given(shop, monkeypatch):
    task = "the receipt total: apply_discount"
    only = {**dict.fromkeys(FEATURES, 0.0)}
    stem = RankingWeights(MappingProxyType({**only, "ex_stem": 1.0, "stem_specific": 1.0}), 0.5)
    name = RankingWeights(MappingProxyType({**only, "ex_name": 1.0}), 0.5)
    by_stem, _ = _rank_with(monkeypatch, shop, task, weights=stem)
    by_name, _ = _rank_with(monkeypatch, shop, task, weights=name)
    assert by_stem.files[0].path == "shop/receipt.py"
    assert by_name.files[0].path == "shop/pricing.py"


def test_each_file_is_scored_by_its_language_groups_set(make_tree, monkeypatch):
    root = make_tree(
        {
            **REPO,
            "web/pricing.js": "export function applyDiscount(total) {\n  return total;\n}\n",
        },
        "mixed",
    )
    task = "apply_discount in pricing rounds the receipt total wrong"
    shared = parse_weights(_doc(), "w.json")
    tiny = parse_weights(_grouped(other=_set(["js_ts"], 0.001, 0.5)), "w.json")
    assert isinstance(tiny, LanguageWeights)
    by_shared, _ = _rank_with(monkeypatch, root, task, weights=shared)
    by_group, _ = _rank_with(monkeypatch, root, task, weights=tiny)
    a = {f.path: f.score for f in by_shared.files}
    b = {f.path: f.score for f in by_group.files}
    assert a["web/pricing.js"] > 0.1 and b["web/pricing.js"] < a["web/pricing.js"] / 100
    assert b["shop/pricing.py"] == a["shop/pricing.py"]  # Python falls back to the default
    # one RankingWeights still scores every file alike
    one, _ = _rank_with(monkeypatch, root, task, weights=shared.default)
    assert [(f.path, f.score) for f in one.files] == [(f.path, f.score) for f in by_shared.files]


def test_a_file_name_only_in_pasted_code_counts_less_than_in_prose(shop, monkeypatch):
    prose = "The receipt is wrong."
    pasted = "It is wrong:\n```python\nfrom shop import receipt\n```\n"
    _, a = _rank_with(monkeypatch, shop, prose, features=True)
    _, b = _rank_with(monkeypatch, shop, pasted, features=True)
    sa = a.features["stem_specific"]["shop/receipt.py"]
    sb = b.features["stem_specific"]["shop/receipt.py"]
    assert 0 < sb < sa


def test_prose_leaves_out_code_blocks_headings_and_prompts():
    q = parse_task(
        "### Describe the bug\nThe taxonomy page fails.\n```c\n#include <printf.h>\n```\n"
        ">>> paging_thing()\n$ run_cmd --x\n"
    )
    assert {"taxonomy", "page"} <= q.prose
    assert not {"Describe", "printf", "paging_thing", "run_cmd"} & q.prose
    assert {"Describe", "printf", "paging_thing"} <= q.words


# -- the benchmark's split and samples ---------------------------------------------------------
@pytest.fixture
def locsets(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import locsets as mod

    yield mod
    sys.modules.pop("locsets", None)


def test_the_split_is_by_repository_group_and_the_dev_repositories_choose(locsets):
    assert locsets.repo_group("geekan/MetaGPT") == locsets.repo_group("FoundationAgents/MetaGPT")
    assert locsets.split_of("geekan/MetaGPT") == locsets.split_of("FoundationAgents/MetaGPT")
    assert locsets.split_of("yt-dlp/yt-dlp") == locsets.split_of("ytdl-org/youtube-dl")
    for repo in ("sqlfluff/sqlfluff", "pvlib/pvlib-python", "pylint-dev/astroid"):
        assert locsets.split_of(repo) == "choose"
    sides = {locsets.split_of(f"o/r{i}") for i in range(40)}
    assert sides == {"choose", "judge"}


def test_a_sample_is_stable_and_a_larger_one_keeps_the_smaller(locsets):
    tasks = [
        locsets.SetTask(f"r__x-{i}", f"o/r{i % 3}", "Python", "d", "c", "t", ("a.py",))
        for i in range(30)
    ]
    two = locsets.select(tasks, "all", 2)
    assert len(two) == 6 and two == locsets.select(list(reversed(tasks)), "all", 2)
    assert set(t.instance_id for t in two) <= set(
        t.instance_id for t in locsets.select(tasks, "all", 4)
    )


def test_a_patch_gives_the_functions_it_changes(locsets, tmp_path):
    (tmp_path / "m.py").write_text(
        "def a():\n    return 1\n\n\nclass C:\n    def b(self):\n        x = 1\n        return x\n",
        encoding="utf-8",
    )
    patch = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -5,4 +5,4 @@ class C:\n"
        " class C:\n     def b(self):\n-        x = 1\n+        x = 2\n         return x\n"
    )
    assert locsets.patch_old_lines(patch) == {"m.py": [7, 7]}
    assert locsets.gold_spans_from_patch(patch, tmp_path, ("m.py",)) == [("m.py", "C.b", 6, 8)]


def test_the_fit_gives_a_group_its_own_set_only_with_enough_tasks_and_repositories(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import fit_ranking

    def task(i: int, repo: str, gold: str) -> object:
        row = {
            "instance_id": f"t{i}",
            "group": repo,
            "language": "x",
            "weight": 1.0,
            "gold_files": [gold],
            "candidates": {gold: {"explicit": 1.0}, "other.py": {"lex_plain": 1.0}},
            "hub": {gold: 0.5, "other.py": 0.5},
            "demoted": [],
        }
        return fit_ranking.Task(row)

    layout = fit_ranking.LAYOUTS["families"]
    n, r = fit_ranking.MIN_GROUP_TASKS, fit_ranking.MIN_GROUP_REPOS
    tasks = [task(i, f"j{i % r}", "A.java") for i in range(n)]  # enough: jvm kept
    tasks += [task(100 + i, f"r{i % r}", "a.rs") for i in range(n - 1)]  # one task short
    tasks += [task(200 + i, f"g{i % (r - 1)}", "a.go") for i in range(n)]  # one repository short
    kept = fit_ranking.supported(tasks, layout)
    assert [name for name, _ in kept] == ["jvm"]
    t = tasks[0]
    assert t.gid(kept).tolist() == [1, 0]  # A.java scored by the group, other.py by the default
    sys.modules.pop("fit_ranking", None)
    sys.modules.pop("locsets", None)


def test_the_fits_scorer_unites_declaration_pairs_as_the_ranking_does(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import fit_ranking
    import numpy as np

    row = {
        "instance_id": "t",
        "group": "g",
        "language": "C",
        "weight": 1.0,
        "gold_files": ["src/server.c"],
        "candidates": {"src/server.h": {"lex_plain": 1.0}, "src/server.c": {"lex_plain": 0.2}},
        "hub": {"src/server.h": 1.0, "src/server.c": 0.5, "src/util.c": 0.0},
        "demoted": [],
    }
    t = fit_ranking.Task(row)
    w = np.array([1.0 if f == "lex_plain" else 0.0 for f in FEATURES])
    # the header's own evidence is its implementation's too, and it ranks after it
    assert t.ranks(w, 0.5) == {"src/server.c": 1}
    sys.modules.pop("fit_ranking", None)
    sys.modules.pop("locsets", None)
