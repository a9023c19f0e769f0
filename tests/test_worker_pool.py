"""A long-lived RepoMap keeps its idle extraction worker for the next call (after an edit the
run hands the edited file to it instead of forking a new one), and never keeps one that failed,
one forked for another root, request or environment, or one past close()."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from repomapper.isolation.supervisor import Supervisor
from repomapper.repomap import RepoMap
from tests.conftest import write_tree
from tests.test_isolation import plugins

pytestmark = pytest.mark.skipif(not Supervisor.available(), reason="needs fork")


@pytest.fixture
def repo(tmp_path):
    return write_tree(
        tmp_path / "repo",
        {
            "app/models.py": "class User:\n    def name(self):\n        return 'u'\n",
            "app/service.py": "from app.models import User\n\n\ndef load():\n    return User().name()\n",
            "data/thing.foo": "widget spins\n",
        },
    )


def kept(rm: RepoMap) -> list[int]:
    return [w.proc.pid for w in rm.state._workers._idle]


def edit(path, text: str) -> None:
    path.write_text(path.read_text() + text)
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 3_000_000_000))


def test_the_worker_of_one_call_extracts_the_next_calls_edit(repo, tmp_path):
    rm = RepoMap(repo, cache_dir=tmp_path / "cache", jobs=1)
    rm.map()
    (pid,) = kept(rm)
    edit(repo / "app/models.py", "\n\ndef added_after_edit():\n    return 1\n")
    assert "added_after_edit" in rm.map(mentioned_idents=["added_after_edit"]).map
    assert rm.last_stats["extracted"] == 1
    assert kept(rm) == [pid]
    rm.close()
    assert kept(rm) == []
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_a_closed_repomap_keeps_no_worker(repo, tmp_path):
    rm = RepoMap(repo, cache_dir=tmp_path / "cache", jobs=1)
    rm.close()
    rm.map()
    assert kept(rm) == []


def test_a_crashed_worker_is_not_kept(repo, tmp_path, monkeypatch):
    monkeypatch.setenv("FOO_MODE", "exit")
    rm = RepoMap(repo, cache_dir=tmp_path / "cache", plugins=plugins(), jobs=1)
    result = rm.map()
    assert any(d.code == "backend_crashed" for d in result.diagnostics)
    for pid in kept(rm):  # whatever is kept answered its last task
        os.kill(pid, 0)
    rm.close()


def test_workers_follow_the_environment(repo, tmp_path, monkeypatch):
    rm = RepoMap(repo, cache_dir=tmp_path / "cache", plugins=plugins(), jobs=1)
    monkeypatch.setenv("FOO_MODE", "ok")
    rm.map()
    (first,) = kept(rm)
    monkeypatch.setenv("FOO_MODE", "exit")
    edit(repo / "data/thing.foo", "more\n")
    assert any(d.code == "backend_crashed" for d in rm.map().diagnostics)  # a new worker saw it
    assert first not in kept(rm)
    rm.close()


def test_the_command_tunes_the_garbage_collector():
    code = (
        "import gc; from repomapper.gcpolicy import *; "
        "before = gc.get_threshold(); tune_for_repomapper(); "
        "assert gc.get_threshold()[0] == ONE_SHOT_YOUNG, gc.get_threshold(); "
        "assert gc.get_threshold()[1:] == before[1:]; assert gc.get_freeze_count() > 0; "
        "tune_for_long_lived(); assert gc.get_threshold()[0] == LONG_LIVED_YOUNG; "
        "gc.set_threshold(700); tune_for_long_lived(); assert gc.get_threshold()[0] == 700; "
        "tune_for_repomapper(long_lived=True); assert gc.get_threshold()[0] == LONG_LIVED_YOUNG"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
    import gc

    assert gc.get_threshold()[0] < 50_000  # the library itself leaves the collector alone


_WORKER_THRESHOLD = """
import gc
from repomapper.discover import FileEntry
from repomapper.gcpolicy import LONG_LIVED_YOUNG, ONE_SHOT_YOUNG, tune_for_repomapper
from repomapper.isolation.limits import Limits
from repomapper.isolation.supervisor import Supervisor
from repomapper.model import FileExtraction

def runner(jobs, disabled, tracker):
    young = str(gc.get_threshold()[0])
    return [(j.entry.path, None, FileExtraction(young)) for j in jobs], []

tune_for_repomapper()
assert gc.get_threshold()[0] == ONE_SHOT_YOUNG
sup = Supervisor(runner, ["x"], Limits(timeout=60), 1, lambda p, d: False, lambda ex: ex)
[(path, _, extraction)] = next(sup.run([[FileEntry("a", 0, 0)]]))
assert int(extraction.path) == LONG_LIVED_YOUNG, extraction.path
"""


def test_a_worker_forked_by_the_command_collects_as_a_long_lived_process():
    """The command collects young objects seldom (it answers once); a worker it forks extracts
    batch after batch and collects them as often as the server does."""
    subprocess.run([sys.executable, "-c", _WORKER_THRESHOLD], check=True)


def test_a_worker_kept_by_a_call_on_a_short_lived_thread_outlives_the_thread(repo, tmp_path):
    """The kernel tie (PR_SET_PDEATHSIG) is to the forking thread: a server answers each call on
    a pool thread that may end, so the pool forks its workers on a thread of its own."""
    import threading
    import time

    rm = RepoMap(repo, cache_dir=tmp_path / "cache", jobs=1)
    call = threading.Thread(target=rm.map)
    call.start()
    call.join()
    (pid,) = kept(rm)
    time.sleep(0.3)
    os.kill(pid, 0)  # still alive after the thread that asked for it ended
    edit(repo / "app/models.py", "\n\ndef later_edit():\n    return 2\n")
    rm.map()
    assert kept(rm) == [pid]
    rm.close()
