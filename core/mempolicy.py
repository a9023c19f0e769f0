"""How a repomapper process asks the C allocator to give memory back.

glibc serves a request above its mmap threshold (128 KiB at first) with a mapping of its own,
returned to the system when freed; but it raises the threshold to the size of every such block
freed (up to 32 MiB), so after the first large temporary array the next ones come from the
heap, whose freed pages stay in the process. Building a large tree's state makes and drops
arrays of many sizes one after another, and their freed heap pages added up (on 20,059 files
the resident set after ranking was 373 MB against 324 MB with the threshold fixed; see
docs/benchmarks.md). Setting the threshold fixes it where it starts.

Applied by the ``repomapper`` command and the MCP server with the garbage-collector policy
(:mod:`repomapper.gcpolicy`), never by the library on import: an embedding application owns
its process's allocator. Elsewhere than glibc it does nothing.

Huge pages: numpy advises the kernel to back every array of 4 MiB or more with transparent huge
pages. A map that updates a stored state makes its large arrays afresh and frees them within
the call (a layout spliced from the stored one, the products over it), so each huge page is
faulted in, zeroed whole and soon given back; on a virtual machine that cost more than the
small pages it replaces, by an amount that changed from one run to the next, while a map built
from scratch ran as fast or faster with them (docs/benchmarks.md). So the ``map`` command asks
numpy not to advise them when the repository has a stored state to update, unless the user set
numpy's switch (:func:`no_numpy_huge_pages`).
"""

from __future__ import annotations

import ctypes
import os
import sys

#: glibc's mallopt parameter for the mmap threshold, and the value it starts with
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold at its initial value; whether it was set."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (musl has mallopt too: it returns 0)
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


#: numpy's switch for advising huge pages, read once when numpy is imported
HUGEPAGE_SWITCH = "NUMPY_MADVISE_HUGEPAGE"


def no_numpy_huge_pages() -> bool:
    """Have numpy not advise huge pages for its arrays, unless the switch is set already or
    numpy is imported (it read the switch then); whether it was set. The environment carries
    it to the processes this one starts."""
    if HUGEPAGE_SWITCH in os.environ or "numpy" in sys.modules:
        return False
    os.environ[HUGEPAGE_SWITCH] = "0"
    return True
