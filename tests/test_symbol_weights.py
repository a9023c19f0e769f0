"""The symbol scoring's fitted constants: the weights file, its loader, the features they weigh,
and the fit's replay of the map's symbol order."""

from __future__ import annotations

import dataclasses
import json
import sys
from pathlib import Path

import pytest

from repomapper import RepoMap
from repomapper.codedigest import MADE_BY, _selected
from repomapper.model import SymbolKind, Tag
from repomapper.relevance.symbol_weights import (
    SYMBOL_WEIGHT_NAMES,
    SymbolWeightsError,
    load_symbol_weights,
    parse_symbol_weights,
    shipped_symbol_weights,
)
from repomapper.relevance.symbols import (
    MESSAGE,
    WORDS,
    score_symbols,
)

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def _doc(**over: float) -> dict:
    return {"weights": {**shipped_symbol_weights().to_dict(), **over}}


def test_the_shipped_weights_are_valid_and_keyed_with_the_map():
    w = shipped_symbol_weights()
    assert set(w.to_dict()) == set(SYMBOL_WEIGHT_NAMES)
    assert "relevance/symbol_weights.json" in _selected(MADE_BY["map"])


@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ([], "not a JSON object"),
        ({}, "no 'weights' object"),
        ({"weights": {"words": 1.0}}, "missing"),
        (_doc(extra=1.0), "unknown ['extra']"),
        (_doc(words=-1.0), "'words' must be a finite number >= 0"),
        (_doc(doc=float("nan")), "'doc' must be a finite number >= 0"),
        (_doc(owner_share=0.0), "'owner_share' must be in (0, 1]"),
        (_doc(evidence_power=5.0), "'evidence_power' must be in (0, 4]"),
        (_doc(place_share=1.5), "'place_share' must be in (0, 1]"),
        (_doc(place_power=0.0), "'place_power' must be in (0, 8]"),
        (_doc(name=0.0, doc=0.0, body=0.0), "are all 0"),
    ],
)
def test_a_broken_document_is_a_clear_error(doc, says):
    with pytest.raises(SymbolWeightsError, match="where") as info:
        parse_symbol_weights(doc, "where")
    assert says in str(info.value)


def test_an_unreadable_or_invalid_file_names_itself(tmp_path):
    with pytest.raises(SymbolWeightsError, match="cannot read"):
        load_symbol_weights(tmp_path / "absent.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(SymbolWeightsError, match="not valid JSON"):
        load_symbol_weights(bad)
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_doc(words=0.7)), encoding="utf-8")
    assert load_symbol_weights(good).words == 0.7


# -- the weights and the features, in the scoring ---------------------------------------------


def _tag(name: str, kind: SymbolKind, line: int, end: int, scope: str = "", sig: str = "") -> Tag:
    return Tag("m.py", line, end, name, "def", kind, scope, sig or None, None)


TEXT = "class Cart:\n    def total(self):\n        raise ValueError('bad discount')\n\n\n"
TEXT += "def render_receipt():\n    return 'receipt'\n"
DEFS = {
    "m.py": [
        _tag("Cart", SymbolKind.CLASS, 1, 3, sig="class Cart:"),
        _tag("total", SymbolKind.METHOD, 2, 3, "Cart", "def total(self):"),
        _tag("render_receipt", SymbolKind.FUNCTION, 6, 7, sig="def render_receipt():"),
    ]
}
IDF = {"receipt": 2.0, "render": 1.0, "discount": 3.0}
FOUND = {
    ("m.py", "total"): [("qualified_name", "Cart.total", 0.8)],
    ("m.py", "Cart"): [("qualified_name", "Cart.total", 0.8)],
}


def _score(weights=None, features=False):
    return score_symbols(
        [("m.py", 1.0)],
        DEFS,
        FOUND,
        IDF,
        read=lambda p: TEXT.encode(),
        messages=("bad discount",),
        weights=weights,
        features=features,
    )


def test_the_scoring_follows_the_weights_it_is_given():
    shipped = shipped_symbol_weights()
    got = _score()
    total, cart = ("m.py", "Cart.total", 2), ("m.py", "Cart", 1)
    assert any(r.signal == MESSAGE for r in got.reasons[total])
    assert any(r.signal == WORDS for r in got.reasons[("m.py", "render_receipt", 6)])
    quiet = _score(dataclasses.replace(shipped, words=0.0, message=0.0))
    assert all(r.signal not in (WORDS, MESSAGE) for rs in quiet.reasons.values() for r in rs)
    assert quiet.scores[total] == pytest.approx(0.8)
    half = dataclasses.replace(shipped, owner_share=0.5)
    whole = dataclasses.replace(shipped, owner_share=1.0)
    # the owner of ``Cart.total``, then a class whose member has evidence: the share twice
    assert _score(whole).scores[cart] == pytest.approx(0.8)
    assert _score(half).scores[cart] == pytest.approx(0.8 * 0.5 * 0.5)


def test_features_come_on_request_and_say_what_the_score_is_made_of():
    assert _score().features is None
    f = _score(features=True).features
    assert f is not None
    total = f[("m.py", "Cart.total", 2)]
    assert (total.named, total.named_owner, total.message) == (0.8, 0.0, 1.0)
    assert total.member_of == ("m.py", "Cart", 1) and not total.incidental
    cart = f[("m.py", "Cart", 1)]
    assert (cart.named, cart.named_owner) == (0.0, 0.8)  # the owner of Cart.total
    render = f[("m.py", "render_receipt", 6)]
    assert render.name == pytest.approx(3.0)  # render (1) + receipt (2) in its name
    assert render.body > 0 and render.file_relevance == 1.0


# -- the fit's replay ---------------------------------------------------------------------------

REPO = {
    "shop/cart.py": "class Cart:\n    def connect(self):\n        return 1\n\n"
    "    def total(self):\n        '''The receipt total after the discount.'''\n"
    "        return apply_discount(self.items)\n\n    def clear(self):\n        pass\n",
    "shop/pricing.py": "def apply_discount(total, pct):\n    '''Discount a receipt total.'''\n"
    "    if pct > 100:\n        raise ValueError('discount above 100')\n    return total\n\n"
    "def round_money(x):\n    return round(x, 2)\n",
    "shop/store.py": "class Store:\n    def connect(self):\n        return 2\n\n"
    "    def checkout(self, cart):\n        return cart.total()\n",
    "shop/remote.py": "class Remote:\n    def connect(self):\n        return 3\n",
    "shop/receipt.py": "def render():\n    return 'receipt'\n\nTAX = 0.2\n",
}
TASK = (
    "Cart.total gives the wrong receipt total when the discount is above 100: apply_discount "
    "raises 'discount above 100' and connect fails in the store checkout"
)


def test_the_fits_replay_gives_the_maps_symbol_order(make_tree, monkeypatch):
    """The fit scores constants by replaying the map's symbol order from the dumped features:
    with the shipped constants the replay is the order ``ranked_symbols`` has."""
    monkeypatch.syspath_prepend(str(BENCH))
    import fit_symbols
    import localization

    root = make_tree(REPO, "shop")
    rm = RepoMap(root, use_cache=False)
    with localization.SymbolFeatures() as captured:
        ranked = rm.rank(task=TASK)
    result = rm.render(ranked, 1024)
    assert captured.features
    row = {
        "instance_id": "t",
        "repo": "o/shop",
        "dataset": "x",
        "gold_spans": [["shop/cart.py", "Cart.total", 5, 7]],
        "gold_files": {"shop/cart.py": 1},
        **localization.run_details(ranked, result, captured.features),
    }
    task = fit_symbols.Task(json.loads(json.dumps(row)))
    assert task.complete
    expected = []
    for s in result.ranked_symbols:
        if (s.path, s.name, s.line) not in [e[:3] for e in expected]:
            expected.append((s.path, s.name, s.line, s.end_line))
    assert len(expected) >= 8
    assert task.symbols(shipped_symbol_weights()) == expected
    assert task.outcome(shipped_symbol_weights())["rr"] > 0
    for name in ("fit_symbols", "localization", "locsets"):
        sys.modules.pop(name, None)


def test_the_task_maps_order_follows_the_place_and_evidence_constants(make_tree, monkeypatch):
    """With a steep place floor, a file's definitions without evidence give way to a lower
    file's definitions the task describes; with a flat one the best file's come first, all."""
    import repomapper.ranked as ranked_module

    root = make_tree(REPO, "shop")

    def order(**over: float) -> list[tuple[str, bool]]:
        w = dataclasses.replace(shipped_symbol_weights(), **over)
        monkeypatch.setattr(ranked_module, "shipped_symbol_weights", lambda: w)
        rm = RepoMap(root, use_cache=False)
        result = rm.render(rm.rank(task=TASK), 1024)
        return [(s.path, bool(s.why)) for s in result.ranked_symbols]

    steep = order(place_share=0.1, place_power=8.0, evidence_power=0.25)
    with_evidence = [has for _, has in steep]
    assert with_evidence == sorted(with_evidence, reverse=True) and not all(with_evidence)
    flat = order(place_share=1.0, place_power=0.1, evidence_power=4.0)
    best = flat[0][0]
    of_best = [f for f in flat if f[0] == best]
    assert flat[: len(of_best)] == of_best and not all(has for _, has in of_best)
