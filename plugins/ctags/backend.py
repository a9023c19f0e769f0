"""The fallback backend: Universal Ctags for every language it knows (about 130).

Registered last (``trylast``) and claiming every file, it answers for the files no other backend
handles, provided ctags maps their name to a parser (decided from ``--list-map-extensions`` and
``--list-map-patterns``, never by running ctags on the file). Definitions come with kinds,
scopes, end lines (where the ctags parser records them) and the source line as signature;
imports come from ctags's reference tags (``#include``, ``require``, ``import``...).
References are left to the core's generic back-fill.

One ``ctags`` process runs per batch (:func:`prepare_batch`), fed the file names on stdin and
read as a JSON stream; each file's results are kept in its memo (:meth:`SourceFile.memo`), where
``extract_tags`` and ``extract_imports`` find them, until the core is done with the file. ctags
always runs with ``--options=NONE`` (no ``.ctags``/``.ctags.d`` from the mapped repository is
read), never with ``-R``, never through a shell.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import posixpath
import subprocess
import tempfile
import threading
import weakref
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO, Any

from repomapper.hookspecs import hookimpl
from repomapper.index import RepoIndex
from repomapper.model import BackendInfo, Capability, Import, SourceFile, Tag

from ..python.common import resolve_python_import
from . import detect as ctags_detect
from .detect import (
    NOT_CODE_LANGUAGES,
    STATIC_CODE_EXTENSIONS,
    CtagsInstall,
    detect,
    normalise_language,
    subprocess_env,
)
from .kinds import ImportCollector, SourceLines, finish_tags, record_to_tag

log = logging.getLogger(__name__)

NAME = "ctags"
#: The plugin's own version; ``backend_info().version`` appends the ctags version.
VERSION = "1.1"
CAPABILITIES = tuple(
    c.value
    for c in (
        Capability.DEFINITIONS,
        Capability.IMPORTS,
        Capability.END_LINES,
        Capability.SIGNATURES,
        Capability.SCOPES,
    )
)

#: Seconds a ctags run may take: base plus a per-file allowance (environment overrides).
ENV_TIMEOUT = "REPOMAPPER_CTAGS_TIMEOUT"
ENV_TIMEOUT_PER_FILE = "REPOMAPPER_CTAGS_TIMEOUT_PER_FILE"
DEFAULT_TIMEOUT = 30.0
DEFAULT_TIMEOUT_PER_FILE = 0.05
#: Larger batches are split into runs of this many files.
MAX_FILES_PER_RUN = 2000
#: Records read per file at most (a generated file can hold millions of macros).
MAX_RECORDS_PER_FILE = 100_000
_STDERR_KEEP = 64 * 1024

_CTAGS_ARGS = (
    "--options=NONE",  # first: no option files, from the repository or anywhere else
    "--output-format=json",
    # line, end, long kind, scope, scope kind, signature, roles, extras, language; no file/typeref
    "--fields=+nezKZpSrEl-f-t",
    "--extras=+r",  # reference tags: #include, require, import
    "--sort=no",
)

_TAGS, _IMPORTS = "tags", "imports"


# -- the memo ------------------------------------------------------------------------------------
@dataclass
class _Entry:
    """One file's results. ``warnings`` (reason code, message) are logged when the file is first
    asked for, so they reach that file's diagnostics once."""

    tags: tuple[Tag, ...]
    imports: tuple[Import, ...]
    warnings: tuple[tuple[str, str], ...] = ()
    warned: bool = False


@dataclass
class _Slot:
    """Where a file's results go, in the file's own memo."""

    entry: _Entry | None = None


_Key = tuple[str, bytes, str, str]
_warned_unavailable = False


def _slot(source: SourceFile) -> _Slot:
    return source.memo((NAME, "result"), _Slot)


def _memo_put(
    source: SourceFile,
    tags: Sequence[Tag],
    imports: Sequence[Import],
    warnings: Sequence[tuple[str, str]] = (),
) -> None:
    _slot(source).entry = _Entry(tuple(tags), tuple(imports), tuple(warnings))


def _memo_take(source: SourceFile, what: str) -> tuple[Tag, ...] | tuple[Import, ...] | None:
    """One half of the file's result, logging its warnings the first time."""
    entry = _slot(source).entry
    if entry is None:
        return None
    if not entry.warned:
        entry.warned = True
        for code, message in entry.warnings:
            log.warning("%s: %s", source.path, message, extra={"code": code, "path": source.path})
    return entry.tags if what == _TAGS else entry.imports


def reset_detection() -> None:
    """Forget the detected ctags and the logged unavailability warning."""
    global _warned_unavailable
    ctags_detect.reset_detection()
    _warned_unavailable = False


def _key(source: SourceFile, install: CtagsInstall) -> _Key:
    digest = hashlib.blake2b(source.data, digest_size=16).digest()
    return (os.path.abspath(source.abspath), digest, install.path or "", install.version)


def _detect_and_warn() -> CtagsInstall:
    """The detected ctags; when there is none, say why (once per process)."""
    global _warned_unavailable
    install = detect()
    if not install.available and not _warned_unavailable:
        _warned_unavailable = True
        log.warning(
            "ctags backend unavailable: %s",
            install.detail,
            extra={"code": "backend_unavailable", "path": None},
        )
    return install


def _usable() -> CtagsInstall | None:
    install = _detect_and_warn()
    return install if install.available else None


def _timeout(n_files: int) -> float:
    def env(name: str, default: float) -> float:
        try:
            return max(float(os.environ.get(name, "")), 0.0)
        except ValueError:
            return default

    return env(ENV_TIMEOUT, DEFAULT_TIMEOUT) + n_files * env(
        ENV_TIMEOUT_PER_FILE, DEFAULT_TIMEOUT_PER_FILE
    )


# -- one file in a run ---------------------------------------------------------------------------
class _Job:
    """A file handed to ctags: what goes on stdin for it and what came back."""

    __slots__ = (
        "source",
        "twins",
        "key",
        "arg",
        "tags",
        "kinds",
        "imports",
        "records",
        "warnings",
        "_lines",
    )

    def __init__(self, source: SourceFile, key: _Key):
        self.source = source
        #: other objects for the same file and bytes in the batch: they get the same results
        self.twins: list[SourceFile] = []
        self.key = key
        self.arg = ""
        self.tags: list[Tag] = []
        self.kinds: list[str] = []
        self.imports = ImportCollector(source.path)
        self.records = 0
        self.warnings: list[tuple[str, str]] = []
        self._lines: SourceLines | None = None

    def reset(self) -> None:
        self.tags, self.kinds, self.records, self.warnings = [], [], 0, []
        self.imports = ImportCollector(self.source.path)

    def add(self, record: dict[str, Any]) -> None:
        self.records += 1
        if self.records > MAX_RECORDS_PER_FILE:
            if self.records == MAX_RECORDS_PER_FILE + 1:
                self.warnings.append(
                    (
                        "too_many_tags",
                        f"more than {MAX_RECORDS_PER_FILE} ctags records; the rest are ignored",
                    )
                )
            return
        if self.imports.add(record):
            return
        if self._lines is None:
            self._lines = SourceLines(self.source.data)
        tag = record_to_tag(record, self.source.path, self._lines)
        if tag is not None:
            self.tags.append(tag)
            self.kinds.append(str(record.get("kind")))

    def store(self) -> None:
        tags, imports = finish_tags(self.tags, self.kinds), self.imports.imports()
        for source in (self.source, *self.twins):
            _memo_put(source, tags, imports, self.warnings)
        self._lines = None

    def fail(self, reason: str) -> None:
        """ctags failed on this file alone: it yields nothing, with a warning."""
        self.reset()
        self.warnings.append(("backend_error", f"ctags failed: {reason}"))
        self.store()


def _unsafe_reason(rel: str) -> str | None:
    if any(c in rel for c in "\n\r\0"):
        return "its name contains a line break"
    try:
        rel.encode("utf-8")
    except UnicodeEncodeError:
        return "its name is not valid UTF-8"
    p = PurePosixPath(rel)
    if not rel or p.is_absolute() or ".." in p.parts:
        return "its path leaves the repository"
    return None


def _matches_disk(source: SourceFile) -> bool:
    """Whether ctags, reading the file itself, would see exactly ``source.data``."""
    try:
        path = source.abspath
        if not path.is_file() or path.stat().st_size != len(source.data):
            return False
        return path.read_bytes() == source.data
    except OSError:
        return False


# -- running ctags -------------------------------------------------------------------------------
def _feed(stream: IO[bytes], lines: Iterable[str]) -> None:
    try:
        for line in lines:
            stream.write(line.encode("utf-8") + b"\n")
        stream.close()
    except (OSError, ValueError):  # ctags died early; its exit status tells the story
        pass


def _drain(stream: IO[bytes], keep: bytearray) -> None:
    try:
        for chunk in iter(lambda: stream.read(8192), b""):
            keep.extend(chunk)
            if len(keep) > _STDERR_KEEP:
                del keep[: len(keep) - _STDERR_KEEP]
    except (OSError, ValueError):
        pass


def _parse(raw: bytes) -> dict[str, Any] | None:
    try:
        record = json.loads(raw.decode("utf-8", "surrogateescape"))
    except ValueError:
        return None
    return record if isinstance(record, dict) and record.get("_type") == "tag" else None


def _stderr_text(buf: bytearray) -> str:
    lines = [
        line
        for line in buf.decode("utf-8", "replace").splitlines()
        if line.strip() and not line.startswith("ctags: Notice")
    ]
    return " | ".join(lines[-5:])[:1000]


def _run(install: CtagsInstall, jobs: Sequence[_Job], cwd: Path) -> tuple[int, str | None]:
    """Run ctags once over ``jobs`` (their ``arg`` set), filling each job's results.

    Returns how many leading jobs are complete and, on failure, why. Files are processed in
    order, so every job before the last one with output is complete even if ctags died.
    """
    for job in jobs:
        job.reset()
    by_arg = {job.arg: i for i, job in enumerate(jobs)}
    cmd = [install.path or "ctags", *_CTAGS_ARGS, *install.map_options, "-L", "-", "-f", "-"]
    try:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=subprocess_env(),
        )
    except OSError as exc:
        return 0, f"cannot start {install.path}: {exc}"
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    timeout = _timeout(len(jobs))
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.daemon = True
    errors = bytearray()
    helpers = [
        threading.Thread(target=_feed, args=(proc.stdin, [j.arg for j in jobs]), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, errors), daemon=True),
    ]
    timer.start()
    for t in helpers:
        t.start()
    last = -1
    failure: str | None = None
    try:
        for raw in proc.stdout:
            record = _parse(raw)
            if record is None:
                continue
            path = record.get("path")
            index = by_arg.get(path) if isinstance(path, str) else None
            if index is None:
                continue
            last = max(last, index)
            jobs[index].add(record)
    except Exception as exc:  # never let one odd record take the batch down
        failure = f"reading ctags output failed: {exc!r}"
        proc.kill()
    finally:
        proc.stdout.close()
        returncode = proc.wait()
        timer.cancel()
        for t in helpers:
            t.join()
        proc.stderr.close()
    if failure is None and timed_out.is_set() and returncode != 0:
        failure = f"ctags timed out after {timeout:.0f}s"
    elif failure is None and returncode != 0:
        failure = f"ctags exited with status {returncode}"
    if failure is None:
        if _stderr_text(errors):
            log.debug("ctags stderr: %s", _stderr_text(errors))
        return len(jobs), None
    detail = _stderr_text(errors)
    return max(last, 0), failure + (f": {detail}" if detail else "")


def _run_group(install: CtagsInstall, root: Path, jobs: list[_Job]) -> None:
    """Extract ``jobs`` (all under ``root``) with as few ctags runs as failures allow, and
    memoise every result. A file ctags fails on alone yields nothing, with a warning."""
    cwd = root if root.is_dir() else Path.cwd()
    with tempfile.TemporaryDirectory(prefix="repomapper-ctags-") as staging:
        pending: list[_Job] = []
        for job in jobs:
            if cwd == root and _matches_disk(job.source):
                job.arg = f"./{job.source.path}"  # never starts with "-": not an option
            else:  # ctags must see exactly the bytes we were given: a copy, same name
                staged = Path(staging, *PurePosixPath(job.source.path).parts)
                try:
                    staged.parent.mkdir(parents=True, exist_ok=True)
                    staged.write_bytes(job.source.data)
                except OSError as exc:
                    job.fail(f"cannot write a temporary copy: {exc}")
                    continue
                job.arg = str(staged)
            pending.append(job)
        while pending:
            done, failure = _run(install, pending, cwd)
            for job in pending[:done]:
                job.store()
            if failure is None:
                return
            if done == 0:  # no progress: run the first file alone, so it cannot block the rest
                head = pending[0]
                if len(pending) > 1:
                    done, failure = _run(install, [head], cwd)
                if failure is None:
                    head.store()
                else:
                    head.fail(failure)
                done = 1
            pending = pending[done:]


def _extract(install: CtagsInstall, sources: Iterable[SourceFile]) -> None:
    """Put ctags's results for ``sources`` (files ctags maps) in their memos, one run per root
    and chunk; files already done are skipped."""
    groups: dict[tuple[Path, int], dict[_Key, _Job]] = defaultdict(dict)
    rounds: dict[tuple[Path, str], dict[_Key, int]] = defaultdict(dict)
    for source in sources:
        if _slot(source).entry is not None:
            continue
        reason = _unsafe_reason(source.path)
        if reason is not None:
            _memo_put(source, (), (), [("unsafe_path", f"not given to ctags: {reason}")])
            continue
        key = _key(source, install)
        versions = rounds[(source.root, source.path)]  # a second version of one path
        n = versions.setdefault(key, len(versions))  # (other content) needs a run of its own
        job = groups[(source.root, n)].setdefault(key, _Job(source, key))
        if job.source is not source:
            job.twins.append(source)
    for (root, _round), by_key in groups.items():
        jobs = list(by_key.values())
        for start in range(0, len(jobs), MAX_FILES_PER_RUN):
            _run_group(install, root, jobs[start : start + MAX_FILES_PER_RUN])


def _result(source: SourceFile, what: str) -> tuple[Any, ...] | None:
    install = _usable()
    if install is None or install.language_map.language_of(source.path) is None:
        return None
    found = _memo_take(source, what)
    if found is None:
        _extract(install, [source])
        found = _memo_take(source, what)
    return found if found is not None else ()


# -- hooks ---------------------------------------------------------------------------------------
@hookimpl
def backend_info() -> BackendInfo:
    install = _detect_and_warn()
    description = "Universal Ctags fallback: definitions and imports for the languages it parses"
    if not install.available:
        return BackendInfo(
            name=NAME,
            version=f"{VERSION}+unavailable",
            languages=(),
            extensions=STATIC_CODE_EXTENSIONS,
            capabilities=CAPABILITIES,
            description=description,
            available=False,
            detail=install.detail,
        )
    return BackendInfo(
        name=NAME,
        version=f"{VERSION}+uctags-{install.version}",
        languages=tuple(
            sorted(
                {
                    normalise_language(lang)
                    for lang in install.languages
                    if lang not in NOT_CODE_LANGUAGES
                }
            )
        ),
        extensions=("*",),
        capabilities=CAPABILITIES,
        description=description,
        detail=install.detail,
        language_extensions=install.language_map.language_extensions(),
    )


@hookimpl
def prepare_batch(sources: Sequence[SourceFile]) -> None:
    if not sources:
        return
    install = detect()
    if not install.available:
        return
    mapped = [s for s in sources if install.language_map.language_of(s.path) is not None]
    if mapped:
        _extract(install, mapped)


@hookimpl(trylast=True)
def extract_tags(source: SourceFile) -> list[Tag] | None:
    found = _result(source, _TAGS)
    return None if found is None else list(found)


@hookimpl(trylast=True)
def extract_imports(source: SourceFile) -> list[Import] | None:
    found = _result(source, _IMPORTS)
    return None if found is None else list(found)


# -- import resolution ---------------------------------------------------------------------------
#: Languages whose imports name files relative to the importer first (#include "x.h").
_PATH_FIRST = frozenset({"C", "C++", "CUDA", "CPreProcessor", "ObjectiveC", "Vera"})
_by_basename: weakref.WeakKeyDictionary[RepoIndex, dict[str, tuple[str, ...]]] = (
    weakref.WeakKeyDictionary()
)


def _basenames(index: RepoIndex) -> dict[str, tuple[str, ...]]:
    table = _by_basename.get(index)
    if table is None:
        grouped: dict[str, list[str]] = defaultdict(list)
        for f in index.files:
            grouped[posixpath.basename(f)].append(f)
        table = {name: tuple(sorted(fs)) for name, fs in grouped.items()}
        _by_basename[index] = table
    return table


def _suffix_matches(index: RepoIndex, path: str, exts: Sequence[str]) -> list[str]:
    """Files named ``path`` or ``path<ext>``, anywhere in the repository (path-suffix match).

    A bare file name must match exactly one file; a path with directories may match several.
    """
    table = _basenames(index)
    found: set[str] = set()
    for candidate in (path, *(path + ext for ext in exts if not path.endswith(ext))):
        for f in table.get(posixpath.basename(candidate), ()):
            if f == candidate or f.endswith("/" + candidate):
                found.add(f)
    if "/" not in path and len(found) > 1:
        return []
    return sorted(found)


def _package_files(index: RepoIndex, directory: str, exts: Sequence[str]) -> list[str]:
    """Files with one of ``exts`` in directories ending with ``directory`` (``import a.b.*``)."""
    return sorted(
        f
        for d, files in index.by_dir.items()
        if d == directory or d.endswith("/" + directory)
        for f in files
        if f.endswith(tuple(exts))
    )


def _path_forms(spec: str) -> list[str]:
    """``spec`` as written, then as a path: ``a::b`` -> ``a/b``; ``a.b.C.m`` -> ``a/b/C/m``,
    ``a/b/C`` (a static import or nested class lives in the file of an outer name)."""
    forms = [spec]
    if "::" in spec:
        forms.append(spec.replace("::", "/"))
    elif "/" not in spec and "." in spec:
        parts = spec.split(".")
        forms.extend("/".join(parts[:n]) for n in range(len(parts), 1, -1))
    return list(dict.fromkeys(f.strip("/") for f in forms if f.strip("/")))


#: ctags languages whose imports follow rules the tree-sitter backend implements (a language's
#: rules, not a backend's: ``#include`` search paths, Go modules, Java packages, Ruby's load
#: path, composer maps), by the name of those rules (:func:`..treesitter.resolve.resolve_as`).
LANGUAGE_RULES: dict[str, str] = {
    "C": "c",
    "C++": "c",
    "CUDA": "c",
    "Go": "go",
    "Java": "java",
    "Kotlin": "java",
    "C#": "csharp",
    "Ruby": "ruby",
    "PHP": "php",
}


def resolve(imp: Import, index: RepoIndex, language: str, exts: Sequence[str]) -> list[str]:
    """The repository files ``imp`` (written in a ``language`` file) refers to."""
    spec = imp.source.strip()
    if not spec or "\0" in spec:
        return []
    if language in LANGUAGE_RULES:
        from ..treesitter.resolve import resolve_as

        if spec.endswith(".*"):  # ctags writes a wildcard into the name: ``a.b.*``
            imp = dataclasses.replace(imp, source=spec[:-2], names=("*",))
        found = resolve_as(LANGUAGE_RULES[language], imp, index)
        if found is not None:
            return found
    if imp.is_relative or language in _PATH_FIRST or spec.startswith(("./", "../")):
        hit = index.resolve_relative_path(imp.file_path, spec, exts, index_names=())
        if hit is not None:
            return [hit]
    for wildcard in (".*", "::*", "/*"):
        if spec.endswith(wildcard):
            base = spec[: -len(wildcard)]
            directory = base.replace("::", "/") if "::" in base else base.replace(".", "/")
            return _package_files(index, directory.strip("/"), exts) if directory else []
    for form in _path_forms(spec):
        if form.startswith("../") or form == "..":
            continue
        found = _suffix_matches(index, form.removeprefix("./"), exts)
        if found:
            return found
    return []


@hookimpl(trylast=True)
def resolve_import(imp: Import, index: RepoIndex) -> list[str] | None:
    install = detect()
    if not install.available:
        return None
    language = install.language_map.language_of(imp.file_path)
    if language is None:
        return None
    if language == "Python":  # ctags reports Python imports the way the Python backends do
        found = resolve_python_import(imp, index)
        if found is not None:
            return list(found)
    return resolve(imp, index, language, install.language_map.extensions_of(language))
