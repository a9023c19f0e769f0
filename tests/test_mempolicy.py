"""The allocator policy the command applies (repomapper.mempolicy)."""

import sys

from repomapper.mempolicy import fix_mmap_threshold


def test_the_mmap_threshold_is_fixed_on_glibc_and_left_alone_elsewhere():
    import platform

    fixed = fix_mmap_threshold()
    assert fixed == (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")
    assert fix_mmap_threshold() == fixed  # applying it twice is harmless


def _switch_seen(env: dict[str, str]) -> str:
    """What a fresh process that applies the command's policy then imports numpy reports:
    the switch, and whether numpy advises huge pages."""
    import os
    import subprocess

    code = (
        "import os; from repomapper.gcpolicy import tune_for_repomapper; tune_for_repomapper();"
        " import numpy; core = getattr(numpy, '_core', None) or numpy.core;"
        " print(os.environ.get('NUMPY_MADVISE_HUGEPAGE'), core.multiarray._get_madvise_hugepage())"
    )
    clean = {k: v for k, v in os.environ.items() if k != "NUMPY_MADVISE_HUGEPAGE"}
    done = subprocess.run(
        [sys.executable, "-c", code], env={**clean, **env}, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.split("\n")[0]


def test_the_command_asks_numpy_for_no_huge_pages_unless_the_user_chose():
    assert _switch_seen({}) == "0 False"
    assert _switch_seen({"NUMPY_MADVISE_HUGEPAGE": "1"}) == "1 True"  # the user's choice stands
