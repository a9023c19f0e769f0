"""The file listing of a long-lived owner that watches the tree (the MCP server).

Discovery lists the tree (``git ls-files`` or a walk with the ignore rules) and stats every
file: on a mid-size tree more than the rest of a call after an edit costs. A watcher
knows when the tree's shape changed: a file added, removed or renamed, an ignore file edited. As
long as it reports none of these, the last discovery's file list still holds and only its files
are stat'ed again (an edit is seen by its new mtime or size even before the watcher's event
arrives). Anything the listing cannot account for (an event it does not understand, a stat that
fails, git's index or exclude file changed, the watcher stopped) makes the next call discover
again. Only a listing taken after the watcher said its watch is in place (:meth:`arm`) is
reused: changes from before may not have been reported.
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from .cachetag import TAG_NAME
from .discover import DEFAULT_SKIP_DIRS, Discovery, GlobFilter, RootFolder, stat_entry
from .fileentry import FileEntry
from .ignores import GITIGNORE, IGNORE_FILES
from .model import Diagnostic

#: files whose change changes what is listed
LISTING_FILES = frozenset({GITIGNORE, *IGNORE_FILES})

#: a folder whose mtime is this close to when it was read is listed again on the next call (a
#: file system's timestamps move in ticks of a few milliseconds)
RACY_FOLDER_NS = 50_000_000
#: a change as the watcher reports it: (kind, absolute path); kind "modified" or anything else
Change = tuple[str, str]


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


def git_listing_inputs(root: Path) -> tuple[Path, ...] | None:
    """Files besides the work tree that decide what ``git ls-files`` lists for ``root``: the
    index and the repository's exclude file. None when the repository cannot be found."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            git_dir = dot_git
        elif dot_git.is_file():  # a worktree or submodule: "gitdir: <path>"
            try:
                text = dot_git.read_text("utf-8", errors="replace").strip()
            except OSError:
                return None
            if not text.startswith("gitdir:"):
                return None
            git_dir = (folder / text[len("gitdir:") :].strip()).resolve()
        else:
            continue
        return (git_dir / "index", git_dir / "info" / "exclude")
    return None


def _folder_stamps(
    root: Path, paths: Iterable[str], known: dict[str, int | None] | None = None
) -> dict[str, int | None]:
    """The mtime of the root and of every folder holding one of ``paths`` (with its parents);
    a folder already in ``known`` keeps the stamp it had there."""
    out = dict(known or {})
    base = str(root)
    if base not in out:
        out[base] = _folder_mtime(base)
    seen: set[str] = set()
    for path in paths:
        folder = path.rpartition("/")[0]
        while folder and folder not in seen:
            seen.add(folder)
            full = os.path.join(base, folder)
            if full not in out:
                out[full] = _folder_mtime(full)
            folder = folder.rpartition("/")[0]
    return out


def _folder_mtime(path: str) -> int | None:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


class WatchedListing:
    """The last discovery, reused while the watcher saw nothing that changes the file list."""

    def __init__(self, root: Path):
        self.root = root
        self._lock = threading.Lock()
        self._stale = True
        self._armed_at: float | None = None
        self._found: Discovery | None = None
        self._taken_at = 0.0
        self._known: frozenset[str] = frozenset()
        self._stamps: dict[Path, tuple[int, int] | None] = {}
        #: the folders holding listed files (and their parents), with their mtimes: a file
        #: created, deleted or renamed in one changes its mtime at once, before any event
        self._folders: dict[str, int | None] = {}
        #: how the last call got its listing: "discover" or "stat"
        self.last = ""

    # -- the watcher's side ------------------------------------------------------------------
    def arm(self) -> None:
        """The watch is in place: listings taken from now on may be reused."""
        with self._lock:
            self._armed_at = time.monotonic()
            self._stale = True

    def disarm(self) -> None:
        """The watcher stopped: every call discovers again."""
        with self._lock:
            self._armed_at = None
            self._stale = True

    def note(self, changes: Iterable[Change] | None) -> None:
        """Changes the watcher saw (None: it could not say, e.g. it stopped)."""
        if changes is None:
            self.disarm()
            return
        for kind, path in changes:
            if self._changes_listing(kind, path):
                with self._lock:
                    self._stale = True
                return

    def _changes_listing(self, kind: str, path: str) -> bool:
        try:
            rel = Path(path).relative_to(self.root).as_posix()
        except ValueError:
            return False
        parts = rel.split("/")
        if ".git" in parts:  # git's own files: the index and exclude file are stat'ed instead
            return False
        found = self._found
        walked = found is not None and found.source == "walk"
        if walked and any(p in DEFAULT_SKIP_DIRS for p in parts[:-1]):
            return False  # a walk never lists these folders
        in_cache = found is not None and any(rel.startswith(f) for f in found.cache_folders)
        if in_cache and parts[-1] != TAG_NAME:
            return False  # a cache's files change as it is used (its tag is not one of them)
        if kind != "modified" or parts[-1] in LISTING_FILES:
            return True
        return rel not in self._known  # e.g. a file that was too large and now is not

    # -- the caller's side -------------------------------------------------------------------
    def collect(self, discover: Callable[[], Discovery], max_file_size: int) -> Discovery:
        """The current listing: the last one with its files stat'ed again, or a new one."""
        with self._lock:
            reusable = (
                not self._stale
                and self._found is not None
                and self._armed_at is not None
                and self._taken_at >= self._armed_at
            )
            if not reusable:
                self._stale = False  # an event from here on makes the next call discover
        if (
            reusable
            and all(_stamp(p) == s for p, s in self._stamps.items())
            and self._folders_unchanged()
        ):
            again = self._restat(max_file_size)
            if again is not None:
                self.last = "stat"
                return again
        return self._discover(discover)

    def _folders_unchanged(self) -> bool:
        stat = os.stat
        for folder, mtime in self._folders.items():
            try:
                if stat(folder).st_mtime_ns != mtime:
                    return False
            except OSError:
                return False
        return True

    def _discover(self, discover: Callable[[], Discovery]) -> Discovery:
        with self._lock:
            self._stale = False
        taken_at = time.monotonic()
        folders = _folder_stamps(self.root, self._known)  # taken before listing: a change in
        found = discover()  # between is seen by the next call
        folders = _folder_stamps(self.root, (e.path for e in found.files), folders)
        # a folder changed within the file system's timestamp tick of now may change again
        # with the same mtime: its stamp is not trusted, so the next call lists again
        recent = time.time_ns() - RACY_FOLDER_NS
        folders = {f: m if m is not None and m < recent else -1 for f, m in folders.items()}
        inputs = git_listing_inputs(found.root) if found.source == "git" else ()
        stamps = {p: _stamp(p) for p in inputs} if inputs is not None else None
        with self._lock:
            self._found = found
            self._taken_at = taken_at
            self._known = frozenset(e.path for e in found.files)
            self._stamps = stamps or {}
            self._folders = folders
            if stamps is None:  # git without a findable repository: never reused
                self._stale = True
        self.last = "discover"
        return found

    def _restat(self, max_file_size: int) -> Discovery | None:
        """The last listing with fresh stats, or None when a file is gone or now skipped."""
        found = self._found
        if found is None:
            return None
        files: list[FileEntry] = []
        keep = files.append
        with RootFolder(found.root) as (folder, prefix):
            stat = os.stat
            for e in found.files:
                try:
                    st = stat(prefix + e.path, dir_fd=folder)
                except OSError:
                    return None
                if (st.st_size, st.st_mtime_ns, st.st_ctime_ns) == (e.size, e.mtime_ns, e.ctime_ns):
                    keep(e)
                    continue
                again = stat_entry(found.root, e.path, max_file_size)
                if not isinstance(again, FileEntry):
                    return None
                keep(again)
        return dataclasses.replace(found, files=tuple(files))


def select(
    found: Discovery, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> tuple[list[FileEntry], list[Diagnostic], int]:
    """The files of a listing that match ``include`` and not ``exclude`` (gitignore-style
    globs), the listing's diagnostics about those files (and about folders), and how many
    files were listed: what :func:`~repomapper.discover.discover` with the same globs gives."""
    globs = GlobFilter.compile(include, exclude)
    if globs.selects_all:
        return list(found.files), list(found.diagnostics), found.seen
    wanted = globs.selected
    entries = [e for e in found.files if wanted(e.path)]
    diags = [
        d for d in found.diagnostics if d.path is None or d.path.endswith("/") or wanted(d.path)
    ]
    return entries, diags, found.seen
