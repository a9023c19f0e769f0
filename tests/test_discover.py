import os

import pytest

from repomapper.discover import DiscoveryError, GlobError, compile_globs, discover
from tests.conftest import git


def paths(d):
    return [f.path for f in d.files]


def test_walk_applies_nested_gitignores_when_asked(make_tree):
    root = make_tree(
        {
            ".gitignore": "*.log\nbuild/\n",
            "a.py": "x = 1\n",
            "debug.log": "x\n",
            "build/out.py": "x\n",
            "pkg/.gitignore": "secret.py\n!keep.log\n",
            "pkg/secret.py": "x\n",
            "pkg/mod.py": "x\n",
            "pkg/keep.log": "x\n",
            "node_modules/dep/index.js": "x\n",
        }
    )
    d = discover(root, use_git=False, gitignore=True)
    assert d.source == "walk"
    assert paths(d) == [".gitignore", "a.py", "pkg/.gitignore", "pkg/keep.log", "pkg/mod.py"]


def test_git_lists_tracked_and_untracked_not_ignored(make_tree):
    root = make_tree({".gitignore": "ignored.py\n", "tracked.py": "x\n", "ignored.py": "x\n"})
    git(root, "init", "-q")
    git(root, "add", "tracked.py", ".gitignore")
    git(root, "commit", "-qm", "init")
    (root / "untracked.py").write_text("y\n")
    d = discover(root)
    assert d.source == "git"
    assert paths(d) == [".gitignore", "tracked.py", "untracked.py"]


def test_git_fsmonitor_from_repository_config_is_never_run(make_tree, tmp_path):
    root = make_tree({"a.py": "x\n"})
    git(root, "init", "-q")
    marker = tmp_path / "pwned"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(hook))
    d = discover(root)
    assert "a.py" in paths(d)
    assert not marker.exists()


def test_include_exclude_globs_with_double_star(make_tree):
    root = make_tree({"src/a.py": "", "src/deep/b.py": "", "src/c.go": "", "docs/x.py": ""})
    assert paths(discover(root, include=["**/*.py"], use_git=False)) == [
        "docs/x.py",
        "src/a.py",
        "src/deep/b.py",
    ]
    assert paths(discover(root, include=["*.py"], exclude=["docs/**"], use_git=False)) == [
        "src/a.py",
        "src/deep/b.py",
    ]
    assert paths(discover(root, include=["src/**"], exclude=["*.go"], use_git=False)) == [
        "src/a.py",
        "src/deep/b.py",
    ]


@pytest.mark.parametrize("bad", ["a" * 2000, "*.py\n*.js", "x\x00y"])
def test_hostile_globs_are_rejected_with_a_message(bad):
    with pytest.raises(GlobError):
        compile_globs([bad], "--include")


def test_shell_metacharacters_are_just_characters(make_tree):
    root = make_tree({"a.py": ""})
    assert paths(discover(root, include=["$(touch pwned); *.py"], use_git=False)) == []
    assert not (root / "pwned").exists()


def test_size_limit_and_symlinks(make_tree, tmp_path):
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    root = make_tree({"small.py": "x = 1\n", "big.py": "x" * 5000})
    os.symlink(outside, root / "escape.py")
    os.symlink(root / "small.py", root / "inside_link.py")
    os.symlink(root / "missing.py", root / "dangling.py")
    d = discover(root, max_file_size=1000, use_git=False)
    assert paths(d) == ["inside_link.py", "small.py"]
    codes = {(x.code, x.path) for x in d.diagnostics}
    assert ("too_large", "big.py") in codes
    assert ("symlink_outside_root", "escape.py") in codes


def test_symlinked_directory_out_of_root_is_not_walked(make_tree, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "x.py").write_text("y = 1\n")
    root = make_tree({"a.py": ""})
    os.symlink(elsewhere, root / "linkdir")
    assert paths(discover(root, use_git=False)) == ["a.py"]


def test_bad_roots(tmp_path):
    with pytest.raises(DiscoveryError, match="no such directory"):
        discover(tmp_path / "nope")
    f = tmp_path / "file.py"
    f.write_text("")
    with pytest.raises(DiscoveryError, match="not a directory"):
        discover(f)


def test_unsafe_file_names_are_skipped_with_a_printable_reason(make_tree):
    root = make_tree({"ok.py": "x = 1\n", "new\nline.py": "y = 2\n"})
    (root / b"bad\xffname.py".decode("utf-8", "surrogateescape")).write_text("z = 3\n")
    d = discover(root, use_git=False)
    assert paths(d) == ["ok.py"]
    reasons = {x.path: x.message for x in d.diagnostics if x.code == "unsafe_path"}
    assert reasons == {
        "new\\nline.py": "file name contains control characters; skipped",
        "bad\\xffname.py": "file name is not valid UTF-8; skipped",
    }


def test_a_root_inside_an_ignored_folder_is_walked(make_tree):
    outer = make_tree(
        {".gitignore": "cache/\n", "cache/corpus/a.py": "x = 1\n", "cache/corpus/b.py": "y = 2\n"}
    )
    git(outer, "init", "-q")
    d = discover(outer / "cache" / "corpus")
    assert d.source == "walk"
    assert paths(d) == ["a.py", "b.py"]


@pytest.mark.parametrize("batch", [1, 3, 4096])
def test_stat_listing_is_stat_entry_of_each_name_in_order(tmp_path, monkeypatch, batch):
    """The batched stat of a listing (one lstat for a plain file, names checked a batch at a
    time) answers as stat_entry does for every kind of name: regular, too large, a link inside
    or outside, dangling, a folder, missing, non-ASCII, with control characters, absolute;
    whether an odd name shares its batch with plain ones or not."""
    from repomapper import discover
    from repomapper.discover import FileEntry, stat_entry, stat_listing

    monkeypatch.setattr(discover, "_BATCH", batch)
    root = tmp_path / "r"
    (root / "d").mkdir(parents=True)
    (root / "a.py").write_text("x = 1\n")
    (root / "big.py").write_text("x" * 100)
    (root / "é.py").write_text("y = 2\n")
    (root / "b c.py").write_text("w = 4\n")
    (tmp_path / "outside.py").write_text("z = 3\n")
    os.symlink(root / "a.py", root / "inside_link.py")
    os.symlink(tmp_path / "outside.py", root / "outside_link.py")
    os.symlink(root / "gone.py", root / "dangling.py")
    names = [
        "a.py", "big.py", "é.py", "inside_link.py", "outside_link.py", "dangling.py", "d",
        "missing.py", "b c.py", "bad\nname.py", "/abs.py", "a.py",
    ]  # fmt: skip
    each = [stat_entry(root, n, 50) for n in names]
    entries, diags = stat_listing(root, names, 50)
    assert entries == [x for x in each if isinstance(x, FileEntry)]
    assert diags == [x for x in each if x is not None and not isinstance(x, FileEntry)]
    assert [e.path for e in entries] == ["a.py", "é.py", "inside_link.py", "b c.py", "a.py"]
    assert {d.code for d in diags} == {"too_large", "symlink_outside_root", "unsafe_path"}
