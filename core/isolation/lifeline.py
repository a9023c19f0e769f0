"""A worker process exits when the process that started it dies (``kill -9``, SIGTERM, a caller's
timeout): no orphan keeps extracting after its parent is gone.

On Linux the kernel does it (``prctl(PR_SET_PDEATHSIG, SIGKILL)``, which also stops a worker stuck
in C code); everywhere a daemon thread also polls the parent's pid, for platforms without
``prctl``. ``PR_SET_PDEATHSIG`` is tied to the thread that forked the worker: a run's workers live
only while the thread that started them waits for them, and workers kept between runs are forked
on a thread of their pool's own (see :mod:`.pool`).
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import signal
import sys
import threading
import time

PR_SET_PDEATHSIG = 1
POLL_SECONDS = 0.5


def _kernel_tie() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        status: int = libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        return status == 0
    except (OSError, AttributeError):
        return False


def _watch(parent_pid: int) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent_pid:
            os._exit(0)


def tie_to_parent(parent_pid: int) -> None:
    """Call first thing in a worker: exit now if ``parent_pid`` is already gone, and whenever it
    goes later. The worker ignores SIGINT: the parent decides when workers stop."""
    _kernel_tie()
    faulthandler.disable()  # the parent reports a crash, naming the plugin and the file
    if os.getppid() != parent_pid:  # died before the tie took effect
        os._exit(0)
    with contextlib.suppress(ValueError, OSError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    threading.Thread(
        target=_watch, args=(parent_pid,), name="repomapper-lifeline", daemon=True
    ).start()
