"""Index export past one machine (repomapper.cluster): files extracted on a Dask cluster, the
rows checked and stored by the driver, the bundle byte-identical to a local export's; a batch
that fails or comes back wrong is extracted here, never left out; clear errors for a missing
extra, an unreachable scheduler and a bad --cluster.

The end-to-end tests start a local cluster of two workers (``--cluster local:2``) and need the
``cluster`` extra; the driver's own checks run on an in-process engine and need nothing."""

from __future__ import annotations

import importlib.util
import os
import re
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from repomapper.bundle import export_bundle
from repomapper.cli import main
from repomapper.cluster import ClusterError, ClusterSpec, extract_on_cluster
from repomapper.cluster import engine as engine_module
from repomapper.cluster.batching import batch_files, batches_of
from repomapper.cluster.engine import Outcome
from repomapper.cluster.work import extract_rows, release
from repomapper.discover import FileEntry
from repomapper.repomap import RepoMap
from tests.conftest import write_tree
from tests.test_snapshot import TREE

HAS_DASK = importlib.util.find_spec("distributed") is not None
needs_dask = pytest.mark.skipif(
    not HAS_DASK, reason='the cluster extra is not installed (pip install -e ".[cluster]")'
)
#: another repository, for exports of several roots
OTHER = {
    "lib/a.py": "def alpha():\n    return beta()\n",
    "lib/b.py": "from lib.a import alpha\n\ndef beta():\n    return alpha()\n",
}


def aged(root: Path) -> Path:
    """``root`` with every file's mtime an hour back: a file written within the last two seconds
    is "racy" (its digest is taken again on every call, and some counts a render remembers are
    keyed by settled digests only), so an export of a tree just written depends on when it runs.
    Aged, a local export and a cluster export of it must agree byte for byte."""
    past = time.time() - 3600
    for p in root.rglob("*"):
        if p.is_file():
            os.utime(p, (past, past))
    return root


class InProcess:
    """An engine that runs each task here, in order: ``fail`` names tasks that end with an
    error (as a lost worker's would), ``tamper`` rewrites an answer."""

    workers = 2

    def __init__(
        self, fail: Sequence[int] = (), tamper: Callable[[int, Any], Any] | None = None
    ) -> None:
        self.fail, self.tamper = set(fail), tamper
        self.tasks: list[tuple[Any, ...]] = []

    def run(self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> Iterator[Outcome]:
        self.tasks = list(tasks)
        try:
            for i, args in enumerate(tasks):
                if i in self.fail:
                    yield Outcome(i, error=RuntimeError("the worker was lost"))
                    continue
                answer = fn(*args)
                yield Outcome(i, self.tamper(i, answer) if self.tamper else answer)
        finally:
            release()


@pytest.fixture(scope="module")
def local(tmp_path_factory) -> tuple[Path, bytes]:
    """The fixture tree and the bytes of its bundle exported without a cluster."""
    base = tmp_path_factory.mktemp("local")
    src = aged(write_tree(base / "src", TREE))
    found = export_bundle(src, base / "src.bundle", cache_dir=base / "cache")
    assert found.rows == len(TREE) and found.extracted == len(TREE)
    return src, (base / "src.bundle").read_bytes()


# -- the driver, on an engine in this process ----------------------------------------------------


def test_the_driver_stores_what_the_workers_extract_and_the_bundle_is_identical(local, tmp_path):
    src, expected = local
    engine = InProcess()
    run = extract_on_cluster([src], engine, tmp_path / "cache", max_files=3)
    assert (run.files, run.sent, run.stored, run.left, run.failed) == (
        len(TREE),
        len(TREE),
        len(TREE),
        0,
        [],
    )
    assert run.batches == len(engine.tasks) == -(-len(TREE) // 3)  # batches of 3 files
    found = export_bundle(src, tmp_path / "out.bundle", cache_dir=tmp_path / "cache")
    assert found.extracted == 0  # every row came from the workers
    assert (tmp_path / "out.bundle").read_bytes() == expected
    again = extract_on_cluster([src], InProcess(), tmp_path / "cache")
    assert (again.cached, again.sent, again.batches) == (len(TREE), 0, 0)  # nothing left to do


def test_a_failed_batch_is_reported_and_extracted_here(local, tmp_path):
    src, expected = local
    engine = InProcess(fail=[1])
    run = extract_on_cluster([src], engine, tmp_path / "cache", max_files=4)
    lost = len(engine.tasks[1][1])
    assert len(run.failed) == 1 and "the worker was lost" in run.failed[0]
    assert "extracted here" in run.failed[0]
    assert (run.stored, run.left) == (len(TREE) - lost, lost)
    found = export_bundle(src, tmp_path / "out.bundle", cache_dir=tmp_path / "cache")
    assert found.extracted == lost  # no gap: the lost batch's files were extracted locally
    assert (tmp_path / "out.bundle").read_bytes() == expected


def _swap_digest(i: int, answer: dict[str, Any]) -> dict[str, Any]:
    """A worker that read other content for the first file of each batch."""
    first = answer["rows"][0]
    first[1] = "0" * 32
    return answer


def test_rows_of_other_content_or_malformed_are_refused(local, tmp_path):
    src, expected = local

    def tamper(i: int, answer: dict[str, Any]) -> Any:
        if i == 0:
            return "not an answer"
        if i == 1:
            answer["rows"][0][3][2] = "{not json"  # a definitions text that is not JSON
            answer["rows"].append(["../etc/passwd", "0" * 32, "x", answer["rows"][1][3]])
            return answer
        return _swap_digest(i, answer)

    engine = InProcess(tamper=tamper)
    run = extract_on_cluster([src], engine, tmp_path / "cache", max_files=4)
    batches = len(engine.tasks)
    assert run.refused == {
        "a worker's answer is malformed": len(engine.tasks[0][1]),
        "a row's texts are not JSON of the cache's shape": 1,
        "a row's path is not inside the root": 1,
        "a row is of other content or other code than the driver's": batches - 2,
    }
    left = len(engine.tasks[0][1]) + 1 + (batches - 2)
    assert (run.left, run.stored) == (left, len(TREE) - left)
    found = export_bundle(src, tmp_path / "out.bundle", cache_dir=tmp_path / "cache")
    assert found.extracted == left
    assert (tmp_path / "out.bundle").read_bytes() == expected


def test_a_worker_row_keeps_the_content_it_was_made_from(tmp_path):
    """What a worker returns is keyed by the content it read; a file changed since the driver
    hashed it is refused (the driver's key differs) and extracted here from what is there."""
    src = write_tree(tmp_path / "src", OTHER)
    answer = extract_rows(str(src), ["lib/a.py", "lib/b.py", "lib/missing.py"])
    release()
    assert [r[0] for r in answer["rows"]] == ["lib/a.py", "lib/b.py"]
    assert answer["left"] == [["lib/missing.py", "no such file"]]

    def edit_then_answer(i: int, found: dict[str, Any]) -> dict[str, Any]:
        return found

    class Racing(InProcess):
        def run(self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]):
            (src / "lib" / "a.py").write_text("def alpha():\n    return 2\n")
            yield from super().run(fn, tasks)

    run = extract_on_cluster([src], Racing(), tmp_path / "cache")
    assert run.refused == {"a row is of other content or other code than the driver's": 1}
    assert (run.stored, run.left) == (1, 1)


def test_files_a_worker_cannot_see_are_reported_and_extracted_here(local, tmp_path):
    """A worker that does not have the root at the driver's path (another machine without the
    shared mount) returns no rows: the reason is counted and every file is extracted here."""
    src, expected = local

    class Elsewhere(InProcess):
        def run(self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]):
            moved = [(str(tmp_path / "not-mounted"), paths) for _, paths in tasks]
            yield from super().run(fn, moved)

    run = extract_on_cluster([src], Elsewhere(), tmp_path / "cache")
    assert (run.stored, run.left) == (0, len(TREE))
    assert run.unextracted == {"no such file": len(TREE)}
    found = export_bundle(src, tmp_path / "out.bundle", cache_dir=tmp_path / "cache")
    assert found.extracted == len(TREE)
    assert (tmp_path / "out.bundle").read_bytes() == expected


def test_an_unwritable_cache_is_an_error(tmp_path):
    src = write_tree(tmp_path / "src", OTHER)
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the cache directory would be")
    with pytest.raises(ClusterError, match="cannot be written"):
        extract_on_cluster([src], InProcess(), blocker)


def test_batches_are_bounded_by_files_and_bytes():
    entries = [FileEntry(f"f{i:02}.py", 100 if i != 5 else 10_000, 0) for i in range(20)]
    cut = batches_of(Path("/r"), list(reversed(entries)), 6, max_bytes=5_000)
    assert [b.paths for b in cut][0] == ("f00.py", "f01.py", "f02.py", "f03.py", "f04.py")
    assert cut[1].paths == ("f05.py",)  # larger than a batch's bytes: alone
    assert all(len(b.paths) <= 6 for b in cut)
    assert [p for b in cut for p in b.paths] == sorted(e.path for e in entries)
    assert batch_files(100_000, 2) == 256 and batch_files(40, 2) == 16
    assert batch_files(40, 2, max_files=3) == 3


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("local:2", ClusterSpec(local_workers=2)),
        ("tcp://10.0.0.5:8786", ClusterSpec(address="tcp://10.0.0.5:8786")),
        ("head:8786", ClusterSpec(address="head:8786")),
    ],
)
def test_cluster_addresses(text, expected):
    assert ClusterSpec.parse(text) == expected


@pytest.mark.parametrize("text", ["local:0", "local", "local:two", "", "a b"])
def test_bad_cluster_addresses_are_usage_errors(text, tmp_path):
    src = write_tree(tmp_path / "src", OTHER)
    result = CliRunner().invoke(
        main, ["index", "export", str(src), "-o", str(tmp_path / "b"), "--cluster", text]
    )
    assert result.exit_code == 2, result.output
    assert "--cluster" in result.output
    assert not (tmp_path / "b").exists()


def test_without_the_extra_the_message_names_it(tmp_path, monkeypatch):
    def missing() -> tuple[Any, Any]:
        raise ModuleNotFoundError("No module named 'distributed'", name="distributed")

    monkeypatch.setattr(engine_module, "_imported", missing)
    src = write_tree(tmp_path / "src", OTHER)
    result = CliRunner().invoke(
        main, ["index", "export", str(src), "-o", str(tmp_path / "b"), "--cluster", "local:2"]
    )
    assert result.exit_code == 2, result.output
    assert 'pip install "repomapper[cluster]"' in result.output
    assert not (tmp_path / "b").exists()


def test_several_roots_get_one_bundle_each(local, tmp_path):
    src, expected = local
    other = aged(write_tree(tmp_path / "other", OTHER))
    out = tmp_path / "bundles"
    result = CliRunner().invoke(
        main,
        ["index", "export", str(src), str(other), "-o", str(out), "--cache-dir", str(tmp_path)],
    )
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == ["other.bundle", "src.bundle"]
    assert (out / "src.bundle").read_bytes() == expected
    single = tmp_path / "single.bundle"
    export_bundle(other, single, cache_dir=tmp_path / "elsewhere")
    assert (out / "other.bundle").read_bytes() == single.read_bytes()


def test_roots_with_one_name_or_a_file_for_several_are_refused(tmp_path):
    a = write_tree(tmp_path / "a" / "repo", OTHER)
    b = write_tree(tmp_path / "b" / "repo", OTHER)
    runner = CliRunner()
    same = runner.invoke(main, ["index", "export", str(a), str(b), "-o", str(tmp_path / "out")])
    assert same.exit_code == 2 and "repo.bundle" in same.output
    (tmp_path / "file").write_text("x")
    into_file = runner.invoke(
        main, ["index", "export", str(a), str(tmp_path), "-o", str(tmp_path / "file")]
    )
    assert into_file.exit_code == 2 and "names a directory" in into_file.output
    twice = runner.invoke(main, ["index", "export", str(a), str(a), "-o", str(tmp_path / "o")])
    assert twice.exit_code == 2 and "twice" in twice.output


# -- a real local cluster of two workers ---------------------------------------------------------


@needs_dask
def test_a_local_cluster_of_two_workers_exports_the_local_bundle(local, tmp_path):
    """``index export --cluster local:2``: the command starts two workers, they extract every
    file, the bundle is byte-identical to a local export's, and importing it makes a fresh
    clone's first map warm."""
    src, expected = local
    out = tmp_path / "cluster.bundle"
    result = CliRunner().invoke(
        main,
        [
            "index",
            "export",
            str(src),
            "-o",
            str(out),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--cluster",
            "local:2",
            "--batch-files",
            "4",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "cluster local:2: 2 worker(s)" in result.output
    line = re.search(r"cluster: (\d+) of (\d+) file\(s\) extracted on 2 worker", result.output)
    assert line and line.groups() == (str(len(TREE)), str(len(TREE))), result.output
    assert re.search(r"\d+/\d+ files, \d+/\d+ batches", result.output)  # progress
    assert "; 0 file(s) extracted here" in result.output
    assert out.read_bytes() == expected

    clone = write_tree(tmp_path / "clone", TREE)
    imported = CliRunner().invoke(
        main, ["index", "import", str(out), str(clone), "--cache-dir", str(tmp_path / "fresh")]
    )
    assert imported.exit_code == 0, imported.output
    with RepoMap(clone, cache_dir=tmp_path / "fresh") as rm:
        rm.map()
        assert rm.last_stats.get("extracted", 0) == 0  # warm: nothing extracted


@needs_dask
def test_a_scheduler_without_workers_is_an_error():
    from distributed import LocalCluster

    from repomapper.cluster import DaskEngine

    no_http = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
    with LocalCluster(
        n_workers=0, host="127.0.0.1", dashboard_address=None, scheduler_kwargs=no_http
    ) as empty:
        address = empty.scheduler_address
        with pytest.raises(ClusterError, match="has no worker"):
            DaskEngine(ClusterSpec(address=address), connect_seconds=0.5)


@needs_dask
def test_an_unreachable_scheduler_is_an_error(tmp_path, monkeypatch):
    import socket

    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(engine_module, "CONNECT_SECONDS", 0.5)
    src = write_tree(tmp_path / "src", OTHER)
    result = CliRunner().invoke(
        main,
        [
            "index",
            "export",
            str(src),
            "-o",
            str(tmp_path / "b"),
            "--cluster",
            f"tcp://127.0.0.1:{port}",
        ],
    )
    assert result.exit_code == 1, result.output
    assert f"cannot reach the cluster at tcp://127.0.0.1:{port}" in result.output
    assert not (tmp_path / "b").exists()


@needs_dask
def test_when_every_worker_leaves_the_batches_not_collected_end_as_failed():
    import threading
    import time

    from distributed import LocalCluster

    from repomapper.cluster import DaskEngine
    from repomapper.cluster.engine import WorkersLost

    no_http = {"dashboard": False, "dashboard_address": "127.0.0.1:0"}
    with LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs=no_http,
    ) as cluster:
        engine = DaskEngine(ClusterSpec(address=cluster.scheduler_address), lost_seconds=1.0)
        try:
            leave = threading.Timer(2.0, cluster.scale, args=(0,))
            leave.start()
            started = time.monotonic()
            outcomes = list(engine.run(time.sleep, [(120,), (120,)]))
            leave.join()
        finally:
            engine.close()
    assert sorted(o.tag for o in outcomes) == [0, 1]
    assert all(isinstance(o.error, WorkersLost) for o in outcomes)
    assert "no worker" in str(outcomes[0].error)
    assert time.monotonic() - started < 60
