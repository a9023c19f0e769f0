"""Run extraction batches in worker processes that may crash or hang without costing the run.

Each worker is a forked process tied to its parent (see :mod:`.lifeline`). Before every plugin
hook call it writes to a small shared-memory slot which file and which plugin it is working on;
the parent polls the slot, so it knows, when a worker dies or stops making progress within the
time limit, whom to blame without a message per call. The worker is then killed and replaced,
the file and plugin at fault are reported (``backend_crashed`` / ``backend_timeout``), that file
is tried again without the plugin (the next backend that claims it answers), and the other files
of the batch are tried again in a fresh worker. A failure outside a known file splits the batch
into single files first. Every retried file carries a ``cacheable=False`` mark: the cache never
stores the result of a crashed or timed-out extraction, so the next run tries again.

A plugin that fails (crashes, hangs, raises, answers invalidly) on ``max_failures`` files in a
row is disabled for the rest of the run, with one warning.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import wait
from typing import Any

from ..fileentry import FileEntry
from ..model import Diagnostic, FileExtraction
from .lifeline import tie_to_parent
from .limits import Limits
from .pool import WorkerPool, stop_workers

log = logging.getLogger(__name__)

#: What a worker is doing, as written to its slot.
FRAMEWORK, PREPARE, EXTRACT = 0, 1, 2
_PHASE_WORDS = {PREPARE: "preparing a batch", EXTRACT: "extracting this file"}
#: Codes of diagnostics whose run must not be memoised (a later run may go differently).
UNSETTLED = frozenset({"backend_crashed", "backend_timeout", "backend_disabled"})
JOIN_SECONDS = 2.0


@dataclass(frozen=True, slots=True)
class Job:
    """One file to extract, the plugins not to ask for it, and what happened to it so far."""

    entry: FileEntry
    skip: frozenset[str] = frozenset()
    prior: tuple[Diagnostic, ...] = ()


#: One extracted file as it leaves a worker: path, cache row (None: do not cache), the result.
Extracted = tuple[str, Any, Any]
#: (plugin, ok) for each answer a plugin gave or failed to give, in file order.
Outcome = tuple[str, bool]
#: Runs a batch in a worker: (jobs, disabled plugins, tracker) -> (extracted, outcomes).
BatchRunner = Callable[
    [Sequence[Job], frozenset[str], "Tracker"], tuple[list[Extracted], list[Outcome]]
]


class Tracker:
    """The worker's side of the slot: which file (index in the batch) and plugin it is in."""

    __slots__ = ("slot", "index")

    def __init__(self, slot: Any, names: Sequence[str]):
        self.slot = slot
        self.index = {n: i for i, n in enumerate(names)}

    def __call__(self, file_index: int, plugin: str | None, phase: int) -> None:
        slot = self.slot
        slot[1] = file_index
        slot[2] = self.index.get(plugin, -1) if plugin is not None else -1
        slot[3] = phase
        slot[0] += 1


def null_tracker(file_index: int, plugin: str | None, phase: int) -> None:
    """The tracker of an in-process run: nobody is watching."""


class Streaks:
    """Consecutive failures per plugin; disables a plugin at the limit, with one warning."""

    def __init__(self, max_failures: int):
        self.max_failures = max_failures
        self.counts: dict[str, int] = {}
        self.disabled: dict[str, Diagnostic] = {}

    def record(self, plugin: str, ok: bool, path: str = "", why: str = "") -> None:
        if ok:
            self.counts[plugin] = 0
            return
        n = self.counts[plugin] = self.counts.get(plugin, 0) + 1
        if n >= self.max_failures and plugin not in self.disabled:
            last = f" (the last: {path}, {why})" if path else ""
            msg = (
                f"plugin {plugin} failed on {n} files in a row{last}; it is disabled for the rest "
                "of this run and the files it claims go to the next backend that claims them"
            )
            log.warning("%s", msg)
            self.disabled[plugin] = Diagnostic("backend_disabled", msg, None, "warning")

    @property
    def names(self) -> frozenset[str]:
        return frozenset(self.disabled)


def with_prior(job: Job, item: Extracted, disabled_for: Callable[[str], bool]) -> Extracted:
    """A worker's result for ``job`` with the job's earlier diagnostics, uncacheable if unsettled."""
    path, row, result = item
    if job.prior:
        result = replace(result, diagnostics=tuple(dict.fromkeys(job.prior + result.diagnostics)))
    if job.prior or job.skip or disabled_for(path):
        row = None
    return path, row, result


class _Worker:
    __slots__ = ("proc", "conn", "slot", "task", "disabled", "seq", "since")

    def __init__(self, ctx: Any, runner: BatchRunner, names: Sequence[str]):
        self.slot = ctx.RawArray("q", 4)
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc = ctx.Process(
            target=_worker_main,
            args=(child, self.slot, runner, names, os.getpid()),
            daemon=True,
            name="repomapper-extract",
        )
        self.proc.start()
        child.close()
        self.task: list[Job] | None = None
        self.disabled: frozenset[str] = frozenset()
        self.seq = 0
        self.since = 0.0

    def assign(self, task: list[Job], disabled: frozenset[str]) -> None:
        self.task, self.disabled = task, disabled
        self.seq, self.since = self.slot[0], time.monotonic()
        self.conn.send((task, disabled))

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(JOIN_SECONDS)
        self.conn.close()

    def where(self) -> tuple[int, int, int]:
        return self.slot[1], self.slot[2], self.slot[3]

    def death(self) -> str:
        code = self.proc.exitcode
        if code is None:
            return "stopped responding"
        if code < 0:
            try:
                return f"was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"was killed by signal {-code}"
        return f"exited with status {code}"


def _worker_main(
    conn: Any, slot: Any, runner: BatchRunner, names: Sequence[str], parent: int
) -> None:
    tie_to_parent(parent)
    tracker = Tracker(slot, names)
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            break
        if msg is None:
            break
        task, disabled = msg
        try:
            reply: tuple[Any, str | None] = (runner(task, disabled, tracker), None)
        except BaseException as exc:  # a framework failure: reported, the worker carries on
            reply = (None, f"{type(exc).__name__}: {exc}")
        tracker(-1, None, FRAMEWORK)
        try:
            conn.send(reply)
        except Exception as exc:
            conn.send((None, f"cannot send the result: {type(exc).__name__}: {exc}"))
    os._exit(0)


class Supervisor:
    """Extracts batches of jobs in ``jobs`` supervised worker processes (fork only)."""

    def __init__(
        self,
        runner: BatchRunner,
        names: Sequence[str],
        limits: Limits,
        jobs: int,
        disabled_for: Callable[[str, frozenset[str]], bool],
        view: Callable[[FileExtraction], Any],
        pool: WorkerPool | None = None,
        pool_key: tuple[Hashable, Any] = ((), None),
    ):
        #: where idle workers come from and go back to (a long-lived owner's), with the key
        #: and the plugin set that say which runner they were forked with
        self.pool, self.pool_key = pool, pool_key
        self.runner = runner
        self.view = view
        self.names = list(names)
        self.limits = limits
        self.jobs = max(1, jobs)
        self.streaks = Streaks(limits.max_failures)
        self.disabled_for = disabled_for
        self.failures = 0

    @staticmethod
    def available() -> bool:
        return "fork" in multiprocessing.get_all_start_methods()

    def _new_worker(self, ctx: Any) -> _Worker:
        """A new worker; forked on the pool's own thread when there is a pool (a worker's
        kernel tie to its parent is to the thread that forked it, which must outlive it)."""
        if self.pool is None:
            return _Worker(ctx, self.runner, self.names)
        return self.pool.fork(lambda: _Worker(ctx, self.runner, self.names))

    def start_idle(self) -> None:
        """Fork one worker into the pool now, unless it holds one for this runner already."""
        if self.pool is None:
            return
        idle = self.pool.take(*self.pool_key)
        if not idle:
            idle = [self._new_worker(multiprocessing.get_context("fork"))]
        stop_workers(self.pool.give(*self.pool_key, idle))

    def run(self, batches: Sequence[Sequence[FileEntry]]) -> Iterator[list[Extracted]]:
        ctx = multiprocessing.get_context("fork")
        queue: deque[list[Job]] = deque([Job(e) for e in b] for b in batches if b)
        idle: list[_Worker] = self.pool.take(*self.pool_key) if self.pool is not None else []
        busy: list[_Worker] = []
        poll = min(0.25, self.limits.timeout / 4)

        def dispatch() -> None:
            while queue and (idle or len(busy) < self.jobs):
                worker = idle.pop() if idle else self._new_worker(ctx)
                task = queue.popleft()
                try:
                    worker.assign(task, self.streaks.names)
                except OSError:  # died between tasks: replace it, same task
                    worker.kill()
                    queue.appendleft(task)
                    continue
                busy.append(worker)

        try:
            while queue or busy:
                dispatch()
                ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], poll))
                now = time.monotonic()
                outs: list[list[Extracted]] = []
                for worker in list(busy):
                    if worker.conn in ready or worker.proc.sentinel in ready:
                        try:
                            payload, error = worker.conn.recv()
                        except (EOFError, OSError):
                            payload, error = None, None
                            worker.proc.join(JOIN_SECONDS)
                            outs.append(self._failed(worker, queue, timed_out=False))
                        else:
                            outs.append(self._answered(worker, queue, payload, error))
                        busy.remove(worker)
                        if worker.proc.is_alive() and payload is not None:
                            idle.append(worker)
                        else:
                            worker.kill()
                    else:
                        seq = worker.slot[0]
                        if seq != worker.seq:
                            worker.seq, worker.since = seq, now
                        elif now - worker.since > self._limit(worker):
                            busy.remove(worker)
                            worker.kill()
                            outs.append(self._failed(worker, queue, timed_out=True))
                dispatch()  # workers get new work before the caller gets the results
                for out in outs:
                    if out:
                        yield out
        finally:  # idle workers go back to the pool or exit; busy ones (interrupted) are killed
            if self.pool is not None:
                idle = self.pool.give(*self.pool_key, idle)
            for worker in busy:
                worker.kill()
            stop_workers(idle)

    def _limit(self, worker: _Worker) -> float:
        """The time limit of the step the worker is in: one file's hooks get ``timeout``; a
        ``prepare_batch`` over n files gets ``timeout * (1 + n / 10)`` (a backend running one
        external tool per batch, as ctags does, applies its own per-batch time limit first)."""
        if worker.slot[3] == PREPARE:
            return self.limits.timeout * (1 + len(worker.task or ()) / 10)
        return self.limits.timeout

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [self.streaks.disabled[n] for n in sorted(self.streaks.disabled)]

    # -- outcomes ------------------------------------------------------------------------------
    def _answered(
        self, worker: _Worker, queue: deque[list[Job]], payload: Any, error: str | None
    ) -> list[Extracted]:
        task = worker.task or []
        if payload is None:  # the framework failed in the worker: narrow it down to single files
            log.warning("extraction failed in a worker: %s", error)
            if len(task) > 1:
                queue.extend([j] for j in task)
                return []
            diag = Diagnostic("extract_failed", f"extraction failed: {error}", task[0].entry.path)
            return [self._unextracted(task[0], diag)]
        extracted, outcomes = payload
        for plugin, ok in outcomes:
            self.streaks.record(plugin, ok)
        by_path = {j.entry.path: j for j in task}
        disabled = worker.disabled
        return [
            with_prior(by_path[item[0]], item, lambda p: self.disabled_for(p, disabled))
            for item in extracted
        ]

    def _failed(self, worker: _Worker, queue: deque[list[Job]], timed_out: bool) -> list[Extracted]:
        """A worker died or hung on its task: blame, report and retry."""
        self.failures += 1
        task = worker.task or []
        file_index, plugin_index, phase = worker.where()
        plugin = self.names[plugin_index] if 0 <= plugin_index < len(self.names) else None
        if phase == EXTRACT and 0 <= file_index < len(task):
            culprit: Job | None = task[file_index]
        elif len(task) == 1:
            culprit = task[0]
        else:
            culprit = None
        if (culprit is None or plugin is None) and len(task) > 1:  # not attributable: each alone
            if plugin is not None:
                self.streaks.record(plugin, False)
            queue.extend([j] for j in task)
            return []
        code = "backend_timeout" if timed_out else "backend_crashed"
        doing = _PHASE_WORDS.get(phase, "extracting")
        if timed_out:
            what = f"took longer than {self._limit(worker):g}s (the plugin time limit: --plugin-timeout, REPOMAPPER_PLUGIN_TIMEOUT) {doing} and was stopped"
        else:
            what = f"crashed: its worker process {worker.death()} while {doing}"
        job = culprit or task[0]
        if plugin is None:
            diag = Diagnostic(code, f"extraction {what}; nothing extracted", job.entry.path)
            return [self._unextracted(job, diag)]
        self.streaks.record(plugin, False, job.entry.path, code)
        diag = Diagnostic(
            code,
            f"plugin {plugin} {what}; the file went to the next backend that claims it, if any",
            job.entry.path,
        )
        rest = [j for j in task if j is not job]
        if rest:
            queue.append(rest)
        queue.append([Job(job.entry, job.skip | {plugin}, job.prior + (diag,))])
        log.warning("%s: %s", job.entry.path, diag.message)
        return []

    def _unextracted(self, job: Job, diag: Diagnostic) -> Extracted:
        return (
            job.entry.path,
            None,
            self.view(FileExtraction(job.entry.path, diagnostics=(*job.prior, diag))),
        )
