"""The result of a conformance run: per plugin and language, checks and properties."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .properties import PropertyResult
from .scoring import TALLY_CHECKS, Accuracy, Tally
from .thresholds import Override, Threshold

PASS = "pass"
FAIL = "fail"
NOT_CLAIMED = "not claimed"
WAIVED = "waived"
NO_DATA = "n/a"  # claimed, but the fixtures have nothing to check it against


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check (see ``scoring.CHECKS``) for one plugin on one language."""

    check: str
    capability: str
    status: str
    precision: float | None = None
    recall: float | None = None
    accuracy: float | None = None
    expected: int = 0
    matched: int = 0
    false_positives: int = 0
    reported: int = 0
    checked: int = 0
    threshold: Threshold | None = None
    override: str = ""  # the reason of the override that applied, if any
    summary: str = ""
    messages: tuple[str, ...] = ()

    @property
    def is_tally(self) -> bool:
        return self.check in TALLY_CHECKS

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "check": self.check,
            "capability": self.capability,
            "status": self.status,
        }
        if self.is_tally:
            d.update(
                precision=self.precision,
                recall=self.recall,
                expected=self.expected,
                matched=self.matched,
                false_positives=self.false_positives,
                reported=self.reported,
            )
        else:
            d.update(accuracy=self.accuracy, checked=self.checked, correct=self.matched)
        if self.threshold is not None:
            d["threshold"] = {
                k: v
                for k, v in (
                    ("precision", self.threshold.precision),
                    ("recall", self.threshold.recall),
                    ("accuracy", self.threshold.accuracy),
                )
                if v is not None
            }
        if self.override:
            d["override"] = self.override
        if self.summary:
            d["summary"] = self.summary
        d["messages"] = list(self.messages)
        return d


def evaluate_check(
    check: str,
    capability: str,
    claimed: bool,
    measure: Tally | Accuracy,
    threshold: Threshold | None,
    override: Override | None,
    messages: list[str],
) -> CheckResult:
    """Turn a measurement into a verdict against its threshold."""
    common: dict[str, Any] = {
        "check": check,
        "capability": capability,
        "threshold": threshold,
        "override": override.reason if override else "",
        "messages": tuple(messages),
    }
    if isinstance(measure, Tally):
        common.update(
            precision=measure.precision,
            recall=measure.recall,
            expected=measure.expected,
            matched=measure.matched,
            false_positives=measure.false_positives,
            reported=measure.reported,
        )
        has_data = measure.expected > 0 or measure.false_positives > 0
    else:
        common.update(accuracy=measure.value, checked=measure.checked, matched=measure.correct)
        has_data = measure.checked > 0
    if not claimed:  # measured for the record, but its messages would only be noise
        return CheckResult(status=NOT_CLAIMED, **{**common, "messages": ()})
    if override is not None and threshold is None:
        return CheckResult(status=WAIVED, summary=f"waived: {override.reason}", **common)
    if not has_data or threshold is None:
        return CheckResult(status=NO_DATA, **common)
    failures = []
    if isinstance(measure, Tally):
        if measure.expected and measure.matched == 0:
            noun = "reported nothing" if measure.reported == 0 else "matched none"
            failures.append(
                f"claims {capability} but found 0 of {measure.expected} expected ({noun})"
            )
        else:
            if threshold.recall is not None and (measure.recall or 0.0) < threshold.recall:
                failures.append(
                    f"recall {_fmt(measure.recall)} < {threshold.recall:.2f} "
                    f"({measure.matched} of {measure.expected} expected found)"
                )
            if threshold.precision is not None and (
                measure.precision is not None and measure.precision < threshold.precision
            ):
                failures.append(
                    f"precision {_fmt(measure.precision)} < {threshold.precision:.2f} "
                    f"({measure.false_positives} false positive(s))"
                )
    elif threshold.accuracy is not None and (measure.value or 0.0) < threshold.accuracy:
        failures.append(
            f"accuracy {_fmt(measure.value)} < {threshold.accuracy:.2f} "
            f"({measure.correct} of {measure.checked} right)"
        )
    if failures:
        return CheckResult(status=FAIL, summary=f"{check}: " + "; ".join(failures), **common)
    return CheckResult(status=PASS, **common)


@dataclass(frozen=True, slots=True)
class LanguageResult:
    """Everything checked for one plugin on one fixture language."""

    plugin: str
    language: str
    files: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    properties: tuple[PropertyResult, ...]
    errors: tuple[str, ...] = ()
    #: extraction speed (tags and imports) on the fixtures, repeated to a few hundred lines;
    #: informative only, never a pass/fail bar (that is the linear_time property)
    lines_per_second: float | None = None

    @property
    def ok(self) -> bool:
        return (
            not self.errors
            and all(c.status != FAIL for c in self.checks)
            and all(p.passed for p in self.properties)
        )

    def check(self, name: str) -> CheckResult | None:
        return next((c for c in self.checks if c.check == name), None)

    def failures(self) -> list[str]:
        """One actionable line per problem, prefixed with ``plugin/language``."""
        prefix = f"{self.plugin}/{self.language}"
        lines = [f"{prefix}: {e}" for e in self.errors]
        for c in self.checks:
            if c.status == FAIL:
                lines.append(f"{prefix}: {c.summary}")
                lines.extend(f"{prefix}:   {m}" for m in c.messages)
        for p in self.properties:
            if not p.passed:
                lines.append(f"{prefix}: property {p.name} failed: {p.message}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "language": self.language,
            "ok": self.ok,
            "files": list(self.files),
            "errors": list(self.errors),
            "checks": [c.to_dict() for c in self.checks],
            "properties": [p.to_dict() for p in self.properties],
            "lines_per_second": self.lines_per_second,
        }


@dataclass(frozen=True, slots=True)
class Problem:
    """A plugin-level finding outside any language: failed to load, unavailable, no fixtures."""

    plugin: str
    message: str
    fatal: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {"plugin": self.plugin, "message": self.message, "fatal": self.fatal}


@dataclass(frozen=True, slots=True)
class ConformanceReport:
    results: tuple[LanguageResult, ...] = ()
    problems: tuple[Problem, ...] = ()
    examples: int = 0
    corpora: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True only if something was checked and nothing failed."""
        return (
            bool(self.results)
            and all(r.ok for r in self.results)
            and not any(p.fatal for p in self.problems)
        )

    def failures(self) -> list[str]:
        lines = [f"{p.plugin}: {p.message}" for p in self.problems if p.fatal]
        for r in self.results:
            lines.extend(r.failures())
        if not self.results and not lines:
            lines.append("nothing was checked")
        return lines

    def notes(self) -> list[str]:
        """Non-failing information: skipped plugins, unclaimed and waived checks."""
        lines = [f"{p.plugin}: {p.message}" for p in self.problems if not p.fatal]
        for r in self.results:
            unclaimed = sorted({c.capability for c in r.checks if c.status == NOT_CLAIMED})
            if unclaimed:
                lines.append(f"{r.plugin}/{r.language}: not claimed: {', '.join(unclaimed)}")
            for c in r.checks:
                if c.override:
                    lines.append(f"{r.plugin}/{r.language}: {c.check} override: {c.override}")
        return lines

    def merge(self, other: ConformanceReport) -> ConformanceReport:
        return ConformanceReport(
            results=self.results + other.results,
            problems=self.problems + other.problems,
            examples=max(self.examples, other.examples),
            corpora=tuple(dict.fromkeys(self.corpora + other.corpora)),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "examples": self.examples,
            "corpora": list(self.corpora),
            "results": [r.to_dict() for r in self.results],
            "problems": [p.to_dict() for p in self.problems],
            "failures": self.failures(),
        }
