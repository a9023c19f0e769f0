"""Which files to map: git's view of the work tree, or a walk with .gitignore rules.

Discovery only lists and stats; content checks (binary, minified) happen when a file is read for
extraction, so a warm run never opens unchanged files.
"""

from __future__ import annotations

import logging
import os
import re
import stat
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from .model import Diagnostic

if TYPE_CHECKING:
    import pathspec

log = logging.getLogger(__name__)

DEFAULT_MAX_FILE_SIZE = 1_000_000
#: Directories never worth mapping when walking outside git (inside git, git's rules decide).
DEFAULT_SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "__pycache__",
        "node_modules",
        ".tox",
        ".nox",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".hypothesis",
        ".eggs",
    }
)
MAX_GLOB_LENGTH = 1000
GIT_TIMEOUT = 60
#: git with the repository's own configuration unable to run anything (no fsmonitor hook).
GIT = (
    "git",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.quotepath=off",
)


class DiscoveryError(Exception):
    """The root cannot be mapped at all (missing, not a directory, unreadable)."""


class GlobError(ValueError):
    """An --include/--exclude pattern is not a valid glob."""


class FileEntry(NamedTuple):
    """A file to map: its path and the stat that stands for its content until it is read. A
    named tuple: every entry is a dict key several times over per map (its hash in C: a
    dataclass's cost 0.1 s on the Linux kernel's 78,000 files per run)."""

    path: str  # relative, forward slashes
    size: int
    mtime_ns: int


@dataclass(frozen=True, slots=True)
class Discovery:
    root: Path
    files: tuple[FileEntry, ...]
    diagnostics: tuple[Diagnostic, ...]
    source: str  # "git" or "walk"
    seen: int  # files listed before include/exclude and size filters


def compile_globs(patterns: Sequence[str], what: str) -> pathspec.GitIgnoreSpec | None:
    """Compile gitignore-style globs (``*.py``, ``src/**``, ``**/*.go``); reject hostile input."""
    cleaned = [p.strip() for p in patterns if p and p.strip()]
    if not cleaned:
        return None
    for p in cleaned:
        if len(p) > MAX_GLOB_LENGTH:
            raise GlobError(
                f"{what} pattern is too long ({len(p)} characters, limit {MAX_GLOB_LENGTH})"
            )
        if any(ord(c) < 32 for c in p):
            raise GlobError(f"{what} pattern {p!r} contains control characters")
    import pathspec  # (only for globs: a map of a git work tree without any never imports it)

    try:
        return pathspec.GitIgnoreSpec.from_lines(cleaned)
    except Exception as exc:  # pathspec raises its own error types and re.error
        raise GlobError(f"invalid {what} pattern: {exc}") from exc


_CONTROL = re.compile("[\x00-\x1f\x7f]")


def unsafe_name(rel: str) -> str | None:
    """Why a file name cannot be carried safely through maps, JSON and the cache, or None.

    Names that are not valid UTF-8 (decoded with surrogate escapes) or that contain control
    characters such as a newline would corrupt line-oriented output.
    """
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8"
    if _CONTROL.search(rel):
        return "contains control characters"
    return None


def printable_name(rel: str) -> str:
    """A file name safe to print on one line: invalid bytes as ``\\xff``, controls escaped."""
    text = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def stat_entry(root: Path, rel: str, max_file_size: int) -> FileEntry | Diagnostic | None:
    """The entry for ``rel`` under ``root``, a diagnostic saying why it is skipped (unsafe name,
    symlink out of the root, unreadable, too large), or None when there is no regular file there
    (deleted since it was listed, a dangling link, a directory or a device)."""
    problem = unsafe_name(rel)
    if problem:
        return Diagnostic("unsafe_path", f"file name {problem}; skipped", printable_name(rel))
    full = os.path.join(str(root), rel)
    try:
        st = os.lstat(full)
        if stat.S_ISLNK(st.st_mode):
            target = Path(full).resolve()
            if not _inside(target, root):
                return Diagnostic(
                    "symlink_outside_root", "symlink leads outside the repository; skipped", rel
                )
            st = target.stat()
    except FileNotFoundError:
        return None
    except (OSError, RuntimeError) as exc:  # RuntimeError: symlink loop
        return Diagnostic("unreadable", f"cannot stat: {exc}", rel)
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size > max_file_size:
        return Diagnostic(
            "too_large",
            f"{st.st_size} bytes is over the {max_file_size}-byte limit; skipped",
            rel,
            "info",
        )
    return FileEntry(rel, st.st_size, st.st_mtime_ns)


def check_root(root: Path) -> Path:
    """Resolve and validate the root, with a one-line reason when it cannot be used."""
    shown = printable_name(str(root))
    try:
        if not root.exists():
            raise DiscoveryError(f"{shown}: no such directory")
        if not root.is_dir():
            raise DiscoveryError(f"{shown}: not a directory")
        if not os.access(root, os.R_OK | os.X_OK):
            raise DiscoveryError(f"{shown}: permission denied (cannot list it)")
        return root.resolve(strict=True)
    except OSError as exc:  # the current directory was deleted, a symlink loop, ...
        raise DiscoveryError(f"{shown}: cannot be used: {exc.strerror or exc}") from exc


#: git's warning for a folder it cannot list (LC_ALL=C keeps it in English)
_GIT_UNREADABLE = re.compile(r"^warning: could not open directory '(.*)': (.*)$")


def unreadable_dir(rel: str, why: str) -> Diagnostic:
    """The diagnostic for a folder that cannot be listed: its files are not mapped."""
    rel = rel.rstrip("/") + "/"
    return Diagnostic(
        "unreadable", f"cannot list this folder ({why}); its files are not mapped", rel
    )


def _git_unreadable(stderr: bytes) -> list[Diagnostic]:
    out = []
    for line in stderr.decode("utf-8", "surrogateescape").splitlines():
        m = _GIT_UNREADABLE.match(line.strip())
        if m:
            out.append(unreadable_dir(printable_name(m.group(1)), m.group(2)))
    return out


def _git_files(root: Path, diags: list[Diagnostic] | None = None) -> list[str] | None:
    """Tracked plus untracked-but-not-ignored files, relative to ``root``; None outside git.
    Folders git cannot list are added to ``diags``.

    The repository's own configuration must not run anything: fsmonitor hooks are disabled.
    """
    cmd = [*GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    try:
        proc = subprocess.run(
            cmd,
            cwd=root,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={
                **os.environ,
                "GIT_OPTIONAL_LOCKS": "0",
                "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C",
            },
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("git unavailable: %s", exc)
        return None
    if proc.returncode != 0:
        return None
    if diags is not None:
        diags.extend(_git_unreadable(proc.stderr))
    names = [n.decode("utf-8", "surrogateescape") for n in proc.stdout.split(b"\0") if n]
    if not names and _ignored_by_enclosing_repo(root):
        return None  # the root lies in an ignored folder of some repository: walk it instead
    return sorted(set(names))  # a conflicted file is listed once per stage


def _ignored_by_enclosing_repo(root: Path) -> bool:
    try:
        proc = subprocess.run(
            [*GIT, "check-ignore", "-q", "."],
            cwd=root,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _walk_files(root: Path, diags: list[Diagnostic] | None = None) -> list[str]:
    """Every file under root, honouring .gitignore files at every level (git's semantics).
    Folders that cannot be listed are added to ``diags``."""
    found: list[str] = []

    def unlistable(exc: OSError) -> None:
        where = os.path.relpath(exc.filename, root) if exc.filename else "."
        rel = "." if where == "." else where.replace(os.sep, "/")
        if diags is not None:
            diags.append(unreadable_dir(printable_name(rel), exc.strerror or str(exc)))

    specs: list[
        tuple[str, pathspec.GitIgnoreSpec]
    ] = []  # (dir prefix, spec) along the current path

    def ignored(rel: str, is_dir: bool) -> bool:
        # the deepest .gitignore with a matching rule decides, as in git
        probe = rel + "/" if is_dir else rel
        for prefix, spec in reversed(specs):
            if prefix and not probe.startswith(prefix):
                continue
            decision = spec.check_file(probe[len(prefix) :]).include
            if decision is not None:
                return decision
        return False

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        rel_dir = "" if rel_dir == "." else rel_dir
        prefix = f"{rel_dir}/" if rel_dir else ""
        specs[:] = [(p, s) for p, s in specs if prefix.startswith(p)]
        gi = Path(dirpath, ".gitignore")
        if gi.is_file() and not gi.is_symlink():
            try:
                lines = gi.read_text("utf-8", errors="replace").splitlines()
                import pathspec

                specs.append((prefix, pathspec.GitIgnoreSpec.from_lines(lines)))
            except (OSError, ValueError) as exc:
                log.warning("%s: cannot use: %s", gi, exc)
        dirnames[:] = sorted(
            d for d in dirnames if d not in DEFAULT_SKIP_DIRS and not ignored(prefix + d, True)
        )
        for name in sorted(filenames):
            rel = prefix + name
            if not ignored(rel, False):
                found.append(rel)
    return found


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
        return True
    except ValueError:
        return False


def discover(
    root: Path,
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    max_file_size: int = DEFAULT_MAX_FILE_SIZE,
    use_git: bool = True,
) -> Discovery:
    """List the files to map under ``root``, with a diagnostic for each one skipped."""
    root = check_root(root)
    include_spec = compile_globs(include, "--include")
    exclude_spec = compile_globs(exclude, "--exclude")
    diags: list[Diagnostic] = []
    names = _git_files(root, diags) if use_git else None
    source = "git" if names is not None else "walk"
    if names is None:
        names = _walk_files(root, diags)
    entries: list[FileEntry] = []
    for rel in names:
        if include_spec is not None and not include_spec.match_file(rel):
            continue
        if exclude_spec is not None and exclude_spec.match_file(rel):
            continue
        found = stat_entry(root, rel, max_file_size)
        if isinstance(found, FileEntry):
            entries.append(found)
        elif found is not None:
            diags.append(found)
    return Discovery(root, tuple(entries), tuple(diags), source, len(names))
