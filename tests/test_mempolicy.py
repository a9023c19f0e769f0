"""The allocator policy the command applies (repomapper.mempolicy)."""

import sys

from repomapper.mempolicy import fix_mmap_threshold


def test_the_mmap_threshold_is_fixed_on_glibc_and_left_alone_elsewhere():
    import platform

    fixed = fix_mmap_threshold()
    assert fixed == (sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc")
    assert fix_mmap_threshold() == fixed  # applying it twice is harmless
