"""Text and JSON renderings of a :class:`~repomapper.conformance.report.ConformanceReport`."""

from __future__ import annotations

import io
import json

from rich.console import Console
from rich.table import Table

from .report import (
    FAIL,
    NO_DATA,
    NOT_CLAIMED,
    WAIVED,
    CheckResult,
    ConformanceReport,
    LanguageResult,
)

ATTRIBUTE_CHECKS = (
    "symbol_kinds",
    "end_lines",
    "scopes",
    "signatures",
    "docstrings",
    "import_names",
)
MAX_MESSAGES_PER_CHECK = 12


def _pr(check: CheckResult | None) -> str:
    if check is None:
        return "-"
    if check.status == NOT_CLAIMED:
        return "not claimed"
    if check.status == WAIVED:
        return "waived"
    if check.status == NO_DATA:
        return "n/a"
    p = "-" if check.precision is None else f"{check.precision:.2f}"
    r = "-" if check.recall is None else f"{check.recall:.2f}"
    mark = " ✗" if check.status == FAIL else ""
    return f"{p}/{r}{mark}"


def _attributes(result: LanguageResult) -> str:
    wrong = 0
    failing = []
    for c in result.checks:
        if c.check in ATTRIBUTE_CHECKS and c.status not in (NOT_CLAIMED, WAIVED):
            wrong += c.checked - c.matched
            if c.status == FAIL:
                failing.append(c.check)
    return f"{wrong} ✗ {','.join(failing)}" if failing else str(wrong)


def _properties(result: LanguageResult) -> str:
    if not result.properties:
        return "skipped"
    passed = sum(p.passed for p in result.properties)
    return f"{passed}/{len(result.properties)}"


def render_text(report: ConformanceReport, width: int = 140) -> str:
    """A table per plugin and language, then every failure with its message, then notes."""
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width,
        force_terminal=False,
        color_system=None,
        highlight=False,
        soft_wrap=True,
    )
    table = Table(title=f"repomapper conformance ({report.examples} examples per property)")
    for column in (
        "plugin",
        "language",
        "files",
        "defs P/R",
        "refs P/R",
        "imports P/R",
        "resolved P/R",
        "attr mismatches",
        "properties",
        "klines/s",
        "status",
    ):
        table.add_column(column, no_wrap=True)
    for r in report.results:
        table.add_row(
            r.plugin,
            r.language,
            str(len(r.files)),
            _pr(r.check("definitions")),
            _pr(r.check("references")),
            _pr(r.check("imports")),
            _pr(r.check("import_resolution")),
            _attributes(r),
            _properties(r),
            "-" if r.lines_per_second is None else f"{r.lines_per_second / 1000:.0f}",
            "PASS" if r.ok else "FAIL",
        )
    if report.results:
        console.print(table)
    failures = _failure_lines(report)
    if failures:
        console.print("\nFailures:")
        for line in failures:
            console.print(f"  {line}", markup=False)
    notes = report.notes()
    if notes:
        console.print("\nNotes:")
        for line in notes:
            console.print(f"  {line}", markup=False)
    passed = sum(r.ok for r in report.results)
    failed = len(report.results) - passed
    verdict = "OK" if report.ok else "FAILED"
    console.print(
        f"\nconformance {verdict}: {passed} plugin/language pair(s) passed, {failed} failed"
        + (
            f", {sum(p.fatal for p in report.problems)} plugin problem(s)"
            if report.problems
            else ""
        ),
        markup=False,
    )
    return buf.getvalue()


def _failure_lines(report: ConformanceReport) -> list[str]:
    """Failures with long message lists cut to a readable length (JSON has them all)."""
    lines = [f"{p.plugin}: {p.message}" for p in report.problems if p.fatal]
    for r in report.results:
        prefix = f"{r.plugin}/{r.language}"
        lines.extend(f"{prefix}: {e}" for e in r.errors)
        for c in r.checks:
            if c.status != FAIL:
                continue
            lines.append(f"{prefix}: {c.summary}")
            shown = c.messages[:MAX_MESSAGES_PER_CHECK]
            lines.extend(f"    {m}" for m in shown)
            if len(c.messages) > len(shown):
                lines.append(f"    ... and {len(c.messages) - len(shown)} more (see --format json)")
        for p in r.properties:
            if not p.passed:
                lines.append(f"{prefix}: property {p.name} failed: {p.message}")
    return lines


def render_json(report: ConformanceReport) -> str:
    return json.dumps(report.to_dict(), indent=2, ensure_ascii=False, sort_keys=False)
