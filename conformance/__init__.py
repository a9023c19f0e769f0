"""The conformance suite: one bar for every repomapper backend, built-in or third-party.

Run it with ``repomapper conformance`` (or ``python -m repomapper.conformance``), from Python with
:func:`run_conformance`, or from a plugin's own tests with
:func:`repomapper.conformance.testing.assert_conformant`. See ``docs/plugins.md``.
"""

from .report import CheckResult, ConformanceReport, LanguageResult, Problem
from .runner import run_conformance

__all__ = [
    "CheckResult",
    "ConformanceReport",
    "LanguageResult",
    "Problem",
    "run_conformance",
]
