"""The conformance suite from a plugin author's own pytest run.

::

    # tests/test_conformance.py in your plugin's package
    from repomapper.conformance.testing import assert_conformant

    import mylang_repomapper


    def test_conformance():
        assert_conformant(mylang_repomapper)  # or assert_conformant("mylang") once installed

A failure raises :class:`ConformanceError` (an ``AssertionError``) whose message lists every
problem, so pytest shows exactly what to fix.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from repomapper.registry import PluginConfig, PluginSet

from .properties import DEFAULT_EXAMPLES
from .render import render_text
from .report import ConformanceReport
from .runner import run_conformance


class ConformanceError(AssertionError):
    """A plugin did not pass; ``report`` has the details."""

    def __init__(self, message: str, report: ConformanceReport):
        super().__init__(message)
        self.report = report


def plugin_name(plugin: Any) -> str:
    """The name a plugin object declares through its ``backend_info`` hook."""
    info = getattr(plugin, "backend_info", None)
    if info is None:
        raise TypeError(f"{plugin!r} has no backend_info hook; is it a repomapper plugin?")
    name: str = info().name
    return name


def check_conformance(
    plugin: str | Any,
    *,
    language: str | None = None,
    fixtures: Path | str | Sequence[Path | str] | None = None,
    examples: int = DEFAULT_EXAMPLES,
    properties: bool = True,
) -> ConformanceReport:
    """Run the suite on one plugin and return the report without judging it.

    ``plugin`` is either the name of a registered plugin (built-in or installed through the
    ``repomapper`` entry point) or a plugin object (usually your module), which is registered
    on its own so that what is installed does not matter.
    """
    if isinstance(plugin, str):
        from .cli import plugin_sets_for

        plugin_set, name, _ = plugin_sets_for(plugin)[0]
        assert name is not None
    else:
        name = plugin_name(plugin)
        plugin_set = isolated_plugin_set(name, plugin)
    return run_conformance(
        plugin_set,
        plugin=name,
        language=language,
        fixtures_dir=fixtures,
        examples=examples,
        properties=properties,
    )


def isolated_plugin_set(name: str, plugin: Any) -> PluginSet:
    """Built-ins plus ``plugin`` registered as ``name``, without entry points.

    A built-in of the same name is replaced, so a development copy of a plugin can be checked
    while another version is installed.
    """
    plugin_set = PluginSet(PluginConfig(load_entry_points=False, blocked=(name,)))
    plugin_set.pm.unblock(name)
    plugin_set.pm.register(plugin, name=name)
    return plugin_set


def assert_conformant(
    plugin: str | Any,
    *,
    language: str | None = None,
    fixtures: Path | str | Sequence[Path | str] | None = None,
    examples: int = DEFAULT_EXAMPLES,
    properties: bool = True,
) -> ConformanceReport:
    """Run the suite on ``plugin`` and raise :class:`ConformanceError` unless it passes."""
    report = check_conformance(
        plugin, language=language, fixtures=fixtures, examples=examples, properties=properties
    )
    if not report.ok:
        raise ConformanceError(
            "plugin is not conformant:\n"
            + "\n".join(f"  {line}" for line in report.failures())
            + "\n\n"
            + render_text(report),
            report,
        )
    return report
