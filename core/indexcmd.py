"""``repomapper index``: a repository's index exported to one portable file, and imported into
the cache of another machine (see :mod:`repomapper.bundle` and ``docs/index-bundles.md``)."""

from __future__ import annotations

import time
from pathlib import Path

import click

from .discover import DiscoveryError


@click.group("index")
def index_group() -> None:
    """Build a repository's index once and load it anywhere (index bundles)."""


class _UsageProblem(click.ClickException):
    """A problem with how the command was asked (exit 2, as for a usage error)."""

    exit_code = 2


@index_group.command("export")
@click.argument("roots", nargs=-1, metavar="[ROOT]...", type=click.Path(path_type=Path))
@click.option(
    "--output",
    "-o",
    required=True,
    type=click.Path(path_type=Path),
    help="The bundle file to write; with several ROOTs, a directory that gets one bundle per"
    " root, named after the root's folder (NAME.bundle).",
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
@click.option(
    "--cluster",
    metavar="ADDRESS|local:N",
    default=None,
    help="Extract on a Dask cluster: a running scheduler's address (tcp://HOST:8786), or local:N"
    " for N local workers started and stopped by this command (the cluster extra; see"
    " docs/cluster.md). The bundles are byte-identical to a local export's.",
)
@click.option(
    "--batch-files",
    type=click.IntRange(min=1),
    default=None,
    help="With --cluster: files a batch sent to a worker holds at most (default 256).",
)
def export_command(
    roots: tuple[Path, ...],
    output: Path,
    cache_dir: Path | None,
    tokens: tuple[int, ...],
    jobs: int | None,
    cluster: str | None,
    batch_files: int | None,
) -> None:
    """Build each ROOT's index (default: the current directory) in the cache and write it to
    one bundle file per root: every file's summary, the ranking state, the remembered token
    counts, the lexical index and the map of each --tokens (see docs/index-bundles.md). With
    --cluster, the files are extracted on a Dask cluster first (see docs/cluster.md)."""
    from .bundle import export_bundle

    try:
        targets = _targets(roots or (Path("."),), output)
    except DiscoveryError as exc:
        raise click.ClickException(str(exc)) from exc
    if cluster is not None:
        _extract_on_cluster(cluster, [r for r, _ in targets], cache_dir, batch_files)
    for root, target in targets:
        try:
            found = export_bundle(root, target, cache_dir, map_tokens=tokens, jobs=jobs)
        except (DiscoveryError, OSError) as exc:
            raise click.ClickException(str(exc)) from exc
        state = (
            f"ranking state {found.state_bytes} bytes"
            if found.state_bytes
            else "no ranking state (the cache stores none of these files as they are now: a"
            " clone's first map of another budget or a task will build it)"
        )
        click.echo(
            f"repomapper: wrote {target}: {found.rows} file rows, {found.counts} token counts,"
            f" {found.lexical} lexical rows, {found.maps} memoised map(s), {state}"
            + (f"; {found.missing} file(s) without a row" if found.missing else "")
            + (f"; {found.extracted} file(s) extracted here" if cluster is not None else ""),
            err=True,
        )


def _targets(roots: tuple[Path, ...], output: Path) -> list[tuple[Path, Path]]:
    """Each root with its bundle: ``output`` itself for one root; for several, a file named
    after each root's folder in the directory ``output`` (made when missing)."""
    from .discover import check_root

    resolved = [check_root(r) for r in roots]
    if len(resolved) != len(set(resolved)):
        raise _UsageProblem("a ROOT is given twice")
    if len(resolved) == 1:
        if output.is_dir():
            raise _UsageProblem(f"--output {output} is a directory: name the bundle file")
        return [(resolved[0], output)]
    if output.exists() and not output.is_dir():
        raise _UsageProblem(f"with several ROOTs, --output names a directory ({output} is a file)")
    names = [(r.name or "root") + ".bundle" for r in resolved]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise _UsageProblem(
            f"several ROOTs share a folder name ({', '.join(twice)}): their bundles would have"
            " the same name; export them separately"
        )
    try:
        output.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise click.ClickException(f"cannot make {output}: {exc.strerror or exc}") from exc
    return [(r, output / n) for r, n in zip(resolved, names, strict=True)]


def _extract_on_cluster(
    address: str, roots: list[Path], cache_dir: Path | None, batch_files: int | None
) -> None:
    """The files of ``roots`` the cache lacks, extracted on the cluster into the cache."""
    from .cluster import ClusterError, ClusterSpec, DaskEngine, extract_on_cluster
    from .cluster.batching import MAX_FILES

    try:
        spec = ClusterSpec.parse(address)
    except ValueError as exc:
        raise _UsageProblem(f"--cluster: {exc}") from exc
    try:
        with DaskEngine(spec) as engine:
            workers = engine.workers
            click.echo(f"repomapper: cluster {spec}: {workers} worker(s)", err=True)
            run = extract_on_cluster(
                roots, engine, cache_dir, _ProgressLines(), batch_files or MAX_FILES
            )
    except ClusterError as exc:
        error = _UsageProblem if exc.exit_code == 2 else click.ClickException
        raise error(str(exc)) from exc
    for line in run.failed:
        click.echo(f"repomapper: {line}", err=True)
    for reason, n in sorted(run.refused.items()):
        click.echo(f"repomapper: {n} row(s) from the cluster refused: {reason}", err=True)
    for reason, n in sorted(run.unextracted.items()):
        click.echo(f"repomapper: {n} file(s) not extracted on the cluster: {reason}", err=True)
    for note in run.notes:
        click.echo(f"repomapper: a worker reported: {note}", err=True)
    click.echo(
        f"repomapper: cluster: {run.stored} of {run.sent} file(s) extracted on {run.workers}"
        f" worker(s) in {run.seconds:.1f} s ({run.files_per_second:.0f} files/s),"
        f" {run.cached} already in the cache"
        + (f"; {run.left} left to extract here" if run.left else ""),
        err=True,
    )


class _ProgressLines:
    """Progress of the cluster's batches on stderr: a line every few seconds, and the last."""

    EVERY = 2.0

    def __init__(self) -> None:
        self.started = self.shown = time.monotonic()

    def __call__(self, files: int, total: int, batches: int, all_batches: int) -> None:
        now = time.monotonic()
        if batches < all_batches and now - self.shown < self.EVERY:
            return
        self.shown = now
        rate = files / max(now - self.started, 1e-9)
        click.echo(
            f"repomapper: cluster: {files}/{total} files, {batches}/{all_batches} batches"
            f" ({rate:.0f} files/s)",
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
        + f"; keyed the {done.keyed} file(s) of {root}"
    )
    if done.verified is not None:
        v = done.verified
        line += f"; verified {v.checked} row(s) by extracting them again, all agree"
    click.echo(line, err=True)
