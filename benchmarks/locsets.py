"""The larger localization sets: loading, the split by repository, samples, and task trees.

``../shared/bench/localization`` has, besides the 22 development tasks, ``python-more.jsonl``
(886 Python tasks over 49 repositories) and ``multilang.jsonl`` (273 tasks over 23 repositories in
C, C++, Go, Java, JavaScript, Rust and TypeScript); see its README.md. Their trees are not shipped:
each is written from a bare clone of the task's repository by the set's ``materialize.py`` (the
clones are the workspace's mirrors, ``<mirrors>/<owner>+<name>/repo``, brought by its ``fetch``).

**The split is by repository, never by task**, so a figure on the judging part says how the method
does on repositories it was not fitted on. A repository's side is decided by its *group* (the
repository name lower-cased without punctuation, so ``geekan/MetaGPT`` and
``FoundationAgents/MetaGPT`` are one; known forks named in :data:`FORKS` join their origin):

* the five repositories of the 22 development tasks always choose (they shaped the model before);
* every other group judges when the first byte of SHA-256 of ``"repomapper-split-v1:" + group``
  is odd, else chooses.

A sample takes at most N tasks per repository, the tasks of a repository ordered by whether they
have a gold patch (SWE-bench rows first: their gold is the accepted fix) and then by SHA-256 of
the instance id: the same N every run, and a larger N keeps the smaller sample's tasks.

Gold from fixing commits (MULocBench) and crawled tasks are noisier than SWE-bench's: the fit
weighs them by :data:`DATASET_WEIGHT` and the report gives the SWE-bench rows apart.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parent
#: ``shared/`` beside the repository (a clone) or two levels up (a worktree under ``wt/``)
DEFAULT_DATA = (
    next(
        (
            d
            for d in (REPO_ROOT.parent / "shared", REPO_ROOT.parent.parent / "shared")
            if (d / "bench" / "localization").is_dir()
        ),
        REPO_ROOT.parent / "shared",
    )
    / "bench"
    / "localization"
)
DEFAULT_MIRRORS = Path("/work/.mirror")
SETS = {"python-more": "python-more.jsonl", "multilang": "multilang.jsonl"}
SPLIT_SALT = "repomapper-split-v1:"
#: the repositories of the 22 development tasks: they always choose
DEV_GROUPS = frozenset({"sqlfluff", "marshmallow", "pvlibpython", "astroid", "pydicom"})
#: forks that share most of their code with another repository of the sets
FORKS = {"ytdlp": "youtubedl"}
#: how much a task of each source counts in the fit (noisier gold counts less)
DATASET_WEIGHT = {
    "SWE-bench dev split": 1.0,
    "Multi-SWE-bench": 1.0,
    "MULocBench (gold from the fixing commit)": 0.5,
    "SWE-bench-style crawl (unvalidated)": 0.5,
}
#: language groups of the per-language table
LANGUAGE_GROUP = {"TypeScript": "JavaScript/TypeScript", "JavaScript": "JavaScript/TypeScript"}


@dataclass(frozen=True)
class SetTask:
    instance_id: str
    repo: str
    language: str
    dataset: str
    base_commit: str
    problem_statement: str
    gold_files: tuple[str, ...]
    gold_patch: str = ""

    @property
    def group(self) -> str:
        return repo_group(self.repo)

    @property
    def split(self) -> str:
        return split_of(self.repo)

    @property
    def weight(self) -> float:
        return DATASET_WEIGHT.get(self.dataset, 0.5)


def repo_group(repo: str) -> str:
    """The split's unit: the repository's name, lower-case, letters and digits only."""
    name = re.sub(r"[^a-z0-9]", "", repo.rsplit("/", 1)[-1].lower())
    return FORKS.get(name, name)


def split_of(repo: str) -> str:
    """``"choose"`` or ``"judge"`` (see the module docstring)."""
    group = repo_group(repo)
    if group in DEV_GROUPS:
        return "choose"
    digest = hashlib.sha256((SPLIT_SALT + group).encode()).digest()
    return "judge" if digest[0] % 2 else "choose"


T = TypeVar("T")


def read_task_lines(path: Path, make: Callable[[dict[str, Any]], T]) -> list[T]:
    """``make`` of each task line of a JSONL file (blank lines skipped); a line that is not
    JSON or lacks what ``make`` reads stops the run with its place."""
    out = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(make(json.loads(line)))
            except (ValueError, KeyError, TypeError) as exc:
                raise SystemExit(f"{path}:{n}: not a task line: {exc}") from exc
    return out


def _set_task(raw: dict[str, Any]) -> SetTask:
    return SetTask(
        str(raw["instance_id"]),
        str(raw["repo"]),
        str(raw.get("language", "")),
        str(raw.get("dataset", "")),
        str(raw["base_commit"]),
        str(raw["problem_statement"]),
        tuple(raw["gold_files"]),
        str(raw.get("gold_patch") or ""),
    )


def load_set(path: Path) -> list[SetTask]:
    return read_task_lines(path, _set_task)


def select(
    tasks: Iterable[SetTask], split: str = "all", per_repo: int | None = None
) -> list[SetTask]:
    """The tasks of ``split`` (choose, judge or all), at most ``per_repo`` per repository."""
    by_repo: dict[str, list[SetTask]] = defaultdict(list)
    for t in tasks:
        if split == "all" or t.split == split:
            by_repo[t.repo].append(t)
    out: list[SetTask] = []
    for repo in sorted(by_repo):
        ordered = sorted(
            by_repo[repo],
            key=lambda t: (not t.gold_patch, hashlib.sha256(t.instance_id.encode()).hexdigest()),
        )
        out.extend(ordered[:per_repo] if per_repo else ordered)
    return sorted(out, key=lambda t: (t.repo, t.instance_id))


def mirror_of(repo: str, mirrors: Path = DEFAULT_MIRRORS) -> Path | None:
    """The bare clone of ``repo`` among the mirrors (names compared without case), or None."""
    want = repo.replace("/", "+").lower()
    try:
        for d in sorted(mirrors.iterdir()):
            if d.name.lower() == want and (d / "repo").is_dir():
                return d / "repo"
    except OSError:
        return None
    return None


def materialize(
    tasks_file: Path, task: SetTask, dest: Path, mirrors: Path = DEFAULT_MIRRORS
) -> Path:
    """Write the task's tree at its base commit into ``dest`` (the set's materialize.py)."""
    git_dir = mirror_of(task.repo, mirrors)
    if git_dir is None:
        raise RuntimeError(f"no mirror of {task.repo} under {mirrors} (fetch github:{task.repo})")
    script = tasks_file.parent / "materialize.py"
    proc = subprocess.run(
        [
            sys.executable,
            str(script),
            str(tasks_file),
            task.instance_id,
            str(dest),
            "--git-dir",
            str(git_dir),
        ],
        capture_output=True,
        text=True,
        errors="replace",
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        # the set's script stops at a tree entry whose blob the mirror lacks (``ls -l`` size
        # "BAD"); write the tree the same way with those entries left out
        if "invalid literal for int()" not in proc.stderr:
            raise RuntimeError(f"materialize failed: {proc.stderr.strip()[-300:]}")
        shutil.rmtree(dest, ignore_errors=True)
        write_tree(git_dir, task.base_commit, dest)
    return dest


def write_tree(git_dir: Path, commit: str, dest: Path, max_bytes: int = 1_000_000) -> int:
    """``materialize.py``'s rules (regular files up to ``max_bytes``; symlinks, submodules and
    blobs the clone lacks left out), for a clone that lacks some blobs; the files written."""
    env = {**os.environ, "GIT_NO_LAZY_FETCH": "1"}
    listing = subprocess.run(
        ["git", "--git-dir", str(git_dir), "ls-tree", "-r", "-z", "--full-tree", commit],
        capture_output=True,
        check=True,
        env=env,
    ).stdout
    entries: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for ent in filter(None, listing.split(b"\0")):
        meta, raw_path = ent.split(b"\t", 1)
        mode, kind, sha = meta.decode().split()
        if kind == "blob" and mode in ("100644", "100755"):
            entries[sha].append((mode, raw_path.decode("utf-8", "surrogateescape")))
    proc = subprocess.Popen(
        ["git", "--git-dir", str(git_dir), "cat-file", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    written = 0
    for sha in sorted(entries):
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        head = proc.stdout.readline().split()
        if len(head) < 3 or head[1] == b"missing":
            continue
        data = proc.stdout.read(int(head[2]))
        proc.stdout.read(1)
        if len(data) > max_bytes:
            continue
        for mode, rel in entries[sha]:
            out = dest / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(data)
            if mode == "100755":
                out.chmod(0o755)
            written += 1
    proc.stdin.close()
    proc.wait()
    return written


# --------------------------------------------------------------------------------------------
# Function-level gold from a gold patch

_DIFF_FILE = re.compile(r"^diff --git a/(.+?) b/(.+)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patch_old_lines(patch: str) -> dict[str, list[int]]:
    """Per file of a unified diff, the pre-image lines it removes or changes, and for a pure
    insertion the line it follows (so the function it lands in counts)."""
    out: dict[str, list[int]] = defaultdict(list)
    path = None
    old = 0
    for line in patch.splitlines():
        m = _DIFF_FILE.match(line)
        if m:
            path = m.group(1)
            continue
        h = _HUNK.match(line)
        if h:
            old = int(h.group(1))
            continue
        if path is None or line.startswith(("---", "+++")) or not old:
            continue
        if line.startswith("-"):
            out[path].append(old)
            old += 1
        elif line.startswith("+"):
            out[path].append(max(1, old - 1))
        elif line.startswith(" "):
            old += 1
    return dict(out)


def gold_spans_from_patch(
    patch: str,
    root: Path | None,
    gold: Sequence[str],
    read: Callable[[str], str | None] | None = None,
    languages: bool = False,
) -> list[tuple[str, str, int, int]]:
    """The functions and classes (path, qualified name, first line, last line) of the tree at
    ``root`` (or of the files ``read(path)`` gives) that the patch's changed lines fall in (see
    ``benchmarks/gold_spans.py`` for the rules: the innermost definition, nested functions
    counted as their outer one, a class only when its own body changed). Python gold files
    only, unless ``languages``: then every language repomapper's backends give definitions with
    line ranges for (``gold_spans.tag_definitions``)."""
    from gold_spans import definitions_of, innermost

    def from_root(path: str) -> str | None:
        try:
            return (root / path).read_text("utf-8", errors="replace") if root else None
        except OSError:
            return None

    out: list[tuple[str, str, int, int]] = []
    for path, lines in sorted(patch_old_lines(patch).items()):
        if path not in gold or not (languages or path.endswith(".py")):
            continue
        source = (read or from_root)(path)
        if source is None:
            continue
        spans = definitions_of(path, source)
        names: list[tuple[str, int, int]] = []
        for line in lines:
            s = innermost(spans, line)
            if s is not None and (s[0], s[2], s[3]) not in names:
                names.append((s[0], s[2], s[3]))
        full = {n for n, _, _ in names}
        for name, start, end in names:
            if not any(m.startswith(name + ".") for m in full):
                out.append((path, name, start, end))
    return out
