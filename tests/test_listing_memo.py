"""A warm map replayed from its listing: each file's stat stands in for its content key when
every stat was taken well after the file was last written."""

import os
import time

import pytest

from repomapper.cache import RACY_NS
from repomapper.extract import Extractor
from repomapper.memo import listed_map, listing_digest, listing_key
from repomapper.repomap import RepoMap

FILES = {
    "shop/cart.py": "from shop.item import Item\n\nclass Cart:\n    def add(self, item: Item):\n        pass\n",
    "shop/item.py": "class Item:\n    def price(self):\n        return 1\n",
    "main.py": "from shop.cart import Cart\n\ndef run():\n    Cart().add(None)\n",
}


def _aged(root, seconds=3600):
    """Every file of ``root`` last written ``seconds`` ago."""
    then = time.time() - seconds
    for dirpath, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(dirpath, name), (then, then))


@pytest.fixture
def prepares(monkeypatch):
    """How many files' content keys were computed (``Extractor.prepare``)."""
    seen: list[int] = []
    real = Extractor.prepare

    def counted(self, root, entries):
        entries = list(entries)
        seen.append(len(entries))
        return real(self, root, entries)

    monkeypatch.setattr(Extractor, "prepare", counted)
    return seen


def _map(root, cache):
    with RepoMap(root, 300, cache_dir=cache) as rm:
        return rm.map(), dict(rm.state.last_stats)


def _mapped_aged(make_tree, tmp_path):
    """A tree last written an hour ago, mapped once: its root, cache and map."""
    root = make_tree(FILES)
    _aged(root)
    cache = tmp_path / "c"
    return root, cache, _map(root, cache)[0]


def test_a_warm_map_is_replayed_from_its_listing_without_any_content_key(
    make_tree, tmp_path, prepares
):
    root, cache, first = _mapped_aged(make_tree, tmp_path)
    assert prepares  # made: every key computed
    prepares.clear()
    again, stats = _map(root, cache)
    assert again == first and stats.get("memoised") == 1
    assert prepares == []  # replayed by the listing alone
    with RepoMap(root, 300, cache_dir=cache, python_backend="libcst") as rm:
        # another backend routes the same files elsewhere: its map is not this one
        other = rm.map()
        assert rm.state.last_stats.get("memoised") is None
    assert other.ranked_files  # (the libcst backend maps the same tree)


def test_a_touched_file_is_keyed_by_content_again_and_its_listing_remembered(
    make_tree, tmp_path, prepares
):
    root, cache, first = _mapped_aged(make_tree, tmp_path)
    then = time.time() - 600
    os.utime(root / "shop/item.py", (then, then))  # same content, another stat
    prepares.clear()
    touched, stats = _map(root, cache)
    assert touched == first and stats.get("memoised") == 1
    assert prepares  # the listing changed: the content keys found the same map
    prepares.clear()
    assert _map(root, cache)[0] == first and prepares == []


def test_a_file_written_just_now_is_not_vouched_for_by_its_stat(make_tree, tmp_path, prepares):
    root, cache, _ = _mapped_aged(make_tree, tmp_path)
    (root / "shop/item.py").write_text("class Item:\n    def cost(self):\n        return 2\n")
    edited, _ = _map(root, cache)
    assert "cost" in edited.map
    with RepoMap(root, 300, cache_dir=cache) as rm:
        state = rm.state
        files = state.prepare(rm.settings().selection, (), [], keyed=False)
        key = listing_key(rm.settings(), state, [], files.chat)
        # the edited file's mtime is within RACY_NS of now: no listing remembered for it
        newest = max(e.mtime_ns for e in files.all_entries)
        assert newest > time.time_ns() - RACY_NS
        assert listed_map(state.cache, key, listing_digest(files.all_entries)) is None
        prepares.clear()
        assert rm.map() == edited and prepares  # keyed by content, replayed from that


def test_the_listing_key_holds_the_map_inputs_and_the_root(make_tree, tmp_path):
    a = make_tree(FILES, "a")
    b = make_tree(FILES, "b")
    with RepoMap(a, 300, cache_dir=tmp_path / "c") as ra, RepoMap(b, 300) as rb:
        plain = listing_key(ra.settings(), ra.state, [], frozenset())
        assert plain == listing_key(ra.settings(), ra.state, [], frozenset())
        assert plain != listing_key(ra.settings(task="cart"), ra.state, [], frozenset())
        assert plain != listing_key(ra.settings(), ra.state, [], frozenset({"main.py"}))
        assert plain != listing_key(rb.settings(), rb.state, [], frozenset())
