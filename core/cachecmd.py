"""``repomapper cache``: list the cache directory and prune it (see :mod:`repomapper.cachedir`).

Only click is imported here: the group is registered on every ``repomapper`` start, and a map
run should not pay for the cache directory's code.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

_DAY = 86_400.0

#: a command function an option decorator returns as it was given
_Command = TypeVar("_Command", bound=Callable[..., Any])


def _directory(cache_dir: Path | None) -> Path:
    from .cache import default_cache_dir

    return (cache_dir if cache_dir is not None else default_cache_dir()).absolute()


def _cache_dir_option(f: _Command) -> _Command:
    return click.option(
        "--cache-dir",
        type=click.Path(path_type=Path, file_okay=False),
        default=None,
        help="The cache directory (default: the user cache directory).",
    )(f)


def _format_option(f: _Command) -> _Command:
    return click.option(
        "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
    )(f)


def _print(fmt: str, as_json: dict[str, Any], lines: list[str]) -> None:
    if fmt == "json":
        click.echo(json.dumps(as_json, indent=2, ensure_ascii=False))
    else:
        click.echo("\n".join(lines))


@click.group("cache", context_settings={"help_option_names": ["-h", "--help"]})
def cache() -> None:
    """List and prune the tag cache. A default bound of 1 GB (REPOMAPPER_CACHE_MAX_SIZE, e.g.
    500MB; 0 or off for none) is applied automatically, least recently used repositories first,
    at most once every few hours."""


@cache.command("info")
@_cache_dir_option
@_format_option
def info_command(cache_dir: Path | None, fmt: str) -> None:
    """Where the cache is, its size, each repository's size and last use, entries by kind."""
    from .cachedir import configured_max_size, human, inspect

    found = inspect(_directory(cache_dir))
    bound = configured_max_size()
    as_json = found.to_json() | {"max_size": bound}
    lines = found.lines() + [
        f"size bound: {human(bound) if bound else 'none'} (REPOMAPPER_CACHE_MAX_SIZE)"
    ]
    _print(fmt, as_json, lines)


@cache.command("prune")
@click.option(
    "--older-than",
    type=click.FloatRange(min=0),
    metavar="DAYS",
    help="Remove repositories not used for DAYS days (and content rows no other refers to).",
)
@click.option(
    "--max-size",
    metavar="SIZE",
    help="Remove least recently used repositories until the cache fits SIZE (500MB, 2G).",
)
@click.option(
    "--repository",
    type=click.Path(path_type=Path, file_okay=False),
    help="Remove this repository's cache (its path; it need not exist any more).",
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
@_cache_dir_option
@_format_option
def prune_command(
    older_than: float | None,
    max_size: str | None,
    repository: Path | None,
    dry_run: bool,
    cache_dir: Path | None,
    fmt: str,
) -> None:
    """Remove cached repositories by age, total size or path; without an option, apply the
    configured size bound. A database another process has open is skipped with a message."""
    from .cache import cache_file_for
    from .cachedir import configured_max_size, parse_size, prune

    directory = _directory(cache_dir)
    size: int | None = None
    if max_size is not None:
        try:
            size = parse_size(max_size)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--max-size") from None
    name = None
    if repository is not None:
        name = cache_file_for(repository, directory).stem
    elif older_than is None and size is None:
        size = configured_max_size()
        if size is None:
            click.echo("repomapper: no size bound configured and no option given: nothing to do")
            return
    report = prune(
        directory,
        older_than=older_than * _DAY if older_than is not None else None,
        max_size=size,
        repository=name,
        dry_run=dry_run,
    )
    if repository is not None and not report.removed and not report.skipped:
        sys.stderr.write(f"repomapper: no cache for {repository} in {directory}\n")
    _print(fmt, report.to_json(), report.lines())
    if fmt == "json":  # the text already says it
        for line in report.skipped:
            sys.stderr.write(f"repomapper: skipped {line}\n")
