"""``repomapper index``: a repository's index exported to one portable file, and imported into
the cache of another machine (see :mod:`repomapper.bundle` and ``docs/index-bundles.md``)."""

from __future__ import annotations

from pathlib import Path

import click

from .discover import DiscoveryError


@click.group("index")
def index_group() -> None:
    """Build a repository's index once and load it anywhere (index bundles)."""


@index_group.command("export")
@click.argument("root", default=".", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="The bundle file to write.",
)
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, readable=False),
    help="Where the tag cache lives (default: the user cache directory).",
)
@click.option(
    "--tokens",
    "-t",
    default=[1024],
    multiple=True,
    show_default=True,
    type=click.IntRange(min=1),
    help="A budget to map while building (repeatable): its map and token counts go in the"
    " bundle, so a clone's first map of that budget is a replay.",
)
@click.option(
    "--jobs", "-j", type=click.IntRange(min=1), default=None, help="Extraction processes."
)
def export_command(
    root: Path, output: Path, cache_dir: Path | None, tokens: tuple[int, ...], jobs: int | None
) -> None:
    """Build ROOT's index in the cache and write it to one bundle file: every file's summary,
    the ranking state, the remembered token counts, the lexical index and the map of each
    --tokens (see docs/index-bundles.md)."""
    from .bundle import export_bundle

    try:
        found = export_bundle(root, output, cache_dir, map_tokens=tokens, jobs=jobs)
    except (DiscoveryError, OSError) as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(
        f"repomapper: wrote {output}: {found.rows} file rows, {found.counts} token counts,"
        f" {found.lexical} lexical rows, {found.maps} memoised map(s),"
        f" ranking state {found.state_bytes} bytes"
        + (f"; {found.missing} file(s) without a row" if found.missing else ""),
        err=True,
    )


@index_group.command("import")
@click.argument("bundle", type=click.Path(path_type=Path, dir_okay=False, readable=False))
@click.argument("root", default=".", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, readable=False),
    help="Where the tag cache lives (default: the user cache directory).",
)
@click.option(
    "--verify",
    is_flag=True,
    help="Extract a random sample of the bundle's rows again from the files in ROOT and refuse"
    " the bundle (import nothing) if any disagrees.",
)
@click.option(
    "--rows-only",
    is_flag=True,
    help="Import the file rows alone: the ranking state, token counts, lexical rows and"
    " memoised maps are then made here by the first map.",
)
@click.option(
    "--sample",
    default=200,
    show_default=True,
    type=click.IntRange(min=1),
    help="Rows --verify extracts again.",
)
def import_command(
    bundle: Path,
    root: Path,
    cache_dir: Path | None,
    verify: bool,
    rows_only: bool,
    sample: int,
) -> None:
    """Load BUNDLE into the cache: its file rows serve any clone with the same content; its
    ranking state, token counts and lexical rows go to the cache of ROOT (default: the current
    directory), the clone it is for. Nothing is written outside the cache directory."""
    from .bundle import BundleError, import_bundle
    from .bundle.importer import skipped_lines

    try:
        done = import_bundle(
            bundle, root, cache_dir, verify=verify, sample=sample, rows_only=rows_only
        )
    except (BundleError, DiscoveryError) as exc:
        raise click.ClickException(f"bundle refused: {exc}") from exc
    for line in [*done.notes, *skipped_lines(done)]:
        click.echo(f"repomapper: {line}", err=True)
    line = (
        f"repomapper: imported {done.rows} file rows, {done.counts} token counts,"
        f" {done.lexical} lexical rows, {done.maps} memoised map(s)"
        + (", the ranking state" if done.state else "")
    )
    if done.verified is not None:
        v = done.verified
        line += f"; verified {v.checked} row(s) by extracting them again, all agree"
    click.echo(line, err=True)
