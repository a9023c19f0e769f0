"""Which files to map: git's view of the work tree, or a walk, following the convention of git,
ripgrep and fd (see ``discover``); and what was left out, by which rule, in counts.

Discovery only lists and stats; content checks (binary, minified) happen when a file is read for
extraction, so a warm run never opens unchanged files.
"""

from __future__ import annotations

import logging
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .cachetag import TAG_NAME, is_tag
from .fileentry import FileEntry as FileEntry  # re-exported: where callers found it
from .gitcmd import run_git
from .ignores import (
    GIT_EXCLUDE,
    GITIGNORE,
    IGNORE_FILES,
    IgnoreFile,
    ListingFilter,
    Rule,
    decide,
    read_ignore_file,
)
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
#: version control folders: never listed, and not reported as left out (git does not list them)
VCS_DIRS = frozenset({".git", ".hg", ".svn"})
#: counting the files of a folder an ignore rule leaves out stops past this many (the rule was
#: written or asked for: worth an exact count, up to a kernel tree's largest folder) ...
IGNORED_COUNT_LIMIT = 50_000
#: ... of a DEFAULT_SKIP_DIRS folder (node_modules, .venv) past this many, as it is counted on the
#: default path of every walk ...
SKIPPED_COUNT_LIMIT = 10_000
#: ... and of all folders past this many in one listing: a huge left-out folder costs a bounded walk
IGNORED_COUNT_BUDGET = 100_000
#: ignore rules reported one by one (the ones that left out the most); the rest are merged
MAX_RULES = 10
#: example paths kept per reason or rule
SAMPLE_PATHS = 3
#: left-out groups named in one message
MAX_PARTS = 5
MAX_GLOB_LENGTH = 1000


class DiscoveryError(Exception):
    """The root cannot be mapped at all (missing, not a directory, unreadable)."""


class GlobError(ValueError):
    """An --include/--exclude pattern is not a valid glob; ``what`` names the option
    (``--include`` or ``--exclude``) so each surface can name its own field."""

    def __init__(self, message: str, what: str = "") -> None:
        super().__init__(message)
        self.what = what


#: why a file was left out (``LeftOut.reason``), and what ``LeftOut.source`` then holds
LEFT_OUT_REASONS = {
    "ignored": "an ignore file's rule: source is 'path:line', pattern the rule",
    "skipped_folder": (
        "a folder never listed: one of DEFAULT_SKIP_DIRS in a walk (source 'built-in'), or "
        "one tagged as a cache by a CACHEDIR.TAG file (source 'CACHEDIR.TAG')"
    ),
    "not_included": "matched by no include glob: source 'include', pattern the globs",
    "excluded": "matched by an exclude glob: source 'exclude', pattern the glob",
    "too_large": "over the size limit: source 'max_file_size'",
    "outside_root": "a symlink leading out of the root",
    "unsafe_name": "a name not valid UTF-8 or with control characters",
    "unreadable": "a file that cannot be stat'ed",
    "unreadable_folder": "a folder that cannot be listed (count is folders, not files)",
}


@dataclass(frozen=True, slots=True)
class LeftOut:
    """Files a listing left out for one reason (and one rule, for ignore files)."""

    reason: str  # a key of LEFT_OUT_REASONS
    source: str  # "pkg/.gitignore:12", "include", "exclude", "built-in", or ""
    pattern: str  # the rule or glob ("/*", "node_modules"), or ""
    count: int  # files (folders for unreadable_folder)
    sample: tuple[str, ...]  # up to SAMPLE_PATHS of them, printable; a folder ends with "/"
    at_least: bool = False  # counting stopped in a large folder: count is a lower bound


@dataclass(frozen=True, slots=True)
class Discovery:
    root: Path
    files: tuple[FileEntry, ...]
    diagnostics: tuple[Diagnostic, ...]
    source: str  # "git" or "walk"
    seen: int  # files listed before include/exclude and size filters
    left_out: tuple[LeftOut, ...] = ()  # largest first (a merged remainder of rules last)
    ignore_files: tuple[str, ...] = ()  # the kinds of ignore file honoured (".gitignore", ...)
    #: folders left out because a CACHEDIR.TAG marks them as caches ("a/b/"): their files
    #: change as the cache is used, which says nothing about the listing
    cache_folders: tuple[str, ...] = ()


def compile_globs(patterns: Sequence[str], what: str) -> pathspec.GitIgnoreSpec | None:
    """Compile gitignore-style globs (``*.py``, ``src/**``, ``**/*.go``); reject hostile input."""
    cleaned = _cleaned(patterns)
    if not cleaned:
        return None
    for p in cleaned:
        if len(p) > MAX_GLOB_LENGTH:
            raise GlobError(
                f"{what} pattern is too long ({len(p)} characters, limit {MAX_GLOB_LENGTH})",
                what,
            )
        if any(ord(c) < 32 for c in p):
            raise GlobError(f"{what} pattern {p!r} contains control characters", what)
    import pathspec  # (only for globs: a map of a git work tree without any never imports it)

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(cleaned)
    except Exception as exc:  # pathspec raises its own error types and re.error
        raise GlobError(f"invalid {what} pattern: {exc}", what) from exc
    # pathspec compiles a pattern it cannot read (an unclosed '[', '[]', a lone '/', a
    # '#' comment) to a rule that matches nothing, without a word: an --exclude that
    # excludes nothing, an --include that includes nothing. Such a pattern is refused.
    for p, compiled in zip(cleaned, spec.patterns, strict=True):
        if compiled.include is None:
            raise GlobError(f"invalid {what} pattern {p!r}: {_unreadable(p)}", what)
    return spec


@dataclass(frozen=True)
class GlobFilter:
    """The include and exclude globs of one listing, compiled once: the one place that decides
    whether a listed file is selected, for a discovery and for a kept listing alike."""

    include: pathspec.GitIgnoreSpec | None = None
    exclude: pathspec.GitIgnoreSpec | None = None
    #: the include globs as a left-out group names them
    include_text: str = ""

    @classmethod
    def compile(cls, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> GlobFilter:
        """Both lists compiled (:func:`compile_globs`; a bad glob raises :class:`GlobError`)."""
        return cls(
            compile_globs(include, "--include"),
            compile_globs(exclude, "--exclude"),
            ", ".join(_cleaned(include)),
        )

    @property
    def selects_all(self) -> bool:
        return self.include is None and self.exclude is None

    def left_out_by(self, rel: str) -> tuple[str, str, str] | None:
        """Why the globs leave ``rel`` out, as (reason, source, pattern), or None if selected."""
        if self.include is not None and not self.include.match_file(rel):
            return "not_included", "include", self.include_text
        if self.exclude is not None:
            hit = self.exclude.check_file(rel)
            if hit.include:
                return "excluded", "exclude", _pattern(self.exclude, hit.index)
        return None

    def selected(self, rel: str) -> bool:
        return self.left_out_by(rel) is None


def _unreadable(pattern: str) -> str:
    """Why pathspec reads ``pattern`` as no rule at all, in words."""
    if pattern.startswith("#"):
        return "a '#' starts a comment in gitignore syntax (write '\\#' for the character)"
    if pattern.count("[") > pattern.count("]"):
        return "it has an unclosed '['"
    if "[]" in pattern:
        return "it has an empty character class '[]'"
    return "it is not a glob pathspec can read (it would match nothing)"


def _cleaned(patterns: Sequence[str]) -> list[str]:
    return [p.strip() for p in patterns if p and p.strip()]


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
    return FileEntry(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


#: names checked at once for what needs :func:`stat_entry`'s closer look
_BATCH = 4096


def _plain(rels: Sequence[str]) -> bool:
    """No name of ``rels`` needs a closer look: all ASCII, no control character, none absolute.
    One check of the batch joined (a name holding " /" only sends its batch the slow way)."""
    joined = " ".join(rels)
    return (
        joined.isascii()
        and not _CONTROL.search(joined)
        and not joined.startswith("/")
        and (" /" not in joined)
    )


def stat_listing(
    root: Path, rels: Sequence[str], max_file_size: int
) -> tuple[list[FileEntry], list[Diagnostic]]:
    """The entries of ``rels`` that are files to map, in order, and a diagnostic for each one
    skipped (:func:`stat_entry`). A safe name of a regular file within the size limit takes
    one ``lstat`` and no other call: a large tree lists every file on every map, so names are
    checked a batch at a time and the per-file loop does nothing else."""
    entries: list[FileEntry] = []
    diags: list[Diagnostic] = []
    keep = entries.append

    def closer(rel: str) -> None:
        found = stat_entry(root, rel, max_file_size)
        if isinstance(found, FileEntry):
            keep(found)
        elif found is not None:
            diags.append(found)

    with RootFolder(root) as (folder, prefix):
        lstat, regular, entry = os.lstat, stat.S_ISREG, FileEntry
        for start in range(0, len(rels), _BATCH):
            batch = rels[start : start + _BATCH]
            if not _plain(batch):
                for rel in batch:
                    closer(rel)
                continue
            for rel in batch:
                try:
                    st = lstat(prefix + rel, dir_fd=folder)
                except OSError:
                    closer(rel)
                    continue
                if regular(st.st_mode) and st.st_size <= max_file_size:
                    keep(entry(rel, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
                else:
                    closer(rel)
    return entries, diags


class RootFolder:
    """The root opened as a folder, and the prefix of a name under it: names are then looked up
    from the open folder (the kernel walks only their own parts: a large tree lists every
    file on every map); where ``lstat`` takes no folder, None and the root's path."""

    def __init__(self, root: Path):
        self._root = root
        self._fd: int | None = None

    def __enter__(self) -> tuple[int | None, str]:
        if os.stat in os.supports_dir_fd:  # (lstat is stat without following links)
            try:
                self._fd = os.open(self._root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
                return self._fd, ""
            except OSError:
                self._fd = None
        return None, os.path.join(str(self._root), "")

    def __exit__(self, *exc: object) -> None:
        if self._fd is not None:
            os.close(self._fd)


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


class _GitListing(NamedTuple):
    names: list[str] | None  # None: not listed by git
    ignored_root: bool  # the root lies in a folder its enclosing repository ignores


def _git_listing(root: Path, diags: list[Diagnostic]) -> _GitListing:
    """Tracked plus untracked-but-not-ignored files, relative to ``root``; names None outside git.
    Folders git cannot list are added to ``diags``."""
    proc = run_git(root, ["ls-files", "-z", "--cached", "--others", "--exclude-standard"])
    if proc is None or proc.returncode != 0:
        return _GitListing(None, False)
    diags.extend(_git_unreadable(proc.stderr))
    names = [n.decode("utf-8", "surrogateescape") for n in proc.stdout.split(b"\0") if n]
    if not names and _ignored_by_enclosing_repo(root):
        return _GitListing(None, True)  # walk it instead
    return _GitListing(sorted(set(names)), False)  # a conflicted file is listed once per stage


def _ignored_by_enclosing_repo(root: Path) -> bool:
    """The root is a folder below the top of a work tree that git ignores (the top of a work
    tree is never ignored, even by a ``*`` rule that leaves out all of its files)."""
    prefix = run_git(root, ["rev-parse", "--show-prefix"])
    if prefix is None or prefix.returncode != 0 or not prefix.stdout.strip():
        return False
    proc = run_git(root, ["check-ignore", "-q", "."])
    return proc is not None and proc.returncode == 0


def _in_work_tree(root: Path) -> bool:
    """A ``.git`` at the root or above it (for when git itself cannot answer: not installed, or
    it refuses a repository another user owns)."""
    return any((d / ".git").exists() for d in (root, *root.parents))


def count_files(path: str, limit: int) -> tuple[int, bool]:
    """Files under the folder ``path`` (symlinks counted, not followed), and whether counting
    stopped at ``limit``: a huge ignored folder must not make listing slow."""
    if os.path.islink(path):  # a symlinked folder is one entry, as git lists it
        return 1, False
    pending, n = [path], 0
    while pending:
        try:
            it = os.scandir(pending.pop())
        except OSError:
            continue
        with it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        pending.append(e.path)
                        continue
                except OSError:
                    continue
                n += 1
                if n >= limit:
                    return n, True
    return n, False


class _Tally:
    """What a listing left out, grouped by reason and rule, in the order met."""

    def __init__(self, root: Path) -> None:
        self.root = str(root)
        self.budget = IGNORED_COUNT_BUDGET
        self._groups: dict[tuple[str, str, str], list[Any]] = {}

    def add(
        self, reason: str, source: str, pattern: str, path: str, n: int = 1, at_least: bool = False
    ) -> None:
        group = self._groups.setdefault((reason, source, pattern), [0, [], False])
        group[0] += n
        if len(group[1]) < SAMPLE_PATHS:
            group[1].append(printable_name(path))
        group[2] = group[2] or at_least

    def folder(self, reason: str, source: str, pattern: str, rel: str) -> None:
        """A folder left out whole: its files are counted, up to the listing's budget."""
        if self.budget > 0:
            limit = SKIPPED_COUNT_LIMIT if reason == "skipped_folder" else IGNORED_COUNT_LIMIT
            n, stopped = count_files(os.path.join(self.root, rel), min(limit, self.budget))
            self.budget -= n
        else:
            n, stopped = 0, True
        self.add(reason, source, pattern, rel.rstrip("/") + "/", n, stopped)

    def rule(self, reason: str, rule: Rule, path: str) -> None:
        self.add(reason, rule.where, rule.pattern, path)

    def diagnostic(self, d: Diagnostic) -> None:
        reason = _DIAGNOSTIC_REASONS.get(d.code)
        if reason is not None:
            folder = d.code == "unreadable" and (d.path or "").endswith("/")
            self.add("unreadable_folder" if folder else reason, "", "", d.path or ".")

    def left_out(self) -> tuple[LeftOut, ...]:
        """Largest first; ignore rules past the ``MAX_RULES`` largest merged into a last entry."""
        out = [
            LeftOut(reason, source, pattern, n, tuple(sample), at_least)
            for (reason, source, pattern), (n, sample, at_least) in self._groups.items()
        ]
        out.sort(key=lambda x: (-x.count, x.reason, x.source, x.pattern))
        rules = [x for x in out if x.reason == "ignored"]
        if len(rules) > MAX_RULES:
            rest = rules[MAX_RULES:]
            out = [x for x in out if x.reason != "ignored" or x in rules[:MAX_RULES]]
            sample = tuple(p for x in rest for p in x.sample)[:SAMPLE_PATHS]
            merged = LeftOut(
                "ignored",
                f"{len(rest)} other rules",
                "",
                sum(x.count for x in rest),
                sample,
                any(x.at_least for x in rest),
            )
            out.append(merged)  # last: a remainder, not a rule
        return tuple(out)


_DIAGNOSTIC_REASONS = {
    "too_large": "too_large",
    "symlink_outside_root": "outside_root",
    "unsafe_path": "unsafe_name",
    "unreadable": "unreadable",
}


def _walk_files(
    root: Path,
    gitignore: bool,
    diags: list[Diagnostic] | None = None,
    tally: _Tally | None = None,
    caches: list[str] | None = None,
) -> list[str]:
    """Every file under root but the ``DEFAULT_SKIP_DIRS`` folders and those tagged as caches,
    honouring ``.ignore`` and ``.repomapperignore`` files and, when ``gitignore``,
    ``.gitignore`` files and the root's ``.git/info/exclude``. What is left out goes to
    ``tally``; folders that cannot be listed to ``diags``; tagged folders to ``caches``."""
    tally = tally or _Tally(root)
    caches = [] if caches is None else caches
    found: list[str] = []

    def unlistable(exc: OSError) -> None:
        where = os.path.relpath(exc.filename, root) if exc.filename else "."
        rel = "." if where == "." else where.replace(os.sep, "/")
        if diags is not None:
            diags.append(unreadable_dir(printable_name(rel), exc.strerror or str(exc)))

    # the ignore files along the current path, per layer, shallower first
    gits: list[IgnoreFile] = []
    ours: list[IgnoreFile] = []
    if gitignore:
        exclude = read_ignore_file(root, GIT_EXCLUDE, "")
        if exclude is not None:
            gits.append(exclude)

    def rule_for(probe: str) -> Rule | None:
        return (decide(gits, probe) if gits else None) or (decide(ours, probe) if ours else None)

    for dirpath, dirnames, filenames in os.walk(root, onerror=unlistable, followlinks=False):
        rel_dir = os.path.relpath(dirpath, root).replace(os.sep, "/")
        prefix = "" if rel_dir == "." else f"{rel_dir}/"
        gits[:] = [f for f in gits if prefix.startswith(f.prefix)]
        ours[:] = [f for f in ours if prefix.startswith(f.prefix)]
        names = set(filenames)
        if prefix and TAG_NAME in names and is_tag(os.path.join(dirpath, TAG_NAME)):
            tally.folder("skipped_folder", TAG_NAME, rel_dir.rsplit("/", 1)[-1], rel_dir)
            caches.append(prefix)
            dirnames[:] = []
            continue
        if gitignore and GITIGNORE in names:
            f = read_ignore_file(root, prefix + GITIGNORE, prefix)
            if f is not None:
                gits.append(f)
        for name in IGNORE_FILES:
            if name in names:
                f = read_ignore_file(root, prefix + name, prefix)
                if f is not None:
                    ours.append(f)
        kept = []
        for d in sorted(dirnames):
            rel = prefix + d
            if d in VCS_DIRS:
                continue
            if d in DEFAULT_SKIP_DIRS:
                tally.folder("skipped_folder", "built-in", d, rel)
                continue
            rule = rule_for(rel + "/")
            if rule is not None:
                tally.folder("ignored", rule.where, rule.pattern, rel)
                continue
            kept.append(d)
        dirnames[:] = kept
        for name in sorted(filenames):
            rel = prefix + name
            rule = rule_for(rel)
            if rule is None:
                found.append(rel)
            else:
                tally.rule("ignored", rule, rel)
    return found


def _drop_cache_folders(
    root: Path, names: list[str], tally: _Tally, caches: list[str]
) -> list[str]:
    """git's listing without the folders a CACHEDIR.TAG it lists marks as caches (below the
    root: a root that is itself a cache was asked for)."""
    tail = "/" + TAG_NAME
    tagged = sorted(
        rel[: -len(TAG_NAME)]
        for rel in names
        if rel.endswith(tail) and is_tag(os.path.join(str(root), rel))
    )
    outer = [f for i, f in enumerate(tagged) if not any(f.startswith(g) for g in tagged[:i])]
    if not outer:
        return names
    caches.extend(outer)
    kept = []
    for rel in names:
        folder = next((f for f in outer if rel.startswith(f)), None)
        if folder is None:
            kept.append(rel)
        else:
            tally.add("skipped_folder", TAG_NAME, folder[:-1].rsplit("/", 1)[-1], folder)
    return kept


def _apply_ignore_files(root: Path, names: list[str], tally: _Tally) -> list[str]:
    """git's listing without what ``.ignore`` and ``.repomapperignore`` files leave out (the
    ones git lists: one git ignores is not read)."""
    wanted = frozenset(IGNORE_FILES)
    files = [
        f
        for rel in names
        if rel.endswith(IGNORE_FILES) and rel.rsplit("/", 1)[-1] in wanted
        for f in [read_ignore_file(root, rel, rel[: rel.rfind("/") + 1])]
        if f is not None
    ]
    if not files:
        return names
    rules = ListingFilter(files)
    kept = []
    for rel in names:
        rule = rules.rule_for(rel)
        if rule is None:
            kept.append(rel)
        else:
            tally.rule("ignored", rule, rel)
    return kept


def _count_git_ignored(root: Path, tally: _Tally) -> None:
    """Count what git's own rules left out, by rule: the ignored files and folders git reports
    (one line per ignored folder), each attributed by ``git check-ignore -v``."""
    proc = run_git(
        root,
        ["ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory"],
    )
    if proc is None or proc.returncode != 0:
        return
    entries = [n for n in proc.stdout.split(b"\0") if n]
    if not entries:
        return
    top = run_git(root, ["rev-parse", "--show-toplevel"])
    why = run_git(root, ["check-ignore", "-v", "-z", "--stdin"], b"\0".join(entries) + b"\0")
    if top is None or why is None or top.returncode != 0:
        return
    top_dir = top.stdout.decode("utf-8", "surrogateescape").strip()
    fields = why.stdout.split(b"\0")
    for i in range(0, len(fields) - 3, 4):
        source, line, pattern, path = (
            x.decode("utf-8", "surrogateescape") for x in fields[i : i + 4]
        )
        if not os.path.isabs(source):  # relative to the top of the work tree
            source = os.path.relpath(os.path.join(top_dir, source), root).replace(os.sep, "/")
        where = f"{printable_name(source)}:{line}"
        rel = path.rstrip("/")
        if path.endswith("/"):
            if rel.rsplit("/", 1)[-1] not in VCS_DIRS:
                tally.folder("ignored", where, pattern, rel)
        else:
            tally.add("ignored", where, pattern, rel)


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
    *,
    gitignore: bool | None = None,
    count_ignored: bool = False,
) -> Discovery:
    """List the files to map under ``root``, with a diagnostic for each one skipped and counts of
    everything left out (``Discovery.left_out``).

    The convention of git, ripgrep and fd:

    - In a git work tree, git lists the files: tracked plus untracked-but-not-ignored, so
      ``.gitignore`` files, ``.git/info/exclude`` and ``core.excludesFile`` apply as in git.
    - Outside one (or in a folder the enclosing repository ignores, such as an unpacked tarball),
      a walk lists every file but those in ``DEFAULT_SKIP_DIRS``; ``.gitignore`` files there were
      written for another repository and apply only when asked (``gitignore=True``, ripgrep's
      ``--no-require-git``).
    - ``.ignore`` and ``.repomapperignore`` files apply everywhere, inside git too, with git's
      syntax and precedence (a deeper file overrides, ``!`` negates; ``.repomapperignore`` wins
      over ``.ignore`` in the same folder). They can only leave out more: they cannot bring back
      what ``.gitignore`` leaves out.

    ``gitignore``: None follows the convention; True honours ``.gitignore`` files outside git
    too; False never honours them, inside git too (the listing is then a walk, like outside git:
    untracked files git ignores are mapped; ``rg --no-ignore-vcs``).

    ``use_git=False`` walks even a git work tree; ``.gitignore`` files then apply only with
    ``gitignore=True``.

    ``count_ignored``: inside git, count what git's rules left out even when files were found
    (a second ``git ls-files``, about the cost of the first); done anyway when nothing is left to
    map. A walk always counts, stopping in a folder past ``IGNORED_COUNT_LIMIT`` files
    (``SKIPPED_COUNT_LIMIT`` in ``DEFAULT_SKIP_DIRS``) and in the listing past
    ``IGNORED_COUNT_BUDGET`` (``LeftOut.at_least`` then says the count is a lower bound).
    """
    root = check_root(root)
    globs = GlobFilter.compile(include, exclude)
    diags: list[Diagnostic] = []
    tally = _Tally(root)
    listed = (
        _git_listing(root, diags)
        if use_git and gitignore is not False
        else _GitListing(None, False)
    )
    honoured: tuple[str, ...]
    caches: list[str] = []
    if listed.names is not None:
        source, honoured = "git", (GITIGNORE, *IGNORE_FILES)
        names = _drop_cache_folders(root, listed.names, tally, caches)
        names = _apply_ignore_files(root, names, tally)
    else:
        source = "walk"
        use_gitignore = gitignore is True or (
            gitignore is None and not listed.ignored_root and use_git and _in_work_tree(root)
        )
        honoured = (GITIGNORE, *IGNORE_FILES) if use_gitignore else IGNORE_FILES
        names = _walk_files(root, use_gitignore, diags, tally, caches)
    for d in diags:
        tally.diagnostic(d)
    kept: list[str] = names
    if not globs.selects_all:
        kept = []
        for rel in names:
            left_out = globs.left_out_by(rel)
            if left_out is not None:
                tally.add(*left_out, rel)
                continue
            kept.append(rel)
    entries, skipped = stat_listing(root, kept, max_file_size)
    for found in skipped:
        diags.append(found)
        tally.diagnostic(found)
    if source == "git" and (count_ignored or not entries):
        _count_git_ignored(root, tally)
    return Discovery(
        root,
        tuple(entries),
        tuple(diags),
        source,
        len(names),
        tally.left_out(),
        honoured,
        tuple(sorted(caches)),
    )


def _pattern(spec: pathspec.GitIgnoreSpec, index: int | None) -> str:
    """The text of the glob at ``index`` of a compiled ``compile_globs`` spec."""
    return "" if index is None else str(getattr(spec.patterns[index], "pattern", "") or "")


#: how each option is named on the surface that prints a message (the CLI's by default; MCP
#: passes its own, e.g. {"include": "include_globs"})
DEFAULT_LABELS = {
    "include": "--include",
    "exclude": "--exclude",
    "max_file_size": "--max-file-size",
}


def describe_left_out(item: LeftOut, labels: Mapping[str, str] | None = None) -> str:
    """One left-out group in words: ``78,578 by .gitignore:1234 '/*'``."""
    names = {**DEFAULT_LABELS, **(labels or {})}
    n = f"{'at least ' if item.at_least else ''}{item.count:,}"
    if item.reason == "ignored":
        rule = f" {item.pattern!r}" if item.pattern else ""
        return f"{n} by {item.source}{rule}"
    if item.reason == "skipped_folder" and item.source == TAG_NAME:
        return f"{n} in {item.pattern}/ folders (tagged as caches by {TAG_NAME})"
    if item.reason == "skipped_folder":
        return f"{n} in {item.pattern}/ folders (never walked into)"
    if item.reason == "not_included":
        return f"{n} not matched by {names['include']} {item.pattern!r}"
    if item.reason == "excluded":
        return f"{n} by {names['exclude']} {item.pattern!r}"
    if item.reason == "too_large":
        return f"{n} over the {names['max_file_size']} limit"
    if item.reason == "outside_root":
        return f"{n} symlinked out of the root"
    if item.reason == "unsafe_name":
        return f"{n} with unsafe names"
    if item.reason == "unreadable_folder":
        return f"{n} folder(s) that cannot be listed"
    return f"{n} unreadable"


def left_out_summary(found: Discovery, labels: Mapping[str, str] | None = None) -> str:
    """What a listing left out, on one line (empty when nothing): for a summary or ``-v``."""
    if not found.left_out:
        return ""
    files = [x for x in found.left_out if x.reason != "unreadable_folder"]
    total = sum(x.count for x in files)
    bound = "at least " if any(x.at_least for x in files) else ""
    parts = [describe_left_out(x, labels) for x in found.left_out[:MAX_PARTS]]
    more = len(found.left_out) - MAX_PARTS
    tail = f"; and {more} more" if more > 0 else ""
    return f"left out {bound}{total:,} file(s): {'; '.join(parts)}{tail}"


def explain_empty(found: Discovery, labels: Mapping[str, str] | None = None) -> str:
    """The ``no_files_matched`` message for a listing with no file to map: how many files were
    there and which rules left them out (``no files matched under X: 78,579 files found, all left
    out: 78,578 by .gitignore:1234 '/*'; ...``), or that there were none."""
    where = printable_name(str(found.root))
    files = [x for x in found.left_out if x.reason != "unreadable_folder"]
    total = sum(x.count for x in files) + len(found.files)
    folders = sum(x.count for x in found.left_out if x.reason == "unreadable_folder")
    unlisted = f"; {folders:,} folder(s) cannot be listed" if folders else ""
    if total == 0:
        return f"no files found under {where}{unlisted}"
    if found.files:  # not empty after all: what was mapped, and what was not
        summary = left_out_summary(found, labels)
        return f"{len(found.files):,} file(s) to map under {where}" + (
            f"; {summary}" if summary else ""
        )
    bound = "at least " if any(x.at_least for x in files) else ""
    parts = [describe_left_out(x, labels) for x in files[:MAX_PARTS]]
    if len(files) > MAX_PARTS:
        parts.append(f"{len(files) - MAX_PARTS} more reason(s)")
    msg = (
        f"no files matched under {where}: {bound}{total:,} file(s) found, all left out: "
        + "; ".join(parts)
        + unlisted
    )
    if any(x.reason == "ignored" for x in files):
        walked = found.source == "walk" and GITIGNORE in found.ignore_files
        msg += f" (ignore files honoured: {', '.join(found.ignore_files)}" + (
            "; a walk outside git honours .gitignore only when asked)" if walked else ")"
        )
    return msg
