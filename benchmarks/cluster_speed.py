"""Extraction on a cluster against the local worker pool: files per second by worker count.

    python benchmarks/cluster_speed.py ROOT [--workers 1 2] [--engine dask ray] [--repeats 1]

For each engine and worker count: the seconds to start a local cluster of that many workers
(``local:N``), to extract every file of ROOT on it into an empty cache (what ``index export
--cluster`` does before it writes the bundle; the driver's listing and hashing are timed apart)
and to stop it; and, for the same count, the local supervised pool (``--jobs N``) extracting the
same files into an empty cache. Each run's rows are checked against the local run's (the same
content rows, byte for byte). Dask comes with the ``cluster`` extra; Ray only for this
comparison (``pip install ray``), through the same worker function. Prints a Markdown table;
the host's calibration loop first (timings on a shared machine are noisy).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from repomapper.cache import content_rows, open_cache
from repomapper.cluster import ClusterSpec, DaskEngine, extract_on_cluster
from repomapper.cluster.engine import Outcome
from repomapper.model import Diagnostic
from repomapper.settings import ALL_FILES
from repomapper.state import RepositoryState
from repomapper.state.repository import StateOptions


def calibration() -> float:
    start = time.perf_counter()
    for _ in range(10**7):
        pass
    return time.perf_counter() - start


class RayEngine:
    """The driver's engine interface on Ray (for the comparison only)."""

    def __init__(self, workers: int) -> None:
        import ray

        self.ray = ray
        ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        self._workers = workers

    @property
    def workers(self) -> int:
        return self._workers

    def run(self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> Iterator[Outcome]:
        remote = self.ray.remote(num_cpus=1, max_retries=1)(fn)
        pending = {remote.remote(*args): i for i, args in enumerate(tasks)}
        while pending:
            done, _ = self.ray.wait(list(pending), num_returns=1)
            for ref in done:
                tag = pending.pop(ref)
                try:
                    yield Outcome(tag, self.ray.get(ref))
                except Exception as exc:
                    yield Outcome(tag, error=exc)

    def close(self) -> None:
        self.ray.shutdown()


def start(engine: str, workers: int) -> Any:
    if engine == "ray":
        return RayEngine(workers)
    return DaskEngine(ClusterSpec(local_workers=workers))


def local_pool(root: Path, cache: Path, jobs: int) -> tuple[int, float]:
    """Files extracted by the local supervised pool with ``jobs`` workers, and the seconds."""
    with RepositoryState(root, StateOptions(cache_dir=cache, jobs=jobs)) as state:
        diags: list[Diagnostic] = []
        files = state.prepare(ALL_FILES, (), diags)  # listing and hashing, not timed
        begin = time.perf_counter()
        state.summarise(files.extractor, files.all_entries)
        seconds = time.perf_counter() - begin
        return state.last_stats.get("extracted", 0), seconds


def rows_of(root: Path, cache: Path) -> list[Any]:
    with RepositoryState(root, StateOptions(cache_dir=cache)) as state:
        diags: list[Diagnostic] = []
        files = state.prepare(ALL_FILES, (), diags)
        keys = sorted(files.extractor.key(e).content for e in files.all_entries)
    found = open_cache(root, cache)
    try:
        return list(content_rows(found, keys))
    finally:
        found.close()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("root", type=Path)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--engine", nargs="+", default=["dask", "ray"], choices=["dask", "ray"])
    ap.add_argument("--repeats", type=int, default=1)
    a = ap.parse_args()
    root = a.root.resolve()
    work = Path(tempfile.mkdtemp(prefix="cluster-speed-"))
    print(f"host calibration (10**7 empty loop): {calibration():.3f} s", file=sys.stderr)
    rows: list[str] = []
    reference: list[Any] | None = None
    for workers in a.workers:
        local_s = []
        for r in range(a.repeats):
            cache = work / f"local-{workers}-{r}"
            n, seconds = local_pool(root, cache, workers)
            local_s.append(seconds)
            reference = reference or rows_of(root, cache)
        s = statistics.median(local_s)
        rows.append(f"| local pool | {workers} | | {n} | {s:.1f} | {n / s:.0f} | | | | |")
        for engine in a.engine:
            starts, runs, stops, plans, stores = [], [], [], [], []
            stored = chars = 0
            for r in range(a.repeats):
                cache = work / f"{engine}-{workers}-{r}"
                begin = time.perf_counter()
                eng = start(engine, workers)
                starts.append(time.perf_counter() - begin)
                try:
                    run = extract_on_cluster([root], eng, cache)
                finally:
                    begin = time.perf_counter()
                    eng.close()
                    stops.append(time.perf_counter() - begin)
                if run.failed or run.refused or run.left:
                    print(f"{engine} {workers}: {run}", file=sys.stderr)
                runs.append(run.seconds)
                plans.append(run.planning_seconds)
                stores.append(run.storing_seconds)
                stored, chars = run.stored, run.row_chars
                same = rows_of(root, cache) == reference
                print(f"{engine} x{workers}: rows identical to local: {same}", file=sys.stderr)
            s = statistics.median(runs)
            rows.append(
                f"| {engine} | {workers} | {statistics.median(starts):.1f} | {stored} | {s:.1f}"
                f" | {stored / s:.0f} | {statistics.median(plans):.1f}"
                f" | {statistics.median(stores):.2f} | {chars / max(stored, 1) / 1024:.1f}"
                f" | {statistics.median(stops):.1f} |"
            )
    print(
        "| engine | workers | start s | files | extract s | files/s | driver: list+hash s"
        " | driver: check+store s | KiB back/file | stop s |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
