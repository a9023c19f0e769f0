"""Properties every backend must have, checked with hypothesis on generated input.

For each plugin and language the suite runs the plugin on fixed inputs (empty, whitespace, the
fixtures), then on generated ones: arbitrary text, code-like text, arbitrary bytes and mutations
of the fixture files (truncation, byte flips, insertion of brackets, quotes, unicode and control
characters, deleted and duplicated lines). On every input it checks:

``no_crash``          ``prepare_batch``, ``extract_tags`` and ``extract_imports`` never raise
``well_formed``       results are ``None`` or sequences of ``Tag``/``Import`` for ``source.path``
``lines_in_file``     1 <= start_line <= end_line <= number of lines (a reference may have line 0)
``names_on_lines``    every definition's name occurs on its start line
``deterministic``     extracting the same input twice gives the same output, in the same order
``no_duplicates``     no tag and no import is reported twice
``batch_independent`` results do not depend on how files are batched for ``prepare_batch``
``linear_time``       8x the input costs less than 30x the time (best of several, retried)

Runs are derandomized (the same examples every time) and bounded by ``examples``. When a
property fails, hypothesis shrinks the input and the message names the smallest one found; the
run then continues with the remaining properties.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, Phase, Verbosity, given, settings
from hypothesis import strategies as st

from repomapper.model import SourceFile

from .inputs import fixed_inputs, input_strategies
from .invariants import Violation, check_input, line_count
from .subject import Subject, describe_exception
from .timing import LINEAR_BOUND, LINEAR_FACTOR, check_linear_time

__all__ = [
    "CONFORMANCE_PROFILE",
    "DEFAULT_EXAMPLES",
    "LINEAR_BOUND",
    "LINEAR_FACTOR",
    "PROPERTIES",
    "PropertyResult",
    "check_batch_independent",
    "check_linear_time",
    "line_count",
    "run_properties",
]

PROPERTIES: tuple[str, ...] = (
    "no_crash",
    "well_formed",
    "lines_in_file",
    "names_on_lines",
    "deterministic",
    "no_duplicates",
    "batch_independent",
    "linear_time",
)
#: Properties checked on every single input (the others need several runs of the plugin).
PER_INPUT = PROPERTIES[:6]

#: Name of the hypothesis settings profile the suite uses; load it in your own tests with
#: ``settings.load_profile(CONFORMANCE_PROFILE)`` to get the same behaviour.
CONFORMANCE_PROFILE = "repomapper-conformance"
DEFAULT_EXAMPLES = 50

settings.register_profile(
    CONFORMANCE_PROFILE,
    max_examples=DEFAULT_EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    verbosity=Verbosity.quiet,
    report_multiple_bugs=False,
    print_blob=False,
    phases=(Phase.explicit, Phase.generate, Phase.shrink),
)


@dataclass(frozen=True, slots=True)
class PropertyResult:
    name: str
    passed: bool
    message: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "message": self.message}


def _violation_in(exc: BaseException) -> Violation | None:
    if isinstance(exc, Violation):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _violation_in(inner)
            if found is not None:
                return found
    return None


def _hypothesis_round(
    subject: Subject,
    path: str,
    root: Path,
    strategy: st.SearchStrategy[bytes],
    active: frozenset[str],
    examples: int,
) -> None:
    @settings(settings.get_profile(CONFORMANCE_PROFILE), max_examples=examples)
    @given(strategy)
    def prop(data: bytes) -> None:
        check_input(subject, SourceFile(root, path, data), active)

    prop()


def run_per_input_properties(
    subject: Subject, path: str, seeds: Sequence[bytes], examples: int
) -> dict[str, str]:
    """Failure message per failed per-input property (an empty dict when all hold)."""
    failures: dict[str, str] = {}
    active = set(PER_INPUT)
    with tempfile.TemporaryDirectory(prefix="repomapper-conformance-") as tmp:
        root = Path(tmp)
        for data in fixed_inputs(seeds):
            while active:
                try:
                    check_input(subject, SourceFile(root, path, data), frozenset(active))
                    break
                except Violation as v:
                    failures[v.prop] = v.message
                    active.discard(v.prop)
        if examples <= 0:
            return failures
        for label, strategy in input_strategies(seeds):
            while active:
                try:
                    _hypothesis_round(subject, path, root, strategy, frozenset(active), examples)
                    break
                except Exception as exc:
                    found = _violation_in(exc)
                    if found is None:
                        raise
                    failures[found.prop] = f"{found.message} ({label} inputs, shrunk by hypothesis)"
                    active.discard(found.prop)
    return failures


def check_batch_independent(subject: Subject, sources: Sequence[SourceFile]) -> str | None:
    """``None`` if extracting each file alone gives what extracting them as one batch gives."""
    if not sources:
        return None
    first = sources[0]
    batch = [*sources, SourceFile(first.root, f"copy/{first.path}", first.data)]
    try:
        alone = []
        for s in batch:
            s = SourceFile(s.root, s.path, s.data)  # fresh objects: empty memos
            subject.prepare([s])
            alone.append((subject.tags(s), subject.imports(s)))
        batch = [SourceFile(s.root, s.path, s.data) for s in batch]
        subject.prepare(batch)
        together = [(subject.tags(s), subject.imports(s)) for s in batch]
    except Exception as exc:
        return f"crashed while batching: {describe_exception(exc)}"
    for s, a, b in zip(batch, alone, together, strict=True):
        if a != b:
            return (
                f"{s.path}: output differs when prepared in a batch of {len(batch)} files "
                f"and when prepared alone"
            )
    return None


@contextmanager
def quiet_logging() -> Iterator[None]:
    """Silence warnings while plugins chew on garbage: logging them is their job, not noise."""
    previous = logging.root.manager.disable
    logging.disable(logging.WARNING)
    try:
        yield
    finally:
        logging.disable(previous)


def run_properties(
    subject: Subject,
    path: str,
    seeds: Sequence[SourceFile],
    examples: int = DEFAULT_EXAMPLES,
) -> list[PropertyResult]:
    """Every property for one plugin on one language; ``path`` names the generated files."""
    datas = [s.data for s in seeds]
    with quiet_logging():
        failures = run_per_input_properties(subject, path, datas, examples)
        failures_batch = check_batch_independent(subject, seeds)
        if failures_batch:
            failures["batch_independent"] = failures_batch
        base = max(datas, key=len) if datas else b""
        slow = check_linear_time(subject, path, base) if base.strip() else None
        if slow:
            failures["linear_time"] = slow
    return [PropertyResult(p, p not in failures, failures.get(p, "")) for p in PROPERTIES]
