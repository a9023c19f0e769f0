"""The allocator policy the command applies (repomapper.mempolicy)."""

import sys

from repomapper.mempolicy import fix_mmap_threshold


def test_the_mmap_threshold_is_fixed_on_glibc_and_left_alone_elsewhere():
    import platform

    fixed = fix_mmap_threshold()
    assert fixed == (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")
    assert fix_mmap_threshold() == fixed  # applying it twice is harmless


def _switch_seen(env: dict[str, str]) -> str:
    """What a fresh process that asks numpy for no huge pages, then imports numpy, reports:
    the switch, and whether numpy advises huge pages."""
    import os
    import subprocess

    code = (
        "import os; from repomapper.mempolicy import no_numpy_huge_pages; no_numpy_huge_pages();"
        " import numpy; core = getattr(numpy, '_core', None) or numpy.core;"
        " print(os.environ.get('NUMPY_MADVISE_HUGEPAGE'), core.multiarray._get_madvise_hugepage())"
    )
    clean = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    done = subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[0]


def test_numpy_is_asked_for_no_huge_pages_unless_the_user_chose():
    assert _switch_seen({}) == "0 False"
    assert _switch_seen({"NUMPY_MADVISE_HUGEPAGE": "1"}) == "1 True"  # the user's choice stands


def test_the_map_command_asks_it_when_it_updates_a_stored_state(tmp_path, monkeypatch):
    """Only a map that updates a stored state (its arrays made afresh per call) asks: a map
    built from scratch keeps numpy's default."""
    from click.testing import CliRunner

    import repomapper.mempolicy as mempolicy
    from repomapper.cache import has_stored_state
    from repomapper.cli import main

    root, cache = tmp_path / "repo", tmp_path / "cache"
    root.mkdir()
    (root / "a.py").write_text("def f():\n    return g()\n")
    (root / "b.py").write_text("def g():\n    return 1\n")
    asked: list[bool] = []
    monkeypatch.setattr(mempolicy, "no_numpy_huge_pages", lambda: asked.append(True) or True)
    args = ["map", str(root), "--cache-dir", str(cache)]
    assert not has_stored_state(root, cache)
    assert CliRunner().invoke(main, args).exit_code == 0
    assert asked == [] and has_stored_state(root, cache)
    (root / "b.py").write_text("def g():\n    return 2\n")
    assert CliRunner().invoke(main, args).exit_code == 0
    assert asked == [True]
    assert CliRunner().invoke(main, [*args, "--no-cache"]).exit_code == 0
    assert asked == [True]  # (no cache: nothing stored is read)
    assert not has_stored_state(tmp_path / "elsewhere", cache)
