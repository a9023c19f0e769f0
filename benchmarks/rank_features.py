"""Dump the relevance model's features for the tasks of a localization set (the fit's data).

    python benchmarks/rank_features.py --set python-more --split all --sample 4 \
        --out /tmp/repomapper-learn/python-more.jsonl [--mirrors DIR] [--work DIR]

For each task of the sample (see :mod:`locsets` for the split and the sample), the tree at the
base commit is written into a temporary directory, ranked by ``RepoMap.rank(task=...)``, and the
values of every feature (``rank_task(..., features=True)``, captured where the ranking stage calls
it: nothing of the model is computed again here) are written as one JSON line: per file with a
non-zero feature, its values; per file, its hub-ness (needed to order the files without
evidence); the demoted files; the gold files; the rank of each gold file in repomapper's ranking
and in BM25's. Test files are left out of the candidates and of both rankings (as the set's
README says). A task already in ``--out`` is not run again (a run can be resumed); a task that
fails is a line with ``error``. Trees go to ``--work`` (a temporary directory outside the
repository, removed after each task); extraction caches are kept per repository under it, so
the tasks of one repository reuse the files their commits share.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402
from localization import bm25_rank, git_ceiling, log  # noqa: E402

DEFAULT_WORK = Path(tempfile.gettempdir()) / "repomapper-learn"


class Capture:
    """Wraps the ranking stage's ``rank_task`` so that it returns the features too."""

    def __init__(self) -> None:
        import repomapper.stages.ranking as stage

        self.stage = stage
        self.original = stage.rank_task
        self.last = None

    def __enter__(self) -> Capture:
        def wrapped(*args, **kwargs):
            result = self.original(*args, **kwargs, features=True)
            self.last = result
            return result

        self.stage.rank_task = wrapped
        return self

    def __exit__(self, *exc: object) -> None:
        self.stage.rank_task = self.original


def run_one(
    task: locsets.SetTask, tasks_file: Path, work: Path, mirrors: Path, jobs: int, bm25: bool
) -> dict:
    from repomapper import RepoMap
    from repomapper.relevance.roles import TEST, file_role

    row: dict = {
        "instance_id": task.instance_id,
        "repo": task.repo,
        "group": task.group,
        "split": task.split,
        "dataset": task.dataset,
        "language": task.language,
        "weight": task.weight,
        "gold_files": list(task.gold_files),
    }
    start = time.perf_counter()
    trees = work / "trees"
    trees.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="tree-", dir=trees))
    try:
        root = locsets.materialize(tasks_file, task, tmp / "tree", mirrors)
        with git_ceiling(tmp), Capture() as cap:
            rm = RepoMap(root, 1024, cache_dir=work / "cache" / task.group, jobs=jobs)
            try:
                ranked = rm.rank(task=task.problem_statement)
            finally:
                rm.close()
        tr = cap.last
        if tr is None:
            raise RuntimeError("the task had no terms: no relevance ranking")
        order = [f.path for f in ranked.files if file_role(f.path) != TEST]
        keep = set(order)
        cands: dict[str, dict[str, float]] = {}
        for feat, vals in sorted(tr.features.items()):
            if feat in ("hub", "demoted"):
                continue
            for p, v in vals.items():
                if p in keep and v:
                    cands.setdefault(p, {})[feat] = round(v, 6)
        row["candidates"] = cands
        row["hub"] = {p: round(v, 6) for p, v in tr.features.get("hub", {}).items() if p in keep}
        row["demoted"] = sorted(p for p in tr.features.get("demoted", {}) if p in keep)
        row["files"] = len(order)
        pos = {p: i + 1 for i, p in enumerate(order)}
        row["rank"] = {g: pos.get(g) for g in task.gold_files}
        if bm25:
            docs = {p: (root / p).read_text("utf-8", errors="replace") for p in order}
            bpos = {p: i + 1 for i, p in enumerate(bm25_rank(task.problem_statement, docs))}
            row["bm25_rank"] = {g: bpos.get(g) for g in task.gold_files}
    except Exception as exc:  # an error line, never the end of the run
        row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    row["seconds"] = round(time.perf_counter() - start, 1)
    return row


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=sorted(locsets.SETS), required=True)
    ap.add_argument("--split", choices=("choose", "judge", "all"), default="all")
    ap.add_argument("--sample", type=int, default=None, help="at most N tasks per repository")
    ap.add_argument("--data", type=Path, default=locsets.DEFAULT_DATA)
    ap.add_argument("--mirrors", type=Path, default=locsets.DEFAULT_MIRRORS)
    ap.add_argument("--work", type=Path, default=DEFAULT_WORK, help="trees and caches")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--only-repos", default="", help="comma-separated owner/name to run")
    ap.add_argument("--no-bm25", action="store_true")
    args = ap.parse_args(argv)

    tasks_file = args.data / locsets.SETS[args.set]
    tasks = locsets.select(locsets.load_set(tasks_file), args.split, args.sample)
    if args.only_repos:
        wanted = {r.strip().lower() for r in args.only_repos.split(",")}
        tasks = [t for t in tasks if t.repo.lower() in wanted]
    done: set[str] = set()
    if args.out.is_file():
        for line in args.out.read_text(encoding="utf-8").splitlines():
            if line.strip():
                done.add(json.loads(line)["instance_id"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    todo = [t for t in tasks if t.instance_id not in done]
    log(f"{len(tasks)} task(s), {len(todo)} to run")
    with args.out.open("a", encoding="utf-8") as out:
        for n, task in enumerate(todo, 1):
            row = run_one(task, tasks_file, args.work, args.mirrors, args.jobs, not args.no_bm25)
            out.write(json.dumps(row, sort_keys=True) + "\n")
            out.flush()
            log(
                f"[{n}/{len(todo)}] {task.instance_id}: "
                + (row.get("error") or f"{row['files']} files, gold {row['rank']}")
                + f" ({row['seconds']}s)"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
