"""The ``linear_time`` property: a bounded, generous comparison of costs (CPU time, of the
process and its ended children), not a timer race."""

from __future__ import annotations

import logging
import math
import resource
import tempfile
import time
from pathlib import Path

from repomapper.model import SourceFile

from .subject import Subject, describe_exception

LINEAR_FACTOR = 8
LINEAR_BOUND = 30.0
LINEAR_MIN_LINES = 200


class _Fresh:
    """A new :class:`SourceFile` for every timed call: another path and another count of trailing
    blank lines, so that no memo (the file's own, or a plugin's cache keyed by path or bytes)
    can answer and every call is timed doing the work."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, root: Path, path: str, data: bytes) -> SourceFile:
        self.calls += 1
        return SourceFile(root, f"t{self.calls}/{path}", data + b"\n" * self.calls)


def _cpu_seconds() -> float:
    """CPU time of this process and of its ended children (a backend's ``ctags`` run): work
    done, which a busy machine does not inflate the way it inflates wall time."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _cost(subject: Subject, source: SourceFile) -> float:
    start = _cpu_seconds()
    subject.prepare([source])
    subject.tags(source)
    subject.imports(source)
    return _cpu_seconds() - start


def extraction_speed(
    subject: Subject, sources: list[SourceFile], min_lines: int = LINEAR_MIN_LINES
) -> float | None:
    """Lines per second the subject extracts (tags and imports) from ``sources``, each repeated
    to at least ``min_lines`` lines; best of three. ``None`` when it crashes or there is nothing."""
    total_lines = 0
    best = 0.0
    logging.disable(logging.WARNING)  # repeated fixtures may not parse cleanly: not news here
    try:
        for source in sources:
            lines = source.data.count(b"\n") or 1
            copies = max(1, math.ceil(min_lines / lines))
            data = source.data * copies
            total_lines += lines * copies
            fresh = _Fresh()  # a backend's memo of an earlier call must not answer
            best += min(_cost(subject, fresh(source.root, source.path, data)) for _ in range(3))
    except Exception:
        return None
    finally:
        logging.disable(logging.NOTSET)
    if not total_lines or best <= 0:
        return None
    return total_lines / best


def check_linear_time(
    subject: Subject,
    path: str,
    base: bytes,
    *,
    factor: int = LINEAR_FACTOR,
    bound: float = LINEAR_BOUND,
    repetitions: int = 3,
    attempts: int = 3,
) -> str | None:
    """``None`` if ``factor`` times the input costs less than ``bound`` times the time.

    The small input is ``base`` repeated to at least :data:`LINEAR_MIN_LINES` lines so that fixed
    costs do not dominate; small and large runs alternate and the best of ``repetitions`` of each
    is compared, up to ``attempts`` times, so a busy machine makes the check slower, not flaky.
    Each timed call gets a fresh file (see :class:`_Fresh`): a cache hit is never what is timed.
    """
    if not base.endswith(b"\n"):
        base += b"\n"
    k = max(1, math.ceil(LINEAR_MIN_LINES / max(1, base.count(b"\n"))))
    small, large = base * k, base * (k * factor)
    fresh = _Fresh()
    with tempfile.TemporaryDirectory(prefix="repomapper-conformance-") as tmp:
        root = Path(tmp)
        ratio = 0.0
        try:
            for _ in range(attempts):
                best_small = best_large = math.inf
                for _ in range(repetitions):
                    best_small = min(best_small, _cost(subject, fresh(root, path, small)))
                    best_large = min(best_large, _cost(subject, fresh(root, path, large)))
                ratio = best_large / max(best_small, 1e-6)
                if ratio < bound:
                    return None
        except Exception as exc:
            return f"not measured: crashed on repeated fixture text: {describe_exception(exc)}"
    lines = large.count(b"\n")
    return (
        f"{factor}x the input ({lines} lines) took {ratio:.1f}x as long "
        f"(bound {bound:g}x, best of {repetitions}, {attempts} attempts): extraction looks "
        "super-linear"
    )
