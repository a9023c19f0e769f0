"""Run one plugin/language check in a child process, so a backend or grammar that crashes the
process (a segfault in a C extension, ``os._exit``) fails its own pair, not the whole suite.
The child's temporary files go in a folder the parent makes and removes, so a child killed
before its own clean-up leaves nothing behind.

Where ``fork`` is unavailable, or ``REPOMAPPER_ISOLATE=0`` is set, the check runs in-process.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import pickle
import shutil
import signal
import tempfile
from collections.abc import Callable
from typing import Any, TypeVar

from repomapper.isolation.lifeline import tie_to_parent
from repomapper.isolation.limits import ENV_ISOLATE

log = logging.getLogger(__name__)
T = TypeVar("T")


def _isolating() -> bool:
    off = os.environ.get(ENV_ISOLATE, "").strip().lower() in {"0", "false", "no", "off"}
    return not off and "fork" in multiprocessing.get_all_start_methods()


def _child(conn: Any, parent: int, fn: Callable[[], Any], scratch: str) -> None:
    tie_to_parent(parent)
    tempfile.tempdir = scratch  # (the parent removes it, whatever becomes of this process)
    try:
        payload = pickle.dumps(("ok", fn()))
    except BaseException as exc:  # noqa: BLE001 - everything the check raises is reported
        payload = pickle.dumps(("raised", f"{type(exc).__name__}: {exc}"))
    conn.send_bytes(payload)
    conn.close()
    os._exit(0)  # no atexit handlers or finalizers of the parent's state run in the child


def contained(fn: Callable[[], T], on_crash: Callable[[str], T]) -> T:
    """``fn()`` run in a forked child; ``on_crash(why)`` when the child dies without answering.

    Exceptions raised by ``fn`` are re-raised in the parent as ``RuntimeError`` with their text.
    """
    if not _isolating():
        return fn()
    ctx = multiprocessing.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    scratch = tempfile.mkdtemp(prefix="repomapper-conformance-")
    try:
        proc = ctx.Process(target=_child, args=(send, os.getpid(), fn, scratch), daemon=True)
        proc.start()
        send.close()
        try:
            data = recv.recv_bytes()
        except EOFError:
            data = None
        proc.join()
        recv.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if data is None:
        code = proc.exitcode
        if code is not None and code < 0:
            try:
                why = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                why = f"killed by signal {-code}"
        else:
            why = f"exited with status {code}"
        log.warning("conformance check %s", why)
        return on_crash(why)
    status, value = pickle.loads(data)  # our own child's answer, not repository content
    if status == "raised":
        raise RuntimeError(value)
    answer: T = value  # what fn returned, pickled by the child
    return answer
