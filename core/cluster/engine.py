"""The cluster engine: Dask distributed behind a small adapter (why Dask and not Ray:
``docs/cluster.md``).

``--cluster ADDRESS`` connects to a running Dask scheduler; ``--cluster local:N`` starts a
local cluster of N single-threaded worker processes (bound to 127.0.0.1, no dashboard) and
stops it when the command ends. The workers are not daemonic processes: each extracts in the
supervised, forked workers a map uses (a daemonic process may not have children). Dask is an
optional extra (``pip install "repomapper[cluster]"``); without it :class:`ExtraMissing` says so.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

#: the optional extra that installs the engine
EXTRA = "cluster"
#: seconds to wait for a scheduler to answer
CONNECT_SECONDS = 10.0
#: times the engine runs a batch again on another worker before it counts as failed
RETRIES = 1
#: seconds the engine waits for a worker to come back when the cluster has none left; then the
#: batches not yet collected end as failed (the driver extracts them here)
LOST_SECONDS = 30.0
#: how often, in seconds, the engine looks for workers while no batch finishes
POLL_SECONDS = 1.0

_LOCAL = re.compile(r"local:(\d+)")


def _imported() -> tuple[Any, Any]:
    """``dask`` and ``distributed``, typed loosely (neither ships type hints, and neither is
    installed without the extra)."""
    import importlib

    return importlib.import_module("dask"), importlib.import_module("distributed")


class ClusterError(Exception):
    """The cluster cannot be used (the message says why)."""

    exit_code = 1


class WorkersLost(ClusterError):
    """Every worker left the cluster and none came back in time."""


class ExtraMissing(ClusterError):
    """The engine is not installed."""

    exit_code = 2


@dataclass(frozen=True)
class ClusterSpec:
    """Where to run: a scheduler's address, or a local cluster of ``local_workers``."""

    address: str | None = None
    local_workers: int = 0

    @classmethod
    def parse(cls, text: str) -> ClusterSpec:
        """``local:N`` (N at least 1) or a scheduler's address (``tcp://host:8786``,
        ``host:8786``); ValueError for anything else."""
        text = text.strip()
        m = _LOCAL.fullmatch(text)
        if m:
            n = int(m.group(1))
            if n < 1:
                raise ValueError("local:N needs at least one worker")
            return cls(local_workers=n)
        if text.startswith("local"):
            raise ValueError(f"{text!r}: a local cluster is local:N (N workers, at least 1)")
        if not text or any(c.isspace() for c in text):
            raise ValueError(f"{text!r} is not a scheduler address (tcp://HOST:PORT or local:N)")
        return cls(address=text)

    def __str__(self) -> str:
        return f"local:{self.local_workers}" if self.address is None else self.address


@dataclass(frozen=True)
class Outcome:
    """One task's end: its tag, and its result or the exception that ended it."""

    tag: int
    result: Any = None
    error: BaseException | None = None


class DaskEngine:
    """Tasks submitted to a Dask cluster and collected as they finish."""

    def __init__(
        self,
        spec: ClusterSpec,
        connect_seconds: float | None = None,
        lost_seconds: float | None = None,
    ):
        try:
            dask, distributed = _imported()
        except ImportError as exc:
            raise ExtraMissing(
                f"--cluster needs Dask distributed, which is not installed ({exc.name or exc}):"
                f' pip install "repomapper[{EXTRA}]"'
            ) from exc
        self.spec = spec
        self.lost_seconds = LOST_SECONDS if lost_seconds is None else lost_seconds
        connect_seconds = CONNECT_SECONDS if connect_seconds is None else connect_seconds
        self._distributed = distributed
        self._cluster: Any = None
        self.client: Any = None
        try:
            if spec.address is None:
                with dask.config.set({"distributed.worker.daemon": False}):
                    self._cluster = distributed.LocalCluster(
                        n_workers=spec.local_workers,
                        threads_per_worker=1,
                        processes=True,
                        host="127.0.0.1",
                        dashboard_address=None,
                        # its HTTP server (health, metrics) on a free port, not 8787
                        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
                        silence_logs=logging.ERROR,
                    )
                self.client = distributed.Client(self._cluster, timeout=connect_seconds)
            else:
                self.client = distributed.Client(spec.address, timeout=connect_seconds)
            # tasks sent to a scheduler without workers would wait for ever
            self.client.wait_for_workers(1, timeout=connect_seconds)
        except (OSError, TimeoutError, ValueError, RuntimeError) as exc:
            connected = self.client is not None
            self.close()
            if connected:
                raise ClusterError(
                    f"the cluster at {spec} has no worker (none joined within"
                    f" {connect_seconds:g} s)"
                ) from exc
            raise ClusterError(f"cannot reach the cluster at {spec}: {exc}") from exc

    @property
    def workers(self) -> int:
        """Worker threads the cluster has now."""
        info = self.client.scheduler_info()
        return sum(int(w.get("nthreads", 1)) for w in info.get("workers", {}).values())

    def run(self, fn: Callable[..., Any], tasks: Sequence[tuple[Any, ...]]) -> Iterator[Outcome]:
        """``fn(*args)`` for each of ``tasks`` on the cluster, yielded as each ends (in any
        order), tagged with its index in ``tasks``; a task that failed (after :data:`RETRIES`)
        carries its exception. When the cluster has had no worker for ``lost_seconds``, every
        task not yet collected ends with a :class:`WorkersLost` (a scheduler would keep them
        queued for ever). Tasks not yet collected are cancelled if the caller stops."""
        futures = {
            self.client.submit(fn, *args, retries=RETRIES, pure=False): i
            for i, args in enumerate(tasks)
        }
        pending = set(futures)
        alone_since: float | None = None
        try:
            while pending:
                done = self._finished(pending)
                for future in sorted(done, key=futures.__getitem__):
                    pending.discard(future)
                    yield self._outcome(futures[future], future)
                if done or self.workers:
                    alone_since = None
                    continue
                alone_since = alone_since or time.monotonic()
                if time.monotonic() - alone_since >= self.lost_seconds:
                    lost = WorkersLost(
                        f"the cluster at {self.spec} has had no worker for {self.lost_seconds:g} s"
                    )
                    for future in sorted(pending, key=futures.__getitem__):
                        yield Outcome(futures[future], error=lost)
                    return
        finally:
            self.client.cancel(list(futures))

    def _finished(self, pending: set[Any]) -> set[Any]:
        """The futures of ``pending`` that end within :data:`POLL_SECONDS` (maybe none)."""
        try:
            result = self._distributed.wait(
                list(pending), timeout=POLL_SECONDS, return_when="FIRST_COMPLETED"
            )
        except TimeoutError:
            return set()
        return set(result.done)

    @staticmethod
    def _outcome(tag: int, future: Any) -> Outcome:
        try:
            return Outcome(tag, future.result())
        except Exception as exc:  # the task's own error, a lost worker, a cancellation
            return Outcome(tag, error=exc)
        finally:
            future.release()

    def close(self) -> None:
        """Disconnect; a local cluster is stopped (its workers with it)."""
        if self.client is not None:
            self.client.close()
            self.client = None
        if self._cluster is not None:
            self._cluster.close()
            self._cluster = None

    def __enter__(self) -> DaskEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
