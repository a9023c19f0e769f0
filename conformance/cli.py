"""``repomapper conformance``: run the suite from the command line.

The lead CLI attaches :data:`conformance_command` to the ``repomapper`` group; until then (and in
CI) ``python -m repomapper.conformance`` runs the same command.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from repomapper.registry import PYTHON_BACKENDS, PluginConfig, PluginSet

from .properties import DEFAULT_EXAMPLES
from .regenerate import regenerate_goldens
from .render import render_json, render_text
from .report import ConformanceReport
from .runner import run_conformance


def plugin_sets_for(plugin: str | None) -> list[tuple[PluginSet, str | None, bool]]:
    """The plugin sets to check, each with the plugin to check in it and whether it was asked for.

    Only one Python backend is registered at a time, so checking every plugin also builds a set
    with each other Python backend selected and checks that backend alone.
    """
    by_name = {name: key for key, name in PYTHON_BACKENDS.items()}
    if plugin in by_name:
        return [(PluginSet(PluginConfig(python_backend=by_name[plugin])), plugin, True)]
    default = PluginSet(PluginConfig())
    if plugin is not None:
        return [(default, plugin, True)]
    sets: list[tuple[PluginSet, str | None, bool]] = [(default, None, False)]
    for key, name in sorted(PYTHON_BACKENDS.items()):
        if key == default.config.python_backend:
            continue
        other = PluginSet(PluginConfig(python_backend=key))
        if name in other.infos or name in dict(other.load_errors):
            sets.append((other, name, False))
    return sets


def run_all(
    plugin: str | None,
    language: str | None,
    fixtures: tuple[Path, ...],
    examples: int,
    properties: bool = True,
) -> ConformanceReport:
    report: ConformanceReport | None = None
    for plugin_set, name, explicit in plugin_sets_for(plugin):
        part = run_conformance(
            plugin_set,
            plugin=name,
            language=language,
            fixtures_dir=list(fixtures) or None,
            examples=examples,
            properties=properties,
            explicit=explicit,
        )
        report = part if report is None else report.merge(part)
    assert report is not None
    return report


@click.command("conformance")
@click.option("--plugin", "plugin", metavar="NAME", help="Check only this plugin (default: all).")
@click.option("--language", metavar="L", help="Check only the fixtures of this language.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="Output format; json prints one object.",
)
@click.option(
    "--fixtures",
    "fixtures",
    multiple=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Extra corpus: DIR/fixtures/<language>/<file> with DIR/goldens/<language>/<file>.json.",
)
@click.option(
    "--examples",
    type=click.IntRange(min=0),
    default=DEFAULT_EXAMPLES,
    show_default=True,
    help="Generated examples per property run (0: fixed inputs only).",
)
@click.option("--no-properties", is_flag=True, help="Check fixtures against goldens only.")
@click.option(
    "--regenerate-goldens",
    is_flag=True,
    help="Rewrite the goldens from --plugin's output and print the diff (review it!).",
)
@click.option("--dry-run", is_flag=True, help="With --regenerate-goldens: print the diff only.")
@click.option(
    "--goldens-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="With --regenerate-goldens: write the drafts to DIR/<language>/<file>.json (default: "
    "over the corpus's own goldens; never inside an installed package).",
)
def conformance_command(
    plugin: str | None,
    language: str | None,
    fmt: str,
    fixtures: tuple[Path, ...],
    examples: int,
    no_properties: bool,
    regenerate_goldens: bool,
    dry_run: bool,
    goldens_dir: Path | None,
) -> None:
    """Check plugins against the conformance fixtures, goldens and properties.

    Exits 0 only if every claimed capability of every checked plugin meets its threshold and
    every property holds.
    """
    if regenerate_goldens:
        _regenerate(plugin, language, fixtures, dry_run, goldens_dir)
        return
    if dry_run or goldens_dir is not None:
        option = "--dry-run" if dry_run else "--goldens-dir"
        raise click.UsageError(f"{option} only applies to --regenerate-goldens")
    report = run_all(plugin, language, fixtures, examples, properties=not no_properties)
    click.echo(render_json(report) if fmt == "json" else render_text(report), nl=fmt == "json")
    sys.exit(0 if report.ok else 1)


def _regenerate(
    plugin: str | None,
    language: str | None,
    fixtures: tuple[Path, ...],
    dry_run: bool,
    goldens_dir: Path | None,
) -> None:
    if not plugin:
        raise click.UsageError(
            "--regenerate-goldens needs --plugin NAME: goldens are drafted from one plugin's "
            "output, which you then review"
        )
    plugin_set, name, _ = plugin_sets_for(plugin)[0]
    try:
        changes = regenerate_goldens(
            plugin_set,
            plugin,
            language,
            list(fixtures) or None,
            write=not dry_run,
            goldens_dir=goldens_dir,
        )
    except (LookupError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from exc
    changed = [c for c in changes if c.changed]
    for c in changed:
        click.echo(c.diff, nl=False)
    verb = "would change" if dry_run else "changed"
    where = "" if dry_run else f" in {_common_dir([c.path for c in changes])}"
    click.echo(
        f"{len(changed)} of {len(changes)} golden(s) {verb}{where} from {plugin}'s output",
        err=True,
    )


def _common_dir(paths: list[Path]) -> str:
    """The directory the written goldens share (their ``goldens`` root when they have one)."""
    common = Path(os.path.commonpath([str(p.parent) for p in paths])) if paths else Path(".")
    return str(common)
