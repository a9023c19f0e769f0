"""Function-level gold for the tasks of a localization set that have no gold patch.

    python benchmarks/fix_spans.py --set python-more|multilang [--mirrors DIR] [--output FILE]
                                   [--only ID,...]

Only the SWE-bench rows of ``python-more.jsonl`` carry the accepted fix (``gold_patch``); the
other rows (MULocBench, the crawl, Multi-SWE-bench) name the files the fix changed and the commit
the task starts from. This script finds the fixing commit in the repository's mirror (a bare
clone with full history, pull-request refs included), takes its diff restricted to the gold
files, and reads the functions it changed with the rules of the patch rows
(:func:`locsets.gold_spans_from_patch`: the innermost definition around each removed or changed
line of the pre-image, a nested function counted as its outer one, a class only when its own
body changed), at the lines of the task's tree. The rules, tried in this order (``N`` is the
instance id's number):

``pull``
    ``refs/pull/N/head`` exists (the crawl and Multi-SWE-bench take their tasks from pull
    requests, so ``N`` is one; a MULocBench ``N`` is an issue, which has no such ref) and its
    diff from where it left the base commit's history touches every gold file.
``child``
    a child of the base commit (on any ref) whose diff from it touches every gold file and whose
    changed code files that exist at the base commit are exactly the gold files (tests, docs
    and configuration may change besides: the sets' gold leaves them out). Children with the same
    diff of the gold files (a commit and the merge that brought it) are one fix; of several
    different ones, the one on the default branch, if it is the only one there; else none.
``message``
    a commit after the base commit on the default branch whose message refers to the issue
    (``#N`` or ``issues/N``) and whose own diff touches every gold file; the nearest.
``base``
    the base commit itself refers to the issue and its own diff touches every gold file (the
    task's tree already holds the fix; its pre-image is the parent).
``path``
    the first of the 300 commits after the base commit on the default branch's ancestry path
    whose diff from the base commit touches every gold file and no other code file that
    exists at the base commit.

When the diff's pre-image is not the base commit (``message``, ``base``, a pull request that
left the history later), each span is found in the pre-image and looked up at the base commit
by qualified name (the same occurrence of an overloaded name; a name the base commit lacks
gives its class). Python files are read with ``ast``; other languages (``--set multilang``)
with repomapper's own backends (their definitions' line ranges; classes, interfaces, types,
enums, functions and methods).

The output (``benchmarks/data/fix_spans-<set>.jsonl``, one line per task without a gold patch:
``instance_id``, ``rule``, ``commit``, ``before``, ``gold_spans`` as ``gold_spans.py`` writes
them) is what ``benchmarks/localization.py --set`` reads for those tasks; a summary of the rules'
coverage goes to stderr.
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path, PurePosixPath

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402
from gold_spans import definitions_of  # noqa: E402

#: commits of the ancestry path the ``path`` rule looks at
PATH_LIMIT = 300
#: what the sets count as code (the suffixes of their gold files, and the languages' own)
CODE_SUFFIXES = frozenset(
    [
        ".py",
        ".pyi",
        ".pyx",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".vue",
        ".svelte",
        ".sh",
        ".bash",
        ".css",
        ".scss",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".hxx",
        ".go",
        ".java",
        ".kt",
        ".scala",
        ".rs",
        ".rb",
        ".php",
        ".cs",
        ".swift",
        ".m",
        ".mm",
    ]
)
CODE_NAMES = frozenset({"Makefile", "Dockerfile"})
_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs"})


def default_output(set_name: str) -> Path:
    return HERE / "data" / f"fix_spans-{set_name}.jsonl"


def is_code(path: str) -> bool:
    """A code file that is not a test (what the sets' gold files are)."""
    from repomapper.relevance.roles import TEST, file_role

    p = PurePosixPath(path)
    if p.suffix not in CODE_SUFFIXES and p.name not in CODE_NAMES:
        return False
    return file_role(path) != TEST and not (_TEST_DIRS & set(p.parts[:-1]))


@dataclass(frozen=True)
class Fix:
    rule: str
    #: the fixing commit
    commit: str
    #: the diffs that make the fix, as (pre-image, post-image) commits: one, or a pull
    #: request's own commits when main was merged into it
    steps: tuple[tuple[str, str], ...]


class Mirror:
    """git over one bare clone."""

    def __init__(self, git_dir: Path):
        self.git_dir = git_dir
        self._shown: dict[tuple[str, str], str | None] = {}

    def run(self, *args: str, check: bool = True) -> str:
        proc = subprocess.run(
            ["git", "--git-dir", str(self.git_dir), *args],
            capture_output=True,
            text=True,
            errors="replace",
            env={"GIT_NO_LAZY_FETCH": "1", "PATH": "/usr/bin:/bin:/usr/local/bin"},
            check=False,
        )
        if check and proc.returncode != 0:
            raise RuntimeError(f"git {' '.join(args)}: {proc.stderr.strip()[-200:]}")
        return proc.stdout

    def ok(self, *args: str) -> bool:
        return (
            subprocess.run(
                ["git", "--git-dir", str(self.git_dir), *args], capture_output=True, check=False
            ).returncode
            == 0
        )

    @cached_property
    def children(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = defaultdict(list)
        for line in self.run("rev-list", "--all", "--parents").splitlines():
            commit, *parents = line.split()
            for p in parents:
                out[p].append(commit)
        return out

    def changed(self, a: str, b: str) -> set[str]:
        return set(self.run("diff", "--no-renames", "--name-only", "-z", a, b).split("\0")) - {""}

    def existing(self, commit: str, paths: set[str]) -> set[str]:
        if not paths:
            return set()
        listed = self.run("ls-tree", "-r", "-z", "--name-only", commit, "--", *sorted(paths))
        return set(listed.split("\0")) - {""}

    def on_head(self, commit: str) -> bool:
        return self.ok("merge-base", "--is-ancestor", commit, "HEAD")

    def parent(self, commit: str) -> str | None:
        parents = self.run("rev-list", "--parents", "-n", "1", commit).split()[1:]
        return parents[0] if parents else None

    def message(self, commit: str) -> str:
        return self.run("log", "-1", "--format=%B", commit)

    def show(self, commit: str, path: str) -> str | None:
        key = (commit, path)
        if key not in self._shown:
            proc = subprocess.run(
                ["git", "--git-dir", str(self.git_dir), "show", f"{commit}:{path}"],
                capture_output=True,
                check=False,
            )
            self._shown[key] = (
                proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None
            )
        return self._shown[key]

    def diff(self, a: str, b: str, paths: Sequence[str]) -> str:
        return self.run("diff", "--no-renames", a, b, "--", *paths)


def issue_number(instance_id: str) -> str:
    return instance_id.rsplit("-", 1)[-1]


def refers_to(message: str, number: str) -> bool:
    return re.search(rf"(#|issues/){number}(?![0-9])", message) is not None


def exact_code(m: Mirror, base: str, changed: set[str], gold: set[str]) -> bool:
    """The code files of ``changed`` that exist at ``base`` are the gold files."""
    return {p for p in m.existing(base, changed) if is_code(p)} == gold


def by_pull(m: Mirror, task: locsets.SetTask, gold: set[str]) -> Fix | None:
    number = issue_number(task.instance_id)
    head = m.run("rev-parse", "-q", "--verify", f"refs/pull/{number}/head", check=False).strip()
    if not head:
        return None
    start = m.run("merge-base", task.base_commit, head, check=False).strip()
    if not start or not gold <= m.changed(start, head):
        return None
    own = m.run("rev-list", "--first-parent", "--parents", f"{start}..{head}").splitlines()
    if all(len(line.split()) == 2 for line in own):
        return Fix("pull", head, ((start, head),))
    # the branch merged its target in: its own commits, not what the merges brought
    steps = tuple(
        (parent, commit)
        for commit, parent in (line.split() for line in reversed(own) if len(line.split()) == 2)
    )
    return Fix("pull", head, steps)


def by_child(m: Mirror, task: locsets.SetTask, gold: set[str]) -> Fix | None:
    base = task.base_commit
    fixes: dict[str, list[str]] = defaultdict(list)  # the gold files' diff -> its commits
    for child in sorted(set(m.children.get(base, ()))):
        changed = m.changed(base, child)
        if gold <= changed and exact_code(m, base, changed, gold):
            fixes[m.diff(base, child, sorted(gold))].append(child)
    commit = _one_change(m, fixes)
    return None if commit is None else Fix("child", commit, ((base, commit),))


def _one_change(m: Mirror, fixes: dict[str, list[str]]) -> str | None:
    """The commit of the one change among ``fixes`` (diff -> commits with that diff): the only
    one; or the one that contains all the others (the merge of a pull request whose first
    commit is a child too); or the only one on the default branch."""
    firsts = {d: next((c for c in cs if m.on_head(c)), cs[0]) for d, cs in fixes.items()}
    if len(firsts) <= 1:
        return next(iter(firsts.values()), None)
    for c in firsts.values():
        if all(o == c or m.ok("merge-base", "--is-ancestor", o, c) for o in firsts.values()):
            return c
    on_head = [c for c in firsts.values() if m.on_head(c)]
    return on_head[0] if len(on_head) == 1 else None


def by_message(m: Mirror, task: locsets.SetTask, gold: set[str]) -> Fix | None:
    number = issue_number(task.instance_id)
    found = m.run(
        "log",
        "--format=%H",
        "--ancestry-path",
        "--reverse",
        "-E",
        f"--grep=(#|issues/){number}([^0-9]|$)",
        f"{task.base_commit}..HEAD",
        check=False,
    ).split()
    for commit in found:
        parent = m.parent(commit)
        if parent and refers_to(m.message(commit), number) and gold <= m.changed(parent, commit):
            return Fix("message", commit, ((parent, commit),))
    return None


def by_base(m: Mirror, task: locsets.SetTask, gold: set[str]) -> Fix | None:
    base = task.base_commit
    parent = m.parent(base)
    if parent is None or not refers_to(m.message(base), issue_number(task.instance_id)):
        return None
    return Fix("base", base, ((parent, base),)) if gold <= m.changed(parent, base) else None


def by_path(m: Mirror, task: locsets.SetTask, gold: set[str]) -> Fix | None:
    base = task.base_commit
    mainline = m.run(
        "rev-list",
        "--first-parent",
        "--ancestry-path",
        "--reverse",
        f"{base}..HEAD",
        check=False,
    ).split()
    for commit in mainline[:PATH_LIMIT]:
        changed = m.changed(base, commit)
        if {p for p in m.existing(base, changed - gold) if is_code(p)}:
            return None  # another code file changed first: not this fix alone
        if gold <= changed:
            return Fix("path", commit, ((base, commit),))
    return None


RULES = (by_pull, by_child, by_message, by_base, by_path)


def find_fix(m: Mirror, task: locsets.SetTask) -> Fix | None:
    gold = set(task.gold_files)
    for rule in RULES:
        fix = rule(m, task, gold)
        if fix is not None:
            return fix
    return None


def spans_of_fix(
    m: Mirror, task: locsets.SetTask, fix: Fix, languages: bool
) -> list[dict[str, object]]:
    """The gold spans (lines of the base commit) of ``fix``'s diffs of the gold files."""
    gold = sorted(task.gold_files)
    base = task.base_commit
    found: list[tuple[str, str, int, int]] = []
    for before, after in fix.steps:
        got = locsets.gold_spans_from_patch(
            m.diff(before, after, gold),
            None,
            gold,
            read=functools.partial(m.show, before),
            languages=languages,
        )
        found += got if before == base else _at_base(m, base, before, got)
    names = {(p, n) for p, n, _, _ in found}
    out: dict[tuple[str, str, int], dict[str, object]] = {}
    for path, name, start, end in found:
        if any(p == path and q.startswith(name + ".") for p, q in names):
            continue  # a class counts only when its own body changed
        kinds = {d[0]: d[1] for d in definitions_of(path, m.show(base, path) or "")}
        out[(path, name, start)] = {
            "path": path,
            "name": name,
            "kind": kinds.get(name, "function"),
            "start_line": start,
            "end_line": end,
        }
    return [out[k] for k in sorted(out, key=lambda k: (k[0], k[2], k[1]))]


def _at_base(
    m: Mirror, base: str, before: str, found: list[tuple[str, str, int, int]]
) -> list[tuple[str, str, int, int]]:
    """Spans found in ``before`` moved to the base commit's lines, by qualified name."""
    out: list[tuple[str, str, int, int]] = []
    for path, name, start, _ in found:
        then = [s[2] for s in definitions_of(path, m.show(before, path) or "") if s[0] == name]
        now = definitions_of(path, m.show(base, path) or "")
        target = name
        while target and not any(s[0] == target for s in now):
            target = target.rpartition(".")[0]  # a method the base lacks: its class
        same = [s for s in now if s[0] == target] if target else []
        if not same:
            continue
        if target == name and len(same) == len(then) and start in then:
            pick = same[then.index(start)]  # the same occurrence of an overloaded name
        else:
            pick = min(same, key=lambda s: (abs(s[2] - start), s[2]))
        out.append((path, pick[0], pick[2], pick[3]))
    return out


def fix_row(m: Mirror, task: locsets.SetTask, languages: bool) -> dict[str, object]:
    """One task's line of the output (``rule`` ``none`` when no fix was found)."""
    fix = find_fix(m, task)
    if fix is None:
        return no_fix(task)
    return {
        "instance_id": task.instance_id,
        "rule": fix.rule,
        "commit": fix.commit,
        "diffs": len(fix.steps),
        "gold_spans": spans_of_fix(m, task, fix, languages),
    }


def no_fix(task: locsets.SetTask) -> dict[str, object]:
    return {"instance_id": task.instance_id, "rule": "none", "commit": None, "gold_spans": []}


def load_fix_spans(path: Path) -> dict[str, list[dict[str, object]]]:
    """instance id -> gold spans, from the file this script writes (tasks without a fix or
    without a changed function are left out)."""
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            if row.get("gold_spans"):
                out[str(row["instance_id"])] = list(row["gold_spans"])
    return out


def summary(rows: Sequence[dict[str, object]], tasks: dict[str, locsets.SetTask]) -> str:
    """Per dataset and split: tasks, how many each rule found, how many have spans."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for r in rows:
        t = tasks[str(r["instance_id"])]
        key = (t.dataset, t.split)
        counts[(*key, "tasks")] += 1
        counts[(*key, str(r["rule"]))] += 1
        if r["gold_spans"]:
            counts[(*key, "with spans")] += 1
    keys = sorted({k[:2] for k in counts})
    rules = [f.__name__[3:] for f in RULES]
    cols = ["tasks", *rules, "none", "with spans"]
    lines = ["dataset | split | " + " | ".join(cols)]
    for k in keys:
        lines.append(" | ".join([*k, *(str(counts[(*k, c)]) for c in cols)]))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=sorted(locsets.SETS), required=True)
    ap.add_argument("--mirrors", type=Path, default=locsets.DEFAULT_MIRRORS)
    ap.add_argument("--output", type=Path, default=None)
    ap.add_argument("--only", default="", help="comma-separated instance ids")
    args = ap.parse_args(argv)
    tasks = [
        t
        for t in locsets.load_set(locsets.DEFAULT_DATA / locsets.SETS[args.set])
        if not t.gold_patch
    ]
    if args.only:
        wanted = {s.strip() for s in args.only.split(",") if s.strip()}
        tasks = [t for t in tasks if t.instance_id in wanted]
    languages = args.set != "python-more"
    rows = []
    mirrors: dict[str, Mirror] = {}
    for n, task in enumerate(sorted(tasks, key=lambda t: (t.repo, t.instance_id)), 1):
        git_dir = locsets.mirror_of(task.repo, args.mirrors)
        if git_dir is None:
            print(f"{task.instance_id}: no mirror of {task.repo}", file=sys.stderr)
            rows.append(no_fix(task))
            continue
        m = mirrors.setdefault(task.repo, Mirror(git_dir))
        row = fix_row(m, task, languages)
        spans = row["gold_spans"]
        assert isinstance(spans, list)
        print(
            f"[{n}/{len(tasks)}] {task.instance_id}: {row['rule']}, {len(spans)} span(s)",
            file=sys.stderr,
        )
        rows.append(row)
    rows.sort(key=lambda r: str(r["instance_id"]))
    output = args.output or default_output(args.set)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in rows), "utf-8")
    print(summary(rows, {t.instance_id: t for t in tasks}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
