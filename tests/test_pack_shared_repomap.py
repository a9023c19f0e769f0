"""A pack mapper reads an existing RepoMap (no second one), leaves it open for its owner, and
closes only the RepoMap it made itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from repomapper import RepoMapper
from repomapper.pack import PackError
from repomapper.repomap import RepoMap
from tests.test_pack import make_repo


@pytest.fixture
def repo(tmp_path) -> Path:
    return make_repo(tmp_path / "repo")


def count_calls(monkeypatch, obj, name: str) -> list:
    calls: list = []
    real = getattr(obj, name)

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    monkeypatch.setattr(obj, name, spy)
    return calls


def test_a_given_repomap_is_read_and_left_open(repo, monkeypatch):
    made: list = []
    real_init = RepoMap.__init__

    def counting_init(self, *args, **kwargs):
        made.append(self)
        real_init(self, *args, **kwargs)

    monkeypatch.setattr(RepoMap, "__init__", counting_init)
    rm = RepoMap(repo)
    made.clear()
    extracted = count_calls(monkeypatch, rm.state, "extract_full")
    ranked = count_calls(monkeypatch, rm, "rank")
    closed = count_calls(monkeypatch, rm, "close")
    with RepoMapper(repo, repomap=rm, env={}) as m:
        assert m.repomap is rm and m.counter is rm.counter
        pack = m.generate_context_pack_sync("s1", "save", ["app/memory.py"], "coding")
        assert pack.files[0].path == "app/memory.py"
    assert made == []  # no second RepoMap
    assert extracted  # the lines of references from its state's extraction
    assert ranked  # and the selection from its ranking
    assert closed == []  # the owner closes it
    text = rm.get_repo_map(["app/memory.py"], ["app/service.py"])
    assert text and "register_user" in text  # and it still maps
    rm.close()
    assert len(closed) == 1


def test_the_mapper_closes_the_repomap_it_made(repo, monkeypatch):
    m = RepoMapper(repo, env={})
    closed = count_calls(monkeypatch, m.repomap, "close")
    m.generate_context_pack_sync("s2", "save", ["app/memory.py"], "coding")
    m.close()
    assert len(closed) == 1
    with RepoMapper(repo, env={}) as m2:
        closed2 = count_calls(monkeypatch, m2.repomap, "close")
    assert len(closed2) == 1


def test_shared_repomap_and_own_give_the_same_pack(repo):
    with RepoMapper(repo, env={}) as own:
        a = own.generate_context_pack_sync("s3", "save records", ["app/memory.py"], "reviewing")
    with RepoMap(repo) as rm, RepoMapper(repo, repomap=rm, env={}) as shared:
        b = shared.generate_context_pack_sync("s3", "save records", ["app/memory.py"], "reviewing")
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize(
    "kw",
    [
        {"use_cache": False},
        {"cache_dir": "/tmp/x"},
        {"include": ["*.py"]},
        {"exclude": ["tests/"]},
    ],
)
def test_repomap_settings_with_a_given_repomap_are_refused(repo, kw):
    with RepoMap(repo) as rm, pytest.raises(PackError, match="settings of the RepoMap given"):
        RepoMapper(repo, repomap=rm, env={}, **kw)


def test_a_repomap_of_another_root_is_refused(repo, tmp_path):
    other = make_repo(tmp_path / "other")
    with RepoMap(other) as rm, pytest.raises(PackError, match="not this mapper's repository"):
        RepoMapper(repo, repomap=rm, env={})


def test_own_output_under_the_root_is_not_mapped_by_a_shared_repomap(repo):
    with RepoMap(repo) as rm, RepoMapper(repo, repomap=rm, env={}, pack_dir="out") as m:
        m.generate_context_pack_sync("s4", "save", ["app/memory.py"], "coding")
        assert (repo / "out/s4.json").is_file()
        first = m.generate_context_pack_sync("s5", "save", ["app/memory.py"], "coding")
        (repo / "out/extra.py").write_text("def save():\n    return 1\n")
        again = m.generate_context_pack_sync("s5", "save", ["app/memory.py"], "coding")
        # the packs written (and anything else there) are neither selected nor in the file set
        assert again.metadata["file_set"] == first.metadata["file_set"]
        assert not any(f.path.startswith("out/") for f in again.files)
        assert not m.links().resolve("out/extra.py")
