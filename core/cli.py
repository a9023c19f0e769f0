"""The ``repomapper`` command line."""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from .discover import Discovery, DiscoveryError, GlobError
from .fileentry import FileEntry
from .indexcmd import index_group
from .isolation.limits import DEFAULT_TIMEOUT, ENV_TIMEOUT, Limits
from .model import Diagnostic, FileExtraction, MapResult
from .progress import StderrProgress
from .registry import PYTHON_BACKENDS, PluginConfig, PluginSet

if TYPE_CHECKING:
    from .contract.envelope import Envelope
    from .timings import StageTimer

EXIT_NOTHING_MAPPED = 1
EXIT_USAGE = 2
#: A file left unmapped with one of these failed (``tags``/``imports`` exit nonzero for it).
_FAULT_CODES = ("backend_crashed", "backend_timeout", "backend_error", "backend_invalid_output")
#: a command function as an option decorator returns it (the options only register parameters)
_Command = TypeVar("_Command", bound=Callable[..., Any])


class _StderrHandler(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time (tests swap it), one line per record.

    A command that prints diagnostics holds warnings until it ends (:meth:`print_held`): most
    of them also become diagnostics, which the command prints with their codes, and a warning
    is printed once. Other commands (``mcp``: its stderr is the server's log) print them live.
    """

    def __init__(self) -> None:
        super().__init__()
        self.hold = True
        self.held: list[logging.LogRecord] = []
        self.printed: list[str] = []  # what the command itself wrote on stderr

    def emit(self, record: logging.LogRecord) -> None:
        if self.hold and record.levelno == logging.WARNING:
            self.held.append(record)
            return
        self.write(self.format(record))

    def write(self, line: str) -> None:
        self.printed.append(line)
        with contextlib.suppress(ValueError, OSError):
            sys.stderr.write(f"repomapper: {line}\n")

    def print_held(self) -> None:
        """Print the held warnings that no line of the command already said."""
        held, self.held = self.held, []
        if isinstance(sys.exc_info()[1], KeyboardInterrupt):
            return  # (run as the context closes) an interrupted run says one line: _Main's
        for record in held:
            line = self.format(record)
            if not any(line in said or record.getMessage() in said for said in self.printed):
                self.write(line)
        self.printed = []


_HANDLER = _StderrHandler()
_VERBOSE = [0]


def _hold_warnings() -> None:
    """For a command that prints its diagnostics: a warning that became one is said once."""
    _HANDLER.hold = True


def _err(line: str) -> None:
    """One ``repomapper: ...`` line on stderr, remembered so a held warning is not repeated."""
    _HANDLER.write(line)


def _setup_logging(verbose: int) -> None:
    _json_usage_errors.clear()
    _HANDLER.hold = False  # map, tags, imports and graph hold warnings (see _hold_warnings)
    _HANDLER.held, _HANDLER.printed = [], []
    click.get_current_context().call_on_close(_HANDLER.print_held)
    root = logging.getLogger()
    if _HANDLER not in root.handlers:
        root.addHandler(_HANDLER)
    if root.level > logging.WARNING or root.level == logging.NOTSET:
        root.setLevel(logging.WARNING)  # warnings must still reach the diagnostics
    _set_verbosity(verbose)


def _set_verbosity(verbose: int) -> None:
    _VERBOSE[0] = verbose
    level = logging.WARNING if verbose == 1 else logging.DEBUG if verbose > 1 else logging.ERROR
    _HANDLER.setLevel(level)
    if verbose > 1:
        logging.getLogger().setLevel(logging.DEBUG)


def _more_verbose(ctx: click.Context, param: click.Parameter, value: int) -> None:
    """A command's own ``-v`` counts together with the group's (``repomapper -v map -v`` is
    ``-vv``): the closing line's "-v for the list" works after the command name too."""
    if value:
        _set_verbosity(_VERBOSE[0] + value)


def verbose_option(f: _Command) -> _Command:
    return click.option(
        "-v",
        "--verbose",
        count=True,
        expose_value=False,
        callback=_more_verbose,
        help="Show warnings and every diagnostic (-v) or debug output (-vv) on stderr.",
    )(f)


#: set by ``map --format json``: a refused input is also an envelope on stdout
_json_usage_errors: list[bool] = []


def _fail(message: str, code: int = EXIT_USAGE) -> NoReturn:
    if _json_usage_errors and code == EXIT_USAGE:
        _echo_invalid(message)
    _err(f"error: {message}")
    sys.exit(code)


def _check_numbers(**values: tuple[int | None, int]) -> None:
    """Refuse a nonsensical number in one line (exit 2): ``name=(value, minimum)``, None skipped."""
    for name, (value, minimum) in values.items():
        if value is not None and value < minimum:
            _fail(f"--{name.replace('_', '-')} must be at least {minimum} (got {value})")


def _from_cwd(names: Sequence[str]) -> list[str]:
    """Files named on the command line, resolved against the current directory (as every CLI
    does) into absolute paths; the map says when one is outside the repository."""
    return [os.path.abspath(n) for n in names]


def gitignore_option(f: _Command) -> _Command:
    """``--gitignore/--no-gitignore``: unset, .gitignore files count inside a git work tree only
    (as git, ripgrep and fd do); .ignore and .repomapperignore files count everywhere."""
    return click.option(
        "--gitignore/--no-gitignore",
        "gitignore",
        default=None,
        help="Honour .gitignore files outside a git work tree too (--gitignore), or nowhere "
        "(--no-gitignore). Default: inside a git work tree only, as git does.",
    )(f)


@dataclass(frozen=True)
class RepositoryOptions:
    """Which files of a repository to map and with what cache: the options every command
    that maps a whole repository shares (``map``, ``graph``), as one value."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    gitignore: bool | None = None
    no_cache: bool = False
    cache_dir: Path | None = None
    jobs: int | None = None


@dataclass(frozen=True)
class PluginOptions:
    """Which plugins answer and for how long: the options of every command that extracts."""

    python_backend: str = "ast"
    no_entry_points: bool = False
    block: tuple[str, ...] = ()
    plugin_timeout: float | None = None

    def plugin_set(self) -> PluginSet:
        return _plugin_set(
            self.python_backend, self.no_entry_points, self.block, self.plugin_timeout
        )


def _gathered(cls: type[Any], name: str) -> Callable[[_Command], Callable[..., Any]]:
    """A decorator handing a command the click parameters named as ``cls``'s fields as one
    ``cls`` value, under ``name``, instead of one argument each."""
    names = [f.name for f in fields(cls)]

    def decorate(f: _Command) -> Callable[..., Any]:
        @functools.wraps(f)
        def command(*args: Any, **kwargs: Any) -> Any:
            values = {k: kwargs.pop(k) for k in names if k in kwargs}
            return f(*args, **{name: cls(**values)}, **kwargs)

        return command

    return decorate


def repository_options(command: _Command) -> Callable[..., Any]:
    """Which files to map and how: ``--include``, ``--exclude``, ``--gitignore``, ``--no-cache``,
    ``--cache-dir`` and ``--jobs``, shared by the commands that map a whole repository (``map``,
    ``graph``), handed to them as one :class:`RepositoryOptions` (``repo``)."""
    f = _gathered(RepositoryOptions, "repo")(command)
    f = click.option(
        "--jobs",
        "-j",
        type=int,
        default=None,
        help="Processes for extraction (default and cap: the CPU count).",
    )(f)
    f = click.option(
        "--cache-dir",
        type=click.Path(path_type=Path, readable=False),
        help="Where the tag cache lives (default: the user cache directory).",
    )(f)
    f = click.option("--no-cache", is_flag=True, help="Do not read or write the tag cache.")(f)
    f = gitignore_option(f)
    f = click.option(
        "--exclude", multiple=True, metavar="GLOB", help="Do not map files matching this glob."
    )(f)
    return click.option(
        "--include",
        multiple=True,
        metavar="GLOB",
        help="Only map files matching this glob (gitignore syntax, ** allowed).",
    )(f)


def task_options(task_help: str) -> Callable[[_Command], _Command]:
    """``--task TEXT`` and ``--task-file FILE``, shared by every command that ranks for a task."""

    def decorate(f: _Command) -> _Command:
        f = click.option(
            "--task-file",
            metavar="FILE",
            help="Read the task description from FILE ('-' for standard input).",
        )(f)
        return click.option("--task", metavar="TEXT", help=task_help)(f)

    return decorate


def _task_text(task: str | None, task_file: str | None) -> str | None:
    """The task from ``--task`` and ``--task-file`` together (an unreadable file is one line)."""
    if task_file is None:
        return task
    return "\n".join(filter(None, [task, _read_task_file(task_file)]))


def _read_task_file(name: str | None) -> str | None:
    if name is None:
        return None
    try:
        with click.open_file(name, encoding="utf-8", errors="replace") as f:
            text: str = f.read()
            return text
    except OSError as exc:
        _fail(f"--task-file {name}: cannot read: {exc.strerror or exc}")
    return None


def _plugin_set(
    python_backend: str,
    no_entry_points: bool,
    block: Sequence[str],
    plugin_timeout: float | None = None,
) -> PluginSet:
    config = PluginConfig(python_backend=python_backend)
    if no_entry_points:
        config = replace(config, load_entry_points=False)
    if block:
        config = replace(config, blocked=config.blocked + tuple(block))
    if plugin_timeout is not None:
        config = replace(config, limits=Limits.from_env().with_timeout(plugin_timeout))
    return PluginSet(config)


def timeout_option(f: _Command) -> _Command:
    return click.option(
        "--plugin-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=None,
        metavar="SECONDS",
        help=f"Stop a plugin hook call (one file) after this long and report the file "
        f"(default: {DEFAULT_TIMEOUT:g}; also {ENV_TIMEOUT}).",
    )(f)


def _cap_jobs(jobs: int | None) -> int | None:
    """``--jobs`` above the CPU count is capped, with a message."""
    from .extract import default_jobs

    if jobs is not None and jobs > default_jobs():
        _err(f"--jobs {jobs} capped at {default_jobs()} (the CPU count)")
        return default_jobs()
    return jobs


def plugin_options(command: _Command) -> Callable[..., Any]:
    """``--python-backend``, ``--no-entry-points``, ``--block`` (and ``--plugin-timeout`` where
    the command has it), handed to the command as one :class:`PluginOptions` (``plugins``)."""
    f = _gathered(PluginOptions, "plugins")(command)
    f = click.option(
        "--python-backend",
        type=click.Choice(sorted(PYTHON_BACKENDS)),
        default="ast",
        show_default=True,
        help="ast: fast, name-based; libcst: resolves references through imports (slower).",
    )(f)
    f = click.option(
        "--no-entry-points",
        is_flag=True,
        help="Do not load third-party plugins (also REPOMAPPER_NO_ENTRY_POINTS=1).",
    )(f)
    f = click.option(
        "--block",
        "block",
        multiple=True,
        metavar="NAME",
        help="Never load the named plugin (repeatable; also REPOMAPPER_BLOCK_PLUGINS).",
    )(f)
    return f


def _summary(diags: Sequence[Diagnostic], everything: bool = False) -> list[str]:
    """The diagnostics worth a line: errors and warnings; with -v (or ``everything``) every
    one, with its paths."""
    verbose = _VERBOSE[0] > 0 or everything
    lines = []
    for d in diags:
        if d.severity == "info" and not verbose:
            continue
        where = f"{d.path}: " if d.path else ""
        lines.append(f"{d.severity}: [{d.code}] {where}{d.message}")
        if verbose:
            lines.extend(f"  {p}" for p in d.paths)
    return lines


#: Why files were not mapped, as the summary line words it; the first three are skipped before
#: extraction (so they are not in ``files_total``).
_SKIP_LABELS = (
    ("too_large", "over the size limit"),
    ("symlink_outside_root", "symlinked outside the repository"),
    ("unsafe_path", "with unusable names"),
    ("no_backend", "without a backend"),
    ("backend_unavailable", "with an unavailable backend"),
    ("binary", "binary"),
    ("minified", "minified"),
)
_SKIPPED_BEFORE_EXTRACTION = 3


#: what discovery leaves out that no diagnostic reports (the summary line counts them)
_LISTING_REASONS = {"ignored": "ignored", "skipped_folder": "in skipped folders"}


def _coverage_line(
    result: MapResult, said_more: bool, listing: Discovery | None = None
) -> str | None:
    """``mapped 120 of 150 files; 20 without a backend, 10 over the size limit; -v for the list``."""
    from .contract.envelope import diagnostic_file_count
    from .installable import CODE as INSTALLABLE

    mapped = int(result.extra.get("files_mapped", 0))
    parts, before, after = [], 0, 0
    for i, (code, label) in enumerate(_SKIP_LABELS):
        n = diagnostic_file_count(result.diagnostics, code)
        if n:
            parts.append(f"{n} {label}")
            if i < _SKIPPED_BEFORE_EXTRACTION:
                before += n
            else:
                after += n
    failed = result.files_total - mapped - after
    if failed > 0:
        parts.append(f"{failed} unreadable or failed (see the warnings)")
    coarse = diagnostic_file_count(result.diagnostics, INSTALLABLE)
    if coarse:  # (-v says which grammar and how to install it)
        parts.append(f"{coarse} mapped without their language's grammar")
    for reason, label in _LISTING_REASONS.items():
        found = [x for x in (listing.left_out if listing is not None else ()) if x.reason == reason]
        if found:
            bound = "at least " if any(x.at_least for x in found) else ""
            parts.append(f"{bound}{sum(x.count for x in found):,} {label}")
    if not parts and not mapped and not result.files_total + before:
        return None  # nothing was listed: the diagnostic that says why is the one line
    line = f"mapped {mapped} of {result.files_total + before} files"
    if result.map:
        line += f" ({result.files_covered} shown within {result.budget} tokens)"
    if parts:
        line += "; " + ", ".join(parts)
    if (parts or said_more) and not _VERBOSE[0]:
        line += "; -v for the list"
    return line


EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


class _Main(click.Group):
    """The ``repomapper`` group: Ctrl-C in any command is one line and exit 130 (click's own
    handling says "Aborted!" and exits 1, the code that means "nothing could be mapped")."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            _err("interrupted")
            sys.exit(EXIT_INTERRUPTED)


@click.group(cls=_Main, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="repomapper")
@click.option(
    "-v", "--verbose", count=True, help="Show warnings (-v) or debug output (-vv) on stderr."
)
def main(verbose: int) -> None:
    """Ranked, token-budgeted maps of source repositories for LLM coding agents."""
    _setup_logging(verbose)


class _MapCommand(click.Command):
    """``map``: with ``--format json`` a usage error click finds (a bad choice, a number that is
    not one) still prints the envelope on stdout, as every other invalid input does."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        wants_json = "--format=json" in args or any(
            a == "--format" and b == "json" for a, b in zip(args, args[1:], strict=False)
        )
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            if wants_json:
                param = getattr(exc, "param", None)
                name = param.name if param is not None and param.name else None
                _echo_invalid(exc.format_message(), _FIELDS.get(name, name) if name else None)
            raise


def _echo_invalid(message: str, field: str | None = None, value: object = None) -> None:
    """The repo.map envelope of an invalid input the command line refused itself."""
    from .contract import envelope

    reason = envelope.Reason("invalid_input", message, field, value)
    click.echo(envelope.error(reason).to_json())


@main.command("map", cls=_MapCommand)
@verbose_option
@click.argument("root", default=".", type=click.Path(path_type=Path, readable=False))
@click.option(
    "--tokens", "-t", default=1024, show_default=True, type=int, help="Token budget (a hard cap)."
)
@click.option(
    "--chat",
    multiple=True,
    metavar="FILE",
    help="A file in the chat (relative to here): boosts what it references; left out of the map.",
)
@click.option(
    "--mention-file",
    multiple=True,
    metavar="FILE",
    help="A file the user mentioned (relative to here).",
)
@click.option(
    "--mention-ident", multiple=True, metavar="NAME", help="An identifier the user mentioned."
)
@task_options(
    "A task description: files and symbols are ranked for it (see ranked_files[].why in --format json)."
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@repository_options
@click.option(
    "--max-file-size",
    type=int,
    default=1_000_000,
    show_default=True,
    help="Skip files larger than this many bytes.",
)
@click.option("--timings", is_flag=True, help="Print stage timings to stderr.")
@timeout_option
@plugin_options
def map_command(
    root: Path,
    tokens: int,
    chat: Sequence[str],
    mention_file: Sequence[str],
    mention_ident: tuple[str, ...],
    task: str | None,
    task_file: str | None,
    fmt: str,
    max_file_size: int,
    timings: bool,
    repo: RepositoryOptions,
    plugins: PluginOptions,
) -> None:
    """Print a ranked map of ROOT (default: the current directory) within a token budget.

    Files given to --chat and --mention-file are relative to the current directory."""
    import time

    from .repomap import RepoMap
    from .timings import StageTimer

    _hold_warnings()
    if fmt == "json":
        _json_usage_errors.append(True)
        # the request's own checks word the rest (token_budget is --tokens: see _cli_words)
        _check_numbers(jobs=(repo.jobs, 1), max_file_size=(max_file_size, 1))
    else:
        _check_numbers(tokens=(tokens, 1), jobs=(repo.jobs, 1), max_file_size=(max_file_size, 1))
    repo = replace(repo, jobs=_cap_jobs(repo.jobs))
    if not repo.no_cache:
        from .cache import has_stored_state
        from .mempolicy import no_numpy_huge_pages

        if has_stored_state(root, repo.cache_dir):
            no_numpy_huge_pages()  # (an update's arrays: see repomapper.mempolicy)
    started = time.perf_counter()
    task = _task_text(task, task_file)
    chat, mention_file = _from_cwd(chat), _from_cwd(mention_file)
    timer = StageTimer()
    if fmt == "json":
        try:
            _map_json(
                root,
                tokens,
                chat,
                mention_file,
                mention_ident,
                task,
                repo,
                max_file_size,
                plugins.plugin_set(),
                timer,
            )
        finally:
            if timings:
                _print_timings(time.perf_counter() - started, timer, timer.counts)
        return
    progress = StderrProgress("mapping")
    rm = None
    try:
        rm = RepoMap(
            root,
            tokens,
            cache_dir=repo.cache_dir,
            use_cache=not repo.no_cache,
            include=repo.include,
            exclude=repo.exclude,
            max_file_size=max_file_size,
            jobs=repo.jobs,
            progress=progress,
            plugins=plugins.plugin_set(),
            timer=timer,
            gitignore=repo.gitignore,
        )
        result = rm.map(
            chat_files=chat,
            mentioned_fnames=mention_file,
            mentioned_idents=mention_ident,
            task=task,
        )
    except (DiscoveryError, GlobError, ValueError) as exc:
        _fail(str(exc))
    finally:
        progress.close()
        if rm is not None:
            rm.close()
    if result.map:
        click.echo(result.map, nl=not result.map.endswith("\n"))
    lines = _summary(result.diagnostics)
    listing = rm.state.last_listing if rm is not None else None
    if listing is not None and _VERBOSE[0]:
        from .discover import describe_left_out

        lines += [f"info: [left_out] {describe_left_out(x)}" for x in listing.left_out]
    for line in lines:
        _err(line)
    coverage = _coverage_line(result, bool(lines), listing)
    if coverage is not None:
        _err(coverage)
    if timings:
        _print_timings(time.perf_counter() - started, timer, rm.last_stats)
    if not result.map:
        if not lines:
            _err("the map is empty")
        sys.exit(EXIT_NOTHING_MAPPED)


def _print_timings(total: float, timer: StageTimer, stats: dict[str, int] | None) -> None:
    stages = timer.describe()
    _err(f"timings: {stages + '; ' if stages else ''}total {total:.3f}s")
    if stats:
        cached, extracted = stats.get("cached", 0), stats.get("extracted", 0)
        line = f"cache: {cached} of {cached + extracted} file(s) from the tag cache, {extracted} extracted"
        if stats.get("memoised"):
            line += "; the map was replayed from the cache (nothing ranked or rendered)"
        elif stats.get("reused"):
            line += "; the last extraction was reused"
        _err(line)


def _map_json(
    root: Path,
    tokens: int,
    chat: Sequence[str],
    mention_file: Sequence[str],
    mention_ident: Sequence[str],
    task: str | None,
    repo: RepositoryOptions,
    max_file_size: int,
    plugins: PluginSet,
    timer: StageTimer,
) -> None:
    """``map --format json``: the repo.map contract's envelope (see repomapper.contract), built
    from the options. Exit 0 ok, 1 empty or a non-input error, 2 invalid input."""
    from .contract import MapOptions, run_map

    request = {
        "clone_path": str(root.absolute()),
        "token_budget": tokens,
        "include_globs": list(repo.include),
        "exclude_globs": list(repo.exclude),
        "chat_files": [str(c) for c in chat],
        "mentioned_files": [str(f) for f in mention_file],
        "mentioned_idents": list(mention_ident),
        "task": task,
        "max_ranked": 10_000,
    }
    progress = StderrProgress("mapping")
    try:
        answer = run_map(
            request,
            MapOptions(
                cache_dir=repo.cache_dir,
                use_cache=not repo.no_cache,
                max_file_size=max_file_size,
                jobs=repo.jobs,
                gitignore=repo.gitignore,
                plugins=plugins,
                progress=progress,
                timer=timer,
            ),
        )
    finally:
        progress.close()
    answer = _cli_words(answer)
    click.echo(answer.to_json())
    reason = answer.reason  # set exactly when the outcome is "error" or "empty" (see envelope)
    if answer.outcome == "error" and reason is not None:
        _err(f"error: [{reason.code}] {reason.message}")
        sys.exit(EXIT_USAGE if reason.code == "invalid_input" else EXIT_NOTHING_MAPPED)
    said = reason.code if answer.outcome == "empty" and reason else None
    # an empty answer's reason line says what its diagnostic of the same code says
    for line in _summary([d for d in answer.diagnostics if d.code != said]):
        _err(line)
    if answer.outcome == "empty" and reason is not None:
        _err(f"empty: [{reason.code}] {reason.message}")
        sys.exit(EXIT_NOTHING_MAPPED)


#: the request's fields as the command line calls them (``map --format json`` words its
#: answers for the person who typed the options, not for an MCP client)
_CLI_NAMES = {
    "clone_path": "ROOT",
    "include_globs": "--include",
    "exclude_globs": "--exclude",
    "token_budget": "--tokens",
}
#: the request field an option of ``map`` stands for
_FIELDS = {
    "root": "clone_path",
    "include": "include_globs",
    "exclude": "exclude_globs",
    "tokens": "token_budget",
}
_CLI_NAME_RE = re.compile(r"\b(" + "|".join(_CLI_NAMES) + r")\b")


def _cli_words(answer: Envelope) -> Envelope:
    """``answer`` with its reason's message naming the command line's options (``ROOT '/x'
    does not exist``, ``--tokens must be ...``); ``reason.field`` stays the request's, and so
    does the rest of the envelope (``next`` is the contract's advice, the same everywhere)."""
    reason = answer.reason
    if reason is None:
        return answer
    message = _CLI_NAME_RE.sub(lambda m: _CLI_NAMES[m.group(1)], reason.message)
    return replace(answer, reason=replace(reason, message=message))


def _extract_paths(
    paths: Sequence[Path], options: PluginOptions, no_cache: bool
) -> Iterator[tuple[str, list[FileEntry], dict[str, FileExtraction], list[Diagnostic]]]:
    """Extraction for the given files and directories (directories are discovered).

    Yields (display prefix, entries, extractions, diagnostics); a record's path is shown as the
    user gave it: the prefix joined with the path relative to the root that was mapped.
    """
    from .repomap import RepoMap

    plugins = options.plugin_set()
    yield "", [], {}, plugins.load_diagnostics()
    for p in paths:
        if not p.exists():
            raise DiscoveryError(f"{p}: no such file or directory")
        if p.is_dir():
            base, names, prefix = (
                p,
                None,
                "" if str(p) in (".", "./") else p.as_posix().rstrip("/") + "/",
            )
        else:
            base, names = p.parent, [p.name]
            parent = p.parent.as_posix()
            prefix = "" if parent in (".", "") else parent.rstrip("/") + "/"
        rm = RepoMap(base, plugins=plugins, use_cache=not no_cache)
        entries, diags, _ = rm.collect(names)
        if names is None and not entries:
            diags.append(
                Diagnostic("no_files_matched", f"no files found under {p}", severity="error")
            )
        try:
            extractions = rm.extract(entries, full=True)
        finally:
            rm.close()
        yield prefix, entries, extractions, diags


def _emit_records(
    paths: Sequence[Path], fmt: str, plugins: PluginOptions, no_cache: bool, what: str
) -> None:
    """Print the records; exit 0 when some file was extracted (files without a backend are
    diagnostics, not failures), 1 when none could be or a plugin failed on a file (crash,
    time-out, invalid output), 2 for bad input."""
    from .repomap import summarise

    _hold_warnings()

    handled = total = 0
    diagnostics: list[Diagnostic] = []
    failed = False
    try:
        for prefix, entries, extractions, diags in _extract_paths(paths, plugins, no_cache):
            for entry in entries:
                ex = extractions.get(entry.path)
                if ex is None:
                    continue
                total += 1
                handled += ex.plugin is not None
                failed = failed or (
                    ex.plugin is None and any(d.code in _FAULT_CODES for d in ex.diagnostics)
                )
                records = ex.tags if what == "tags" else ex.imports
                for rec in records:
                    d = rec.to_dict()
                    d["path"] = prefix + d["path"]
                    d["plugin"] = ex.plugin
                    if fmt == "json":
                        click.echo(json.dumps(d, ensure_ascii=False))
                    elif what == "tags":
                        scope = f"{d['scope']}." if d["scope"] else ""
                        click.echo(
                            f"{d['path']}:{d['line']}-{d['end_line']}\t{d['kind']}\t{d['symbol_kind']}\t{scope}{d['name']}"
                        )
                    else:
                        names = ",".join(d["names"])
                        click.echo(
                            f"{d['path']}:{d['line']}\t{'.' * d['level']}{d['source']}\t{names}"
                        )
                diagnostics.extend(
                    replace(diag, path=prefix + (diag.path or entry.path))
                    for diag in ex.diagnostics
                )
            diagnostics.extend(replace(d, path=prefix + d.path) if d.path else d for d in diags)
            failed = failed or any(d.severity == "error" for d in diags)
    except (DiscoveryError, GlobError) as exc:
        _fail(str(exc))
    for line in _summary(summarise(diagnostics), everything=handled == 0):
        _err(line)
    if handled < total:
        line = (
            f"{what} from {handled} of {total} files; {total - handled} without a backend or failed"
        )
        _err(line + ("" if _VERBOSE[0] or handled == 0 else "; -v for the list"))
    if failed or handled == 0:
        sys.exit(EXIT_NOTHING_MAPPED)


@main.command("tags")
@verbose_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the tag cache.")
@timeout_option
@plugin_options
def tags_command(paths: tuple[Path, ...], fmt: str, no_cache: bool, plugins: PluginOptions) -> None:
    """Print the definitions and references in PATHS (files or directories), one per line."""
    _emit_records(paths, fmt, plugins, no_cache, "tags")


@main.command("imports")
@verbose_option
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path, readable=False))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the tag cache.")
@timeout_option
@plugin_options
def imports_command(
    paths: tuple[Path, ...], fmt: str, no_cache: bool, plugins: PluginOptions
) -> None:
    """Print the imports in PATHS (files or directories), one per line."""
    _emit_records(paths, fmt, plugins, no_cache, "imports")


@main.command("plugins")
@verbose_option
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
@plugin_options
def plugins_command(fmt: str, plugins: PluginOptions) -> None:
    """List the installed backends: languages, extensions, capabilities, availability."""
    ps = plugins.plugin_set()
    rows = [(i, "") for i in ps.infos.values()]
    # the Python backends not selected are installed too: list them, marked, so every backend shows
    for key, name in sorted(PYTHON_BACKENDS.items()):
        if key == plugins.python_backend or name in plugins.block:
            continue
        other = _plugin_set(key, True, plugins.block).infos.get(name)
        if other is not None:
            rows.append((other, f"not selected; use --python-backend {key}"))
    if fmt == "json":
        listed = [{**i.to_dict(), "selected": not note} for i, note in rows]
        click.echo(
            json.dumps(
                {
                    "plugins": listed,
                    "load_errors": [{"plugin": n, "error": e} for n, e in ps.load_errors],
                }
            )
        )
        return
    for i, note in rows:
        status = note or ("available" if i.available else "UNAVAILABLE")
        click.echo(f"{i.name} {i.version} [{status}]")
        if i.description:
            click.echo(f"  {i.description}")
        langs = (
            ", ".join(i.languages)
            if len(i.languages) <= 12
            else f"{', '.join(i.languages[:12])}, ... ({len(i.languages)} languages)"
        )
        click.echo(f"  languages:    {langs or '-'}")
        exts = (
            ", ".join(i.extensions)
            if len(i.extensions) <= 16
            else f"{', '.join(i.extensions[:16])}, ... ({len(i.extensions)})"
        )
        click.echo(f"  extensions:   {exts or '-'}")
        click.echo(f"  capabilities: {', '.join(i.capabilities) or '-'}")
        if i.detail:
            click.echo(f"  detail:       {i.detail}")
    for name, err in ps.load_errors:
        click.echo(f"{name} [FAILED TO LOAD]: {err}")


@main.command("mcp")
@verbose_option
@click.argument("root", required=False, type=click.Path(path_type=Path, readable=False))
@click.option(
    "--no-watch", is_flag=True, help="Do not watch the tree; re-list it on every call instead."
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the tag cache.")
@click.option(
    "--cache-dir",
    type=click.Path(path_type=Path, readable=False),
    help="Where the tag cache lives.",
)
@click.option(
    "--python-backend", type=click.Choice(sorted(PYTHON_BACKENDS)), default="ast", show_default=True
)
@gitignore_option
def mcp_command(
    root: Path | None,
    no_watch: bool,
    no_cache: bool,
    cache_dir: Path | None,
    python_backend: str,
    gitignore: bool | None,
) -> None:
    """Serve the repomapper tools over MCP (stdio). With ROOT, clone_path is optional and
    refused outside ROOT; without it, every call names its repository. Needs the mcp extra."""
    from .serve.paths import ToolError
    from .serve.server import MissingSDK, serve_stdio

    if _HANDLER.level > logging.WARNING:
        _HANDLER.setLevel(logging.WARNING)  # a client keeps the server's stderr as its log
    from .serve.service import Service, ServiceOptions

    options = ServiceOptions(
        cache_dir=str(cache_dir) if cache_dir else None,
        use_cache=not no_cache,
        python_backend=python_backend,
        watch=not no_watch,
        gitignore=gitignore,
    )
    from .gcpolicy import tune_for_long_lived

    tune_for_long_lived()  # (the server answers call after call)
    try:
        service = Service(root, options)
        serve_stdio(service)
    except ToolError as exc:
        _fail(f"ROOT: {exc.message}")
    except MissingSDK as exc:
        _fail(str(exc), EXIT_NOTHING_MAPPED)


@main.command("graph")
@verbose_option
@click.argument("root", default=".", type=click.Path(path_type=Path, readable=False))
@task_options("A task description: ranks as `map --task` does; the page shows why files rank.")
@click.option(
    "--chat",
    multiple=True,
    metavar="FILE",
    help="A file in the chat (as for `map`; relative to here).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "dot", "graphml", "json"]),
    default="html",
    show_default=True,
    help="html: a self-contained explorer page; dot, graphml, json (node-link): for Graphviz, Gephi, notebooks.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(path_type=Path, readable=False, dir_okay=False),
    help="Write here instead of standard output.",
)
@click.option(
    "--max-nodes",
    default=2000,
    show_default=True,
    type=int,
    help="Above this many files, exports keep the top-ranked files (or group by directory) and the page opens grouped; 0: no limit.",
)
@click.option(
    "--group-by", type=click.Choice(["file", "directory"]), default="file", show_default=True
)
@click.option(
    "--tokens",
    "-t",
    "budgets",
    multiple=True,
    type=int,
    metavar="N",
    help="Highlight the files the map at this budget includes (repeatable; default 1024).",
)
@repository_options
@plugin_options
def graph_command(
    root: Path,
    task: str | None,
    task_file: str | None,
    chat: Sequence[str],
    fmt: str,
    output: Path | None,
    max_nodes: int,
    group_by: str,
    budgets: tuple[int, ...],
    repo: RepositoryOptions,
    plugins: PluginOptions,
) -> None:
    """Write the ranked file graph of ROOT: an explorer page, or DOT, GraphML or JSON."""
    from .graphview import GraphLibraryMissing, write_graph

    _hold_warnings()
    from .repomap import RepoMap

    budgets = tuple(budgets) or (1024,)
    _check_numbers(tokens=(min(budgets), 1), max_nodes=(max_nodes, 0), jobs=(repo.jobs, 1))
    jobs = _cap_jobs(repo.jobs)
    chat = _from_cwd(chat)
    progress = StderrProgress("graph")
    rm = None
    try:
        rm = RepoMap(
            root,
            budgets[0],
            cache_dir=repo.cache_dir,
            use_cache=not repo.no_cache,
            include=repo.include,
            exclude=repo.exclude,
            jobs=jobs,
            progress=progress,
            plugins=plugins.plugin_set(),
            gitignore=repo.gitignore,
        )
        task = _task_text(task, task_file)
        result = write_graph(
            rm,
            fmt,
            task=task,
            chat_files=chat,
            budgets=budgets,
            group_by=group_by,
            max_nodes=max_nodes,
        )
    except GraphLibraryMissing as exc:
        _fail(str(exc), EXIT_NOTHING_MAPPED)
    except (DiscoveryError, GlobError, ValueError) as exc:
        _fail(str(exc))
    finally:
        progress.close()
        if rm is not None:
            rm.close()
    for line in result.diagnostics:
        _err(line)
    if not result.files:
        _fail(
            "no file could be mapped, so there is no graph (see the diagnostics above)",
            EXIT_NOTHING_MAPPED,
        )
    if result.note:
        click.echo(f"repomapper: note: {result.note}", err=True)
    if output is None:
        click.echo(result.text, nl=not result.text.endswith("\n"))
        return
    try:
        output.write_text(result.text, encoding="utf-8")
    except OSError as exc:
        _fail(f"cannot write {output}: {exc}")
    click.echo(
        f"repomapper: wrote {output} ({len(result.text.encode('utf-8'))} bytes, {result.files} files, "
        f"{result.edges} edges{', replayed from the cache' if result.replayed else ''})",
        err=True,
    )


@main.command("pack")
@verbose_option
@click.argument("root", type=click.Path(path_type=Path))
@click.option("--task-id", required=True, metavar="ID", help="The task id: the pack's file name.")
@task_options("The task description.")
@click.option(
    "--target", "targets", multiple=True, metavar="FILE", help="A file the task is about."
)
@click.option(
    "--role",
    type=click.Choice(["coding", "reviewing", "planning", "testing", "debugging"]),
    default="coding",
    show_default=True,
)
@click.option(
    "--budget",
    type=int,
    default=None,
    help="Token budget (default: DEFAULT_TOKEN_BUDGET or 100000).",
)
@click.option(
    "--output",
    type=click.Path(path_type=Path, file_okay=False),
    metavar="DIR",
    help="Also write the pack to DIR/<task_id>.json (default: CONTEXT_PACK_DIR when set, else "
    "no file: the pack goes to stdout only).",
)
@click.option(
    "--format", "fmt", type=click.Choice(["json", "markdown"]), default="json", show_default=True
)
@click.option("--no-cache", is_flag=True, help="Do not read or write the tag cache.")
def pack_command(
    root: Path,
    task_id: str,
    task: str | None,
    task_file: str | None,
    targets: tuple[str, ...],
    role: str,
    budget: int | None,
    output: Path | None,
    fmt: str,
    no_cache: bool,
) -> None:
    """Print the context pack of a task for ROOT; with --output DIR also write DIR/<task_id>.json.

    Nothing is written into ROOT unless DIR (or CONTEXT_PACK_DIR) is there; the pack is selected
    from the repository state kept in the tag cache.
    """
    from .pack import PackError, RepoMapper, check_task_id, render_markdown
    from .pack.store import dumps

    try:
        check_task_id(task_id)
    except PackError as exc:
        _fail(str(exc))
    if task is None and task_file is None:
        _fail("give the task with --task TEXT or --task-file FILE")
    task = _task_text(task, task_file)
    assert task is not None  # --task, or --task-file read (one of them is given: checked above)
    if budget is not None and budget < 1:
        _fail(f"--budget must be at least 1 (got {budget})")
    mapper = None
    try:
        # a relative DIR is taken from the current directory, as any path on a command line
        pack_dir = output.absolute() if output is not None else None
        mapper = RepoMapper(root, pack_dir=pack_dir, use_cache=not no_cache)
        pack = mapper.generate_context_pack_sync(task_id, task, list(targets), role, budget)
    except (DiscoveryError, GlobError, PackError, ValueError) as exc:
        _fail(str(exc))
    except OSError as exc:
        _fail(f"cannot write the pack: {exc}", EXIT_NOTHING_MAPPED)
    finally:
        if mapper is not None:
            mapper.close()
    for line in _summary(pack.diagnostics):
        click.echo(f"repomapper: {line}", err=True)
    text = dumps(pack.to_dict()) if fmt == "json" else render_markdown(pack)
    click.echo(text, nl=False)
    if not pack.files:
        sys.exit(EXIT_NOTHING_MAPPED)


@main.command(
    "conformance",
    context_settings={
        "ignore_unknown_options": True,
        "allow_extra_args": True,
        "help_option_names": [],
    },
    add_help_option=False,
)
@click.pass_context
def conformance_command(ctx: click.Context) -> None:
    """Check plugins against the shared fixtures and properties (see --help)."""
    # imported on use: the suite pulls in hypothesis, which a map run should not pay for
    from .conformance.cli import conformance_command as real

    # invoked in this process's click run, not a second one (its own main would turn Ctrl-C
    # into "Aborted!" and exit 1): usage errors, exit codes and Ctrl-C are handled as for
    # every other command
    with real.make_context("conformance", list(ctx.args), parent=ctx.parent) as sub:
        real.invoke(sub)


main.add_command(__import__("repomapper.cachecmd", fromlist=["cache"]).cache)


main.add_command(index_group)


def run() -> None:
    """The ``repomapper`` command as installed: :func:`main` in a process whose garbage collector
    suits a run over many long-lived objects (see :mod:`repomapper.gcpolicy`)."""
    from .gcpolicy import tune_for_repomapper

    tune_for_repomapper()
    main()


if __name__ == "__main__":  # pragma: no cover
    run()
