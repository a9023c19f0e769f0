"""Discovery follows the convention of git, ripgrep and fd (.gitignore inside a git work tree,
or when asked; .ignore and .repomapperignore everywhere) and says what it left out."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from repomapper import discover as discover_mod
from repomapper import gitcmd
from repomapper.discover import (
    LEFT_OUT_REASONS,
    LeftOut,
    discover,
    explain_empty,
    left_out_summary,
)
from tests.conftest import git

#: a representative subset of the Linux kernel's top-level .gitignore, in its order, with the
#: two lines Debian's linux-source package appends (its packaging repository tracks only debian/)
KERNEL_GITIGNORE = """\
# SPDX-License-Identifier: GPL-2.0-only
#
# NOTE! Don't add files that are generated in specific
# subdirectories here. Add them in the ".gitignore" file
# in that subdirectory instead.
#
# Normal rules (sorted alphabetically)
#
.*
*.a
*.asn1.[ch]
*.bin
*.ko
*.mod
*.mod.c
*.o
*.o.*
*.s
*.tab.[ch]
Module.symvers
modules.order

#
# Top-level generic files
#
/linux
/vmlinux
/vmlinux.32
/System.map
/modules.builtin

#
# RPM spec file (make rpm-pkg)
#
/*.spec

#
# Debian directory (make deb-pkg)
#
/debian/

# Kconfig presets, all the build output
/all.config
/include/config/
/include/generated/

# We don't want to ignore the following even if they are dot-files
#
!.clang-format
!.cocciconfig
!.get_maintainer.ignore
!.gitattributes
!.gitignore
!.mailmap
"""
DEBIAN_TAIL = "/*\n!/debian/\n"
#: the line of DEBIAN_TAIL's "/*" once appended
SLASH_STAR_LINE = KERNEL_GITIGNORE.count("\n") + 1

KERNEL_TREE = {
    ".gitignore": KERNEL_GITIGNORE,
    ".clang-format": "BasedOnStyle: LLVM\n",
    ".mailmap": "A <a@example.invalid>\n",
    # a file named like an ignore file that is not one: were it read, every .c would go
    ".get_maintainer.ignore": "*.c\n",
    ".tmp_versions/x.mod": "x\n",
    "Makefile": "all:\n",
    "vmlinux": "ELF\n",
    "System.map": "map\n",
    "kernel/fork.c": "int fork;\n",
    "kernel/fork.o": "obj\n",
    "kernel/.fork.o.cmd": "cmd\n",
    "kernel/vmlinux": "not at the top: kept\n",
    "arch/x86/boot/.gitignore": "bzImage\n!setup.bin\n",
    "arch/x86/boot/bzImage": "image\n",
    "arch/x86/boot/setup.bin": "kept by the nested negation\n",
    "arch/x86/boot/main.c": "int main;\n",
    "include/config/auto.conf": "x\n",
    "include/linux/sched.h": "struct task;\n",
    "scripts/kconfig/parser.tab.c": "generated\n",
    "scripts/kconfig/lexer.l": "lex\n",
    "kernel.spec": "rpm\n",
    "drivers/net/e1000.ko": "module\n",
    "drivers/net/e1000.c": "int e1000;\n",
}


def paths(d) -> list[str]:
    return [f.path for f in d.files]


def git_view(root: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout
    return sorted(n.decode() for n in out.split(b"\0") if n)


def ignored(d) -> dict[tuple[str, str], int]:
    return {(x.source, x.pattern): x.count for x in d.left_out if x.reason == "ignored"}


# -- outside a git work tree -------------------------------------------------------------------


def test_an_unpacked_tarball_with_a_slash_star_gitignore_maps_everything_by_default(make_tree):
    root = make_tree({**KERNEL_TREE, ".gitignore": KERNEL_GITIGNORE + DEBIAN_TAIL})
    d = discover(root)
    assert d.source == "walk"
    assert d.ignore_files == (".ignore", ".repomapperignore")
    assert sorted(paths(d)) == sorted(KERNEL_TREE)
    assert d.left_out == ()


def test_asked_to_honour_gitignore_it_maps_nothing_and_names_the_rule(make_tree):
    root = make_tree({**KERNEL_TREE, ".gitignore": KERNEL_GITIGNORE + DEBIAN_TAIL})
    d = discover(root, gitignore=True)
    assert d.files == ()
    assert d.ignore_files == (".gitignore", ".ignore", ".repomapperignore")
    (rule,) = d.left_out
    assert (rule.reason, rule.source, rule.pattern) == (
        "ignored",
        f".gitignore:{SLASH_STAR_LINE}",
        "/*",
    )
    assert rule.count == len(KERNEL_TREE) and not rule.at_least
    assert rule.sample == (".tmp_versions/", "arch/", "drivers/")
    msg = explain_empty(d)
    assert msg.startswith(
        f"no files matched under {root}: {len(KERNEL_TREE)} file(s) found, all left out: "
        f"{len(KERNEL_TREE)} by .gitignore:{SLASH_STAR_LINE} '/*'"
    )
    assert "honours .gitignore only when asked" in msg


def test_walk_honouring_the_kernels_gitignore_lists_what_git_lists(make_tree):
    root = make_tree(KERNEL_TREE)
    walked = discover(root, gitignore=True)
    git(root, "init", "-q")
    listed = discover(root)
    assert (walked.source, listed.source) == ("walk", "git")
    assert sorted(paths(walked)) == paths(listed) == git_view(root)
    assert paths(listed) == [
        ".clang-format",
        ".get_maintainer.ignore",
        ".gitignore",
        ".mailmap",
        "Makefile",
        "arch/x86/boot/.gitignore",
        "arch/x86/boot/main.c",
        "arch/x86/boot/setup.bin",
        "drivers/net/e1000.c",
        "include/linux/sched.h",
        "kernel/fork.c",
        "kernel/vmlinux",
        "scripts/kconfig/lexer.l",
    ]
    # every left-out file is accounted for, by the line that decided it (the last that matches)
    assert ignored(walked) == {
        (".gitignore:9", ".*"): 1,  # .tmp_versions/, a folder: its one file
        (".gitignore:13", "*.ko"): 1,
        (".gitignore:16", "*.o"): 1,
        (".gitignore:17", "*.o.*"): 1,  # kernel/.fork.o.cmd: matched by .* too, earlier
        (".gitignore:19", "*.tab.[ch]"): 1,
        (".gitignore:27", "/vmlinux"): 1,
        (".gitignore:29", "/System.map"): 1,
        (".gitignore:35", "/*.spec"): 1,
        (".gitignore:44", "/include/config/"): 1,
        ("arch/x86/boot/.gitignore:1", "bzImage"): 1,
    }
    # and git's own attribution (git check-ignore -v) agrees
    assert ignored(discover(root, count_ignored=True)) == ignored(walked)
    assert sum(ignored(walked).values()) + len(walked.files) == len(KERNEL_TREE)


def test_nested_ignore_files_with_negations_outside_git(make_tree):
    root = make_tree(
        {
            ".gitignore": "*.py\n",  # not applied outside git unless asked
            ".ignore": "*.gen.py\nbuild/\n!build/keep.py\n",
            "a.py": "",
            "a.gen.py": "",
            "build/keep.py": "",  # inside an ignored folder: a negation cannot bring it back
            "sub/.ignore": "!keep.gen.py\n",
            "sub/keep.gen.py": "",  # the deeper file overrides
            "sub/other.gen.py": "",
            "sub/deep/.repomapperignore": "*.txt\n!*.gen.py\n",
            "sub/deep/.ignore": "*.gen.py\n",  # .repomapperignore wins in the same folder
            "sub/deep/x.gen.py": "",
            "sub/deep/notes.txt": "",
        }
    )
    d = discover(root)
    assert sorted(paths(d)) == [
        ".gitignore",
        ".ignore",
        "a.py",
        "sub/.ignore",
        "sub/deep/.ignore",
        "sub/deep/.repomapperignore",
        "sub/deep/x.gen.py",
        "sub/keep.gen.py",
    ]
    assert ignored(d) == {
        (".ignore:1", "*.gen.py"): 2,
        (".ignore:2", "build/"): 1,
        ("sub/deep/.repomapperignore:1", "*.txt"): 1,
    }


def test_a_symlinked_ignore_file_is_not_read(make_tree, tmp_path):
    elsewhere = tmp_path / "rules"
    elsewhere.write_text("*\n")
    root = make_tree({"a.py": ""})
    os.symlink(elsewhere, root / ".ignore")
    assert "a.py" in paths(discover(root))


def test_a_bad_line_costs_that_line_only(make_tree):
    root = make_tree({".ignore": "[z-a]\n\\\n*.log\n", "a.py": "", "b.log": ""})
    d = discover(root)
    assert paths(d) == [".ignore", "a.py"]
    assert ignored(d) == {(".ignore:3", "*.log"): 1}


# -- inside a git work tree --------------------------------------------------------------------


def test_inside_git_ignore_files_filter_gits_listing_and_cannot_bring_back(make_tree):
    root = make_tree(
        {
            ".gitignore": "*.log\n",
            ".ignore": "vendor/\n*.gen.py\n!x.log\n",
            "a.py": "",
            "x.log": "",  # gitignored: .ignore's negation cannot bring it back
            "a.gen.py": "",
            "vendor/lib/v.py": "",
            "vendor/lib/.ignore": "!v.py\n",  # inside an ignored folder: no effect
            "pkg/.repomapperignore": "!b.gen.py\n",
            "pkg/b.gen.py": "",
            "pkg/c.gen.py": "",
        }
    )
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "init")
    d = discover(root)
    assert d.source == "git"
    assert paths(d) == [".gitignore", ".ignore", "a.py", "pkg/.repomapperignore", "pkg/b.gen.py"]
    assert ignored(d) == {
        (".ignore:1", "vendor/"): 2,
        (".ignore:2", "*.gen.py"): 2,
    }
    # the same rules in a walk asked to honour .gitignore give the same files
    walked = discover(root, use_git=False, gitignore=True)
    assert sorted(paths(walked)) == paths(d)


def test_inside_git_what_git_ignored_is_counted_only_when_asked(make_tree, monkeypatch):
    root = make_tree({".gitignore": "node_modules/\n*.pyc\n", "a.py": "", "a.pyc": ""})
    for i in range(7):
        (root / "node_modules" / "dep").mkdir(parents=True, exist_ok=True)
        (root / "node_modules" / "dep" / f"m{i}.js").write_text("")
    git(root, "init", "-q")
    assert discover(root).left_out == ()  # the default path runs git once
    d = discover(root, count_ignored=True)
    assert paths(d) == [".gitignore", "a.py"]
    assert ignored(d) == {(".gitignore:1", "node_modules/"): 7, (".gitignore:2", "*.pyc"): 1}
    monkeypatch.setattr(discover_mod, "IGNORED_COUNT_LIMIT", 3)
    (big,) = [x for x in discover(root, count_ignored=True).left_out if x.count >= 3]
    assert (big.count, big.at_least, big.sample) == (3, True, ("node_modules/",))
    assert "at least 3 by .gitignore:1 'node_modules/'" in left_out_summary(
        discover(root, count_ignored=True)
    )


def test_inside_git_an_empty_listing_names_gits_rules(make_tree):
    root = make_tree({".gitignore": "# everything\n*\n", "a.py": "", "src/b.py": ""})
    git(root, "init", "-q")
    d = discover(root)
    assert (d.source, d.files) == ("git", ())
    assert ignored(d) == {(".gitignore:2", "*"): 3}
    assert explain_empty(d).startswith(
        f"no files matched under {root}: 3 file(s) found, all left out: 3 by .gitignore:2 '*'"
    )


def test_a_subfolder_root_names_rules_above_it_relative_to_it(make_tree):
    top = make_tree({".gitignore": "*.o\n", "sub/a.c": "", "sub/a.o": ""})
    git(top, "init", "-q")
    d = discover(top / "sub", count_ignored=True)
    assert paths(d) == ["a.c"]
    assert ignored(d) == {("../.gitignore:1", "*.o"): 1}


def test_gitignore_false_inside_git_lists_what_git_ignores(make_tree):
    root = make_tree({".gitignore": "*.log\n", ".ignore": "*.tmp\n", "a.py": "", "b.log": ""})
    (root / "c.tmp").write_text("")
    git(root, "init", "-q")
    d = discover(root, gitignore=False)
    assert d.source == "walk" and d.ignore_files == (".ignore", ".repomapperignore")
    assert paths(d) == [".gitignore", ".ignore", "a.py", "b.log"]


def test_a_tarball_in_a_folder_the_enclosing_repo_ignores_maps_everything(make_tree):
    outer = make_tree(
        {
            ".gitignore": "tmp/\n",
            "tmp/linux/.gitignore": KERNEL_GITIGNORE + DEBIAN_TAIL,
            "tmp/linux/kernel/fork.c": "",
        }
    )
    git(outer, "init", "-q")
    d = discover(outer / "tmp" / "linux")
    assert d.source == "walk"
    assert paths(d) == [".gitignore", "kernel/fork.c"]


def test_without_a_working_git_a_work_tree_still_honours_gitignore(make_tree, monkeypatch):
    root = make_tree({".gitignore": "*.log\n", "a.py": "", "b.log": ""})
    git(root, "init", "-q")
    monkeypatch.setattr(gitcmd, "GIT", ("repomapper-no-such-git",))
    d = discover(root)
    assert d.source == "walk"
    assert paths(d) == [".gitignore", "a.py"]
    assert ignored(d) == {(".gitignore:1", "*.log"): 1}


# -- every other reason, and the messages ------------------------------------------------------


def test_every_reason_is_counted_with_its_rule(make_tree, tmp_path):
    outside = tmp_path / "secret.py"
    outside.write_text("")
    root = make_tree(
        {
            "a.py": "",
            "big.py": "x" * 2000,
            "b.go": "",
            "tests/t.py": "",
            "docs/d.py": "",
            "node_modules/dep/index.js": "",
            "node_modules/dep/other.js": "",
        }
    )
    os.symlink(outside, root / "escape.py")
    (root / "new\nline.py").write_text("")
    d = discover(root, include=["*.py"], exclude=["tests/", "docs/**"], max_file_size=1000)
    assert paths(d) == ["a.py"]
    got = {(x.reason, x.source, x.pattern): (x.count, x.sample) for x in d.left_out}
    assert got == {
        ("skipped_folder", "built-in", "node_modules"): (2, ("node_modules/",)),
        ("not_included", "include", "*.py"): (1, ("b.go",)),
        ("excluded", "exclude", "tests/"): (1, ("tests/t.py",)),
        ("excluded", "exclude", "docs/**"): (1, ("docs/d.py",)),
        ("too_large", "", ""): (1, ("big.py",)),
        ("outside_root", "", ""): (1, ("escape.py",)),
        ("unsafe_name", "", ""): (1, ("new\\nline.py",)),
    }
    assert {x.reason for x in d.left_out} <= set(LEFT_OUT_REASONS)
    assert [x.count for x in d.left_out] == sorted((x.count for x in d.left_out), reverse=True)
    assert discover(root, include=["*.py"], exclude=["tests/", "docs/**"], max_file_size=1000) == d


def test_counting_an_ignored_folder_is_bounded_and_says_so(make_tree, monkeypatch):
    root = make_tree({f"node_modules/p{i}/index.js": "" for i in range(30)} | {"a.py": ""})
    monkeypatch.setattr(discover_mod, "SKIPPED_COUNT_LIMIT", 10)
    (skipped,) = discover(root).left_out
    assert (skipped.count, skipped.at_least) == (10, True)
    monkeypatch.setattr(discover_mod, "IGNORED_COUNT_BUDGET", 4)
    (skipped,) = discover(root).left_out
    assert (skipped.count, skipped.at_least) == (4, True)
    assert left_out_summary(discover(root)) == (
        "left out at least 4 file(s): at least 4 in node_modules/ folders (never walked into)"
    )


def test_only_the_rules_that_left_out_most_are_named(make_tree):
    files = {".ignore": "".join(f"*.x{i}\n" for i in range(15))}
    files |= {f"f{i}_{j}.x{i}": "" for i in range(15) for j in range(i + 1)}
    d = discover(make_tree(files))
    rules = [x for x in d.left_out if x.reason == "ignored"]
    assert [x.source for x in rules[:10]] == [f".ignore:{i}" for i in range(15, 5, -1)]
    assert (rules[10].source, rules[10].count) == ("5 other rules", 1 + 2 + 3 + 4 + 5)
    assert sum(x.count for x in rules) == sum(range(1, 16))


def test_explain_empty_without_files_and_with_labels(make_tree, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    assert explain_empty(discover(empty)) == f"no files found under {empty}"
    root = make_tree({"a.py": "", "b.py": ""})
    d = discover(root, include=["*.go"])
    assert explain_empty(d, {"include": "include_globs"}) == (
        f"no files matched under {root}: 2 file(s) found, all left out: "
        "2 not matched by include_globs '*.go'"
    )
    d = discover(root, exclude=["a.py"])
    assert (
        explain_empty(d)
        == f"1 file(s) to map under {root}; left out 1 file(s): 1 by --exclude 'a.py'"
    )


@pytest.mark.parametrize("gitignore", [None, True, False])
def test_left_out_is_a_plain_frozen_value(make_tree, gitignore):
    root = make_tree({".ignore": "*.log\n", "a.py": "", "b.log": ""})
    (item,) = discover(root, gitignore=gitignore).left_out
    assert item == LeftOut("ignored", ".ignore:1", "*.log", 1, ("b.log",))
    with pytest.raises(AttributeError):
        item.count = 2  # type: ignore[misc]


def test_a_symlinked_left_out_folder_counts_as_one_entry_and_is_not_followed(make_tree, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    for i in range(5):
        (elsewhere / "pkg").mkdir(parents=True, exist_ok=True)
        (elsewhere / "pkg" / f"{i}.js").write_text("")
    root = make_tree({"a.py": ""})
    os.symlink(elsewhere, root / "node_modules")
    (skipped,) = discover(root).left_out
    assert (skipped.reason, skipped.count, skipped.sample) == (
        "skipped_folder",
        1,
        ("node_modules/",),
    )


def _tagged(folder: Path, text: bytes | None = None) -> None:
    from repomapper.cachetag import SIGNATURE, TAG_NAME

    folder.mkdir(parents=True, exist_ok=True)
    (folder / TAG_NAME).write_bytes(SIGNATURE + b"\n" if text is None else text)
    (folder / "rows.sqlite3").write_bytes(b"\0" * 10)
    (folder / "inner").mkdir(exist_ok=True)
    (folder / "inner" / "more.py").write_text("x = 1\n")


@pytest.mark.parametrize("in_git", [False, True])
def test_a_folder_tagged_as_a_cache_is_not_listed(tmp_path, in_git):
    """A folder whose CACHEDIR.TAG carries the signature is left out, walked or listed by git,
    and said so; a tag without the signature, a symlinked tag or a tagged root lists as usual."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    _tagged(root / ".rmcache")
    _tagged(root / "src" / "target")
    _tagged(root / "fake", b"Signature: not the one\n")
    (root / "linked").mkdir()
    os.symlink(root / ".rmcache" / "CACHEDIR.TAG", root / "linked" / "CACHEDIR.TAG")
    (root / "linked" / "b.py").write_text("y = 2\n")
    if in_git:
        git(root, "init", "-q")
    found = discover(root)
    assert found.source == ("git" if in_git else "walk")
    listed = sorted(e.path for e in found.files)
    assert listed == [
        "a.py",
        "fake/CACHEDIR.TAG",
        "fake/inner/more.py",
        "fake/rows.sqlite3",
        "linked/CACHEDIR.TAG",
        "linked/b.py",
    ]
    assert found.cache_folders == (".rmcache/", "src/target/")
    skipped = {x.pattern: x.count for x in found.left_out if x.source == "CACHEDIR.TAG"}
    assert skipped == {".rmcache": 3, "target": 3}
    assert all(x.reason == "skipped_folder" for x in found.left_out if x.source == "CACHEDIR.TAG")
    assert "tagged as caches by CACHEDIR.TAG" in left_out_summary(found)
    # the root itself tagged: what was asked for is mapped
    tagged_root = discover(root / ".rmcache")
    assert sorted(e.path for e in tagged_root.files) == [
        "CACHEDIR.TAG",
        "inner/more.py",
        "rows.sqlite3",
    ]
    assert tagged_root.cache_folders == ()


def test_a_cache_inside_the_mapped_tree_is_tagged_and_the_next_map_is_replayed(tmp_path):
    """A cache kept inside the tree it maps (outside git) is tagged, so its files never enter
    the listing: the second map of an unchanged tree is replayed, not ranked again."""
    from click.testing import CliRunner

    from repomapper.cachetag import is_tag
    from repomapper.cli import main

    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.py").write_text("def alpha():\n    return 1\n")
    (root / "b.py").write_text("from a import alpha\n\ndef beta():\n    return alpha()\n")
    cache = root / ".repomapper-cache"
    args = ["map", str(root), "--cache-dir", str(cache), "--timings", "--tokens", "256"]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    assert is_tag(cache / "CACHEDIR.TAG")
    second = CliRunner().invoke(main, args)
    assert second.exit_code == 0, second.output
    assert "the map was replayed from the cache" in second.stderr
    assert second.stdout == first.stdout
    assert ".repomapper-cache" not in second.stdout
