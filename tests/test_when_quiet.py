"""Background work that waits for a pause between calls (repomapper.serve.quiet): the service
stores the maps it answered there, so that storing them is part of no answer's time."""

from __future__ import annotations

import threading
import time

from repomapper.serve.quiet import WhenQuiet


def _waited(cond, seconds: float = 10.0) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.02)
    return cond()


def test_the_work_waits_while_calls_keep_coming_and_runs_once_they_pause():
    lock = threading.Lock()
    ran: list[float] = []
    quiet = WhenQuiet(lock, lambda: ran.append(time.monotonic()), most=60.0)
    try:
        with lock:
            quiet.ask(2.0)
            quiet.call_ended()
        for _ in range(8):  # a call every 0.1 s: never a pause of 2 s
            time.sleep(0.1)
            with lock:
                quiet.call_ended()
                quiet.ask(2.0)  # asked again before the run: still one run
        assert ran == []
        last_end = time.monotonic()
        assert _waited(lambda: len(ran) == 1)
        assert ran[0] - last_end >= 1.9  # only after the pause
        with lock:
            quiet.ask(0.0)  # a new ask after the run: another run
        assert _waited(lambda: len(ran) == 2)
    finally:
        quiet.close()
    assert not any(t.name == "repomapper-when-quiet" for t in threading.enumerate())


def test_calls_that_never_pause_still_get_the_work_done_after_the_bound():
    lock = threading.Lock()
    ran: list[int] = []
    quiet = WhenQuiet(lock, lambda: ran.append(1), most=0.5)
    try:
        with lock:
            quiet.ask(3600.0)
        assert _waited(lambda: ran == [1])
    finally:
        quiet.close()


def test_closing_stops_the_wait_without_the_work_and_leaves_no_thread():
    lock = threading.Lock()
    ran: list[int] = []
    quiet = WhenQuiet(lock, lambda: ran.append(1), most=3600.0)
    with lock:
        quiet.ask(3600.0)
    started = time.monotonic()
    quiet.close()
    assert time.monotonic() - started < 5 and ran == []
    assert not any(t.name == "repomapper-when-quiet" for t in threading.enumerate())
    with lock:
        quiet.ask(0.0)  # closed: nothing starts
    assert not any(t.name == "repomapper-when-quiet" for t in threading.enumerate())


def test_a_failing_work_is_contained():
    lock = threading.Lock()
    ran: list[int] = []

    def work() -> None:
        ran.append(1)
        raise OSError("read-only cache")

    quiet = WhenQuiet(lock, work, most=60.0)
    try:
        with lock:
            quiet.ask(0.0)
        assert _waited(lambda: ran == [1])
        assert _waited(lambda: not lock.locked())
        with lock:
            quiet.ask(0.0)
        assert _waited(lambda: ran == [1, 1])
    finally:
        quiet.close()
