"""The optional embedding signal: what a file is embedded as, the feature's scale, where it
enters the ranking, the memo's key, and what a caller hears when the extra is missing."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from click.testing import CliRunner

from repomapper import RepoMap
from repomapper.cli import main
from repomapper.contract import MapOptions, run_map
from repomapper.model import Tag
from repomapper.relevance import embedding, parse_task
from repomapper.relevance.embedding import (
    INSTALL_EMBED,
    RERANKED,
    Embedder,
    EmbeddingUnavailable,
    embedding_feature,
    header_text,
)

#: words the fake model knows, one dimension each
VOCAB = ("invoice", "bill", "tax", "render", "colour", "socket", "retry", "parse")


def word_ids(text: str) -> list[int]:
    """A token per word of :data:`VOCAB` in ``text`` (a synonym shares its id: 'bill' is
    'invoice'), as the package's tokenizer gives ids."""
    out = []
    for word in text.lower().replace("_", " ").replace("(", " ").split():
        word = "invoice" if word.startswith("bill") else word
        out += [j for j, v in enumerate(VOCAB) if word.startswith(v)]
    return out


FAKE = Embedder("fake words", word_ids, np.eye(len(VOCAB), dtype=np.float32))
#: the package's loader, before the tests' fixtures stand in for it
REAL_LOADER = embedding.load_embedder


def tag(name: str, line: int, signature: str | None = None, scope: str = "") -> Tag:
    return Tag("f.py", line, line + 1, name, "def", "function", scope, signature)


# -- what a file is embedded as ---------------------------------------------------------------
def test_a_file_is_its_path_words_then_each_definitions_header_in_line_order():
    data = b"import x\n\ndef make_invoice(order, tax):\n    pass\nclass Bill:\n    pass\n"
    defs = [tag("Bill", 5), tag("make_invoice", 3), tag("lost", 99, scope="Gone")]
    text = header_text("billing/make_tax.py", defs, data)
    assert text.splitlines() == [
        "billing make tax.py",
        "def make_invoice(order, tax):",
        "class Bill:",
        "Gone lost",  # a line past the file's end: its qualified name
    ]
    # a backend's signature stands for the source line; an unread file has names only
    assert header_text("a.py", [tag("f", 1, "f(a, b) -> int")], None).splitlines()[1] == (
        "f(a, b) -> int"
    )
    long = header_text("a.py", [tag("f", 1, "x" * 5000)], None).splitlines()[1]
    assert len(long) == embedding.MAX_HEADER_CHARS


def test_the_feature_is_above_the_median_and_normalized_to_the_best():
    defs = {
        "billing.py": [tag("total_bill", 1), tag("add_tax", 2)],
        "invoice.py": [tag("invoice_number", 1)],
        "paint.py": [tag("render_colour", 1)],
        "net.py": [tag("socket_retry", 1)],
    }
    found = embedding_feature(FAKE, "The invoice tax is wrong", sorted(defs), defs, None)
    assert found["billing.py"] == 1.0  # 'bill' is an invoice, and it has the tax
    assert 0 < found["invoice.py"] < 1
    assert "paint.py" not in found and "net.py" not in found  # at or below the median
    # nothing to compare one file with; nothing above the median when all are alike
    assert embedding_feature(FAKE, "invoice", ["billing.py"], defs, None) == {}
    assert embedding_feature(FAKE, "zzz", sorted(defs), defs, None) == {}


def test_a_text_without_known_tokens_is_a_zero_vector_not_a_nan():
    vectors = FAKE.embed(["", "invoice invoice"])
    assert np.all(vectors[0] == 0) and np.linalg.norm(vectors[1]) == pytest.approx(1.0)


# -- in the ranking ---------------------------------------------------------------------------
REPO = {
    "shop/billing.py": "def total_bill(cart):\n    return sum(cart)\n\n"
    "def add_levy(value):\n    return value\n",
    "shop/paint.py": "def render_colour(widget):\n    return widget\n",
    "shop/net.py": "def socket_retry(conn):\n    return conn\n",
    "shop/parse.py": "def parse_order(text):\n    return text\n\n"
    "def large_amounts(orders):\n    return orders\n",
}
TASK = "The invoice amounts are wrong for large orders"


@pytest.fixture
def fake_embedder(monkeypatch):
    monkeypatch.setattr(embedding, "load_embedder", lambda: FAKE)


def weighted(monkeypatch, value):
    """The ranking stage scoring with the shipped weights but ``embed`` at ``value``."""
    import repomapper.stages.ranking as stage
    from repomapper.relevance import model
    from repomapper.relevance.weights import RankingWeights, shipped_weights

    base = shipped_weights().default
    weights = RankingWeights({**base.weights, "embed": value}, base.role_factor)
    monkeypatch.setattr(
        stage, "rank_task", lambda *a, **kw: model.rank_task(*a, **kw, weights=weights)
    )


def test_the_signal_lifts_the_file_whose_definitions_mean_the_task(
    make_tree, fake_embedder, monkeypatch
):
    root = make_tree(REPO, "emb")
    plain = RepoMap(root, use_cache=False).rank(task=TASK)
    weighted(monkeypatch, 5.0)
    lifted = RepoMap(root, use_cache=False).rank(task=TASK, embedding=True)
    assert plain.files[0].path != "shop/billing.py"
    assert lifted.files[0].path == "shop/billing.py"
    why = {r.signal: r for r in lifted.files[0].why}
    assert why["embedding"].detail == "its definitions read like the task"
    # without the setting, the same weights rank as before: the feature is not there
    again = RepoMap(root, use_cache=False).rank(task=TASK)
    assert [f.path for f in again.files] == [f.path for f in plain.files]


def test_a_weight_of_zero_ranks_as_without_the_signal(make_tree, fake_embedder, monkeypatch):
    root = make_tree(REPO, "emb0")
    weighted(monkeypatch, 0.0)
    plain = RepoMap(root, use_cache=False).rank(task=TASK)
    with_signal = RepoMap(root, use_cache=False).rank(task=TASK, embedding=True)
    assert [(f.path, f.score, f.why) for f in with_signal.files] == [
        (f.path, f.score, f.why) for f in plain.files
    ]


def test_only_the_best_files_by_the_other_evidence_are_embedded(monkeypatch):
    from repomapper.relevance.model import _embedding

    seen: list[list[str]] = []

    def spy(embedder, task, candidates, definitions, read):
        seen.append(list(candidates))
        return {}

    monkeypatch.setattr("repomapper.relevance.model.embedding_feature", spy)
    from repomapper.relevance.weights import LanguageWeights, shipped_weights

    paths = [f"f{i:03}.py" for i in range(RERANKED + 20)]
    values = {"lex_title": {p: (i + 1) / len(paths) for i, p in enumerate(paths)}}
    query = parse_task("x y z")
    _embedding(
        query,
        FAKE,
        {},
        paths,
        values,
        set(),
        {},
        LanguageWeights(shipped_weights().default),
        None,
        {},
    )
    assert seen == [list(reversed(paths))[:RERANKED]]


def test_a_memoised_map_without_the_signal_is_not_replayed_for_one_with_it(make_tree, tmp_path):
    root = make_tree(REPO, "emb_memo")
    cache = tmp_path / "cache"
    with RepoMap(root, cache_dir=cache) as rm:
        rm.map(task=TASK)
    with RepoMap(root, cache_dir=cache) as rm, pytest.raises(EmbeddingUnavailable):
        rm.map(task=TASK, embedding=True)  # ranked again, so the loader is asked


@pytest.fixture(autouse=True)
def _no_real_loads(request, monkeypatch):
    """Outside the tests that load the real package, the loader fails as without the extra."""
    if request.node.name in REAL or "fake_embedder" in request.fixturenames:
        return

    def missing():
        raise EmbeddingUnavailable(f"the embedding signal needs the 'embed' extra: {INSTALL_EMBED}")

    monkeypatch.setattr(embedding, "load_embedder", missing)


#: the tests that load the real package
REAL = {"test_the_shipped_table_loads_offline_and_embeds_deterministically"}


# -- without the extra ------------------------------------------------------------------------
def test_without_the_package_the_loader_says_how_to_install_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordllama", None)
    with pytest.raises(EmbeddingUnavailable, match=r"repomapper\[embed\]"):
        REAL_LOADER.__wrapped__()


def test_the_cli_and_the_contract_say_the_extra_is_missing(make_tree):
    root = make_tree(REPO, "emb_cli")
    res = CliRunner().invoke(main, ["map", str(root), "--task", TASK, "--embed", "--no-cache"])
    assert res.exit_code != 0
    assert "repomapper[embed]" in res.output
    answer = run_map(
        {"clone_path": str(root), "task": TASK}, MapOptions(use_cache=False, embedding=True)
    )
    assert answer.outcome == "error"
    assert answer.reason is not None and answer.reason.code == "backend_missing"
    assert answer.reason.install == INSTALL_EMBED
    # a map without a task never loads it
    no_task = run_map({"clone_path": str(root)}, MapOptions(use_cache=False, embedding=True))
    assert no_task.outcome == "ok"
    plain = CliRunner().invoke(main, ["map", str(root), "--embed", "--no-cache"])
    assert plain.exit_code == 0, plain.output


# -- the real package (the embed extra) -------------------------------------------------------
def test_the_shipped_table_loads_offline_and_embeds_deterministically(monkeypatch):
    pytest.importorskip("wordllama")

    def no_network(*a, **kw):
        raise AssertionError("the embedding must not reach the network")

    import requests

    monkeypatch.setattr(requests, "get", no_network)
    monkeypatch.setattr(requests.Session, "request", no_network)
    embedding.load_embedder.cache_clear()
    try:
        embedder = embedding.load_embedder()
    finally:
        embedding.load_embedder.cache_clear()
    assert embedder.name.startswith("wordllama ")
    texts = ["def total_invoice(order, tax)", "def render_colour(widget)", ""]
    a, b = embedder.embed(texts), embedder.embed(texts)
    assert a.shape[0] == 3 and np.array_equal(a, b)
    assert np.linalg.norm(a[0]) == pytest.approx(1.0) and not np.any(a[2])
    near = embedding_feature(
        embedder,
        "the invoice total ignores the tax",
        ["billing.py", "paint.py", "net.py"],
        {
            "billing.py": [tag("total_invoice", 1, "def total_invoice(order, tax)")],
            "paint.py": [tag("render_colour", 1, "def render_colour(widget)")],
            "net.py": [tag("open_socket", 1, "def open_socket(host, port)")],
        },
        None,
    )
    assert near.get("billing.py") == 1.0
