"""Would the files changed together with the best files help? A probe of a co-change signal on
the feature dumps of ``rank_features.py``, before any of it is built into the model.

    python benchmarks/cochange_probe.py DUMP.jsonl [DUMP.jsonl ...] [--commits 2000] [--seeds 5]

For each task of the dumps, the history of its repository up to the task's base commit (its
mirror's ``git log --no-merges --name-only``, the last ``--commits`` commits, commits of more
than 50 files left out) gives, for each file, the files changed in the same commits. The
``--seeds`` best files by the shipped weights (scored from the dump as the fit scores them) lend
their score to the files they changed with, each in proportion to the share of the seed's
commits that changed it; normalized to the best file, that is a ``cochange`` feature. The model
with it added at each weight of :data:`GRID` (every other weight held) is scored on the dump's
choosing and judging tasks, per set, as ``fit_ranking.py`` scores them. Nothing is written.

The mirror's history after the base commit is never read (``git log BASE``), so the fix itself
and what came after it are not seen.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402
import numpy as np  # noqa: E402

GRID = (0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 1.2)
#: a commit that changes more files than this says nothing of which files belong together
MAX_COMMIT_FILES = 50


def history(git_dir: Path, base: str, commits: int) -> list[list[str]]:
    """The files of each of the last ``commits`` commits up to ``base`` (merges left out); a
    mirror whose history stops early (a shallow or partial clone) gives what it has."""
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(git_dir),
            "log",
            "--no-merges",
            "--name-only",
            "--format=@%H",
            f"-n{commits}",
            base,
        ],
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
        env={**os.environ, "GIT_NO_LAZY_FETCH": "1"},
    )
    if proc.returncode != 0:
        print(
            f"{git_dir} {base}: the history stops early ({proc.stderr.strip()[-120:]})",
            file=sys.stderr,
        )
    out = proc.stdout
    found: list[list[str]] = []
    for line in out.splitlines():
        if line.startswith("@"):
            found.append([])
        elif line.strip() and found:
            found[-1].append(line.strip())
    return found


def cochange(
    commits: Sequence[Sequence[str]], known: set[str], seeds: Sequence[tuple[str, float]]
) -> dict[str, float]:
    """Each file's share of the seeds' commits, weighted by the seeds' scores, normalized to
    the best file."""
    changed: Counter[str] = Counter()
    together: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for c in commits:
        files = [f for f in c if f in known]
        if not files or len(files) > MAX_COMMIT_FILES:
            continue
        for f in files:
            changed[f] += 1
            together[f].update(g for g in files if g != f)
    score: Counter[str] = Counter()
    for seed, s in seeds:
        for g, n in together[seed].items():
            score[g] += s * n / changed[seed]
    top = max(score.values(), default=0.0)
    return {p: v / top for p, v in score.items()} if top > 0 else {}


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dumps", type=Path, nargs="+")
    ap.add_argument("--commits", type=int, default=2000)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--mirrors", type=Path, default=locsets.DEFAULT_MIRRORS)
    args = ap.parse_args(argv)

    import repomapper.relevance.weights as weights

    weights.FEATURES = (*weights.FEATURES, "cochange")  # before fit_ranking reads them
    import fit_ranking as fit

    doc = json.loads(weights.WEIGHTS_FILE.read_text(encoding="utf-8"))
    doc["weights"]["cochange"] = 0.0
    w0, role, layout = fit.as_matrix(weights.parse_weights(doc, str(weights.WEIGHTS_FILE)))
    column = weights.FEATURES.index("cochange")
    meta: dict[str, Mapping[str, str]] = {}
    for name in locsets.SETS.values():
        for t in locsets.load_set(locsets.DEFAULT_DATA / name):
            meta[t.instance_id] = {"repo": t.repo, "base": t.base_commit}
    by_part: defaultdict[str, list[fit.Task]] = defaultdict(list)
    for row in fit.load_rows(args.dumps):
        task = fit.Task(row)
        git_dir = locsets.mirror_of(meta[row["instance_id"]]["repo"], args.mirrors)
        if git_dir is None:
            print(f"no mirror for {row['instance_id']}: left out", file=sys.stderr)
            continue
        s = task.scores(w0[0], role)
        seeds = [(task.paths[i], float(s[i])) for i in np.argsort(-s, kind="stable")[: args.seeds]]
        found = cochange(
            history(git_dir, meta[row["instance_id"]]["base"], args.commits),
            set(row["hub"]),
            [x for x in seeds if x[1] > 0],
        )
        for p, v in found.items():
            row["candidates"].setdefault(p, {})["cochange"] = v
        lang = "python" if row["language"] == "Python" else "other languages"
        by_part[f"{row['split']}, {lang}"].append(fit.Task(row))
    for part, tasks in sorted(by_part.items()):
        print(f"\n**{part}** ({len(tasks)} tasks)\n")
        print("| cochange weight | Acc@1 | Acc@5 | Acc@10 | MRR |\n|---:|---:|---:|---:|---:|")
        for v in GRID:
            w = w0.copy()
            w[:, column] = v
            m = fit.metrics([t.ranks(w, role, layout) for t in tasks])
            print(
                f"| {v:g} | "
                + " | ".join(f"{m[k]:.3f}" for k in ("Acc@1", "Acc@5", "Acc@10", "MRR"))
                + " |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
