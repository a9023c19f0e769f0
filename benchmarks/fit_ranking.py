"""Fit the relevance model's combination on the choosing repositories; judge it on the others.

    python benchmarks/fit_ranking.py FEATURES.jsonl [FEATURES.jsonl ...] \
        [--write core/relevance/weights.json] [--evaluate-only]

The input is what ``benchmarks/rank_features.py`` dumps: per task, every candidate file's
feature values (:data:`repomapper.relevance.weights.FEATURES`), its hub-ness, whether its role is
demoted, and the gold files. The model is the one ``rank_task`` runs: a file's score is the
weighted sum of its features (weights >= 0), times ``role_factor`` for a demoted file.

**Fitted on the choosing repositories only** (the split of :mod:`locsets`, by repository): a
pairwise logistic loss (RankNet) over (gold file, other candidate) pairs of each task, the
other candidates being the 100 best by the weights the features were dumped with; each task
weighs its dataset's weight (:data:`locsets.DATASET_WEIGHT`: noisier gold counts less), spread
over its pairs, and an L2 penalty keeps the weights small. ``scipy.optimize.minimize``
(L-BFGS-B, bounds >= 0) fits the weights; the L2 strength and the role factor are chosen from
small grids by cross-validation over the choosing repositories (folds by repository group: a
fold's tasks are scored by weights fitted on the other folds), by mean reciprocal rank. The weights
are then scaled so the largest is 1 (the ranking does not change) and written, with what they
were fitted on, to the package's weights file.

The judging repositories are scored too (Acc@1/3/5/10 and MRR, against BM25 and the weights the
features were dumped with), per set and language group, so a fit is seen on repositories it
did not see; they never enter the fit.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402

from repomapper.relevance.weights import FEATURES, WEIGHTS_FILE, load_weights_file  # noqa: E402

KS = (1, 3, 5, 10)
NEGATIVES = 100
L2_GRID = (1e-4, 1e-3, 1e-2)
ROLE_GRID = (0.25, 0.5, 0.75, 1.0)
FOLDS = 5
OBJECTIVES = ("pairwise", "listwise")


def load_rows(paths: Sequence[Path]) -> list[dict]:
    rows: dict[str, dict] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if "error" not in row:  # a task in several files (a resumed run) counts once
                    rows[row["instance_id"]] = row
    return [rows[k] for k in sorted(rows)]


def vector(values: Mapping[str, float]) -> np.ndarray:
    return np.array([float(values.get(f, 0.0)) for f in FEATURES])


class Task:
    """One task's candidates as a matrix (rows: candidate files, columns: FEATURES)."""

    def __init__(self, row: dict):
        self.row = row
        self.paths = sorted(row["candidates"])
        self.x = np.array([vector(row["candidates"][p]) for p in self.paths]).reshape(
            len(self.paths), len(FEATURES)
        )
        demoted = set(row["demoted"])
        self.demoted = np.array([p in demoted for p in self.paths], dtype=bool)
        self.gold = [g for g in row["gold_files"] if g in row["hub"]]
        self.hub = row["hub"]

    def scores(self, w: np.ndarray, role: float) -> np.ndarray:
        s = self.x @ w
        return np.where(self.demoted & (s > 0), s * role, s)

    def ranks(self, w: np.ndarray, role: float) -> dict[str, int | None]:
        """Rank of each gold file among all non-test files, as rank_task orders them: score,
        then task-free centrality."""
        s = dict(zip(self.paths, self.scores(w, role).tolist(), strict=True))
        key = {p: (s.get(p, 0.0), self.hub.get(p, 0.0)) for p in self.hub}
        out: dict[str, int | None] = {}
        for g in self.row["gold_files"]:
            if g not in key:
                out[g] = None
                continue
            kg = key[g]
            out[g] = 1 + sum(1 for k in key.values() if k > kg)
        return out


def metrics(ranks: Sequence[Mapping[str, int | None]]) -> dict[str, float]:
    res: dict[str, float] = {}
    n = len(ranks)
    for k in KS:
        hit = 0
        for r in ranks:
            vals = list(r.values())
            if vals and all(v is not None for v in vals):
                need = min(k, len(vals))
                hit += sum(1 for v in vals if v is not None and v <= k) >= need
        res[f"Acc@{k}"] = hit / n if n else 0.0
    rr = []
    for r in ranks:
        found = [v for v in r.values() if v is not None]
        rr.append(1.0 / min(found) if found else 0.0)
    res["MRR"] = sum(rr) / n if n else 0.0
    return res


def pairs(task: Task, w0: np.ndarray, role0: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gold rows, negative rows, as index arrays into task.x) for the gold files that are
    candidates, against the best NEGATIVES other candidates by the dump's weights."""
    idx = {p: i for i, p in enumerate(task.paths)}
    gold = [idx[g] for g in task.gold if g in idx]
    if not gold:
        return np.zeros(0, int), np.zeros(0, int), np.zeros(0, int)
    s0 = task.scores(w0, role0)
    goldset = set(gold)
    order = sorted(
        (i for i in range(len(task.paths)) if i not in goldset), key=lambda i: (-s0[i], i)
    )
    neg = order[:NEGATIVES]
    g = np.repeat(gold, len(neg))
    n = np.tile(neg, len(gold))
    return g, n, np.full(len(g), 0)


def fit(
    tasks: Sequence[Task],
    w0: np.ndarray,
    role0: float,
    l2: float,
    role: float,
    objective: str = "pairwise",
) -> np.ndarray:
    """RankNet weights (>= 0) for these tasks at this L2 strength and role factor: fitted
    against the best candidates of the dump's weights, then once more against those of the
    first fit too (the files a fitted model would put on top are the pairs that matter)."""
    w = fit_once(tasks, [(w0, role0)], l2, role, objective)
    return fit_once(tasks, [(w0, role0), (w, role)], l2, role, objective)


def fit_once(
    tasks: Sequence[Task],
    against: Sequence[tuple[np.ndarray, float]],
    l2: float,
    role: float,
    objective: str = "pairwise",
) -> np.ndarray:
    blocks = []
    #: listwise: per gold file, (its row first, then the negatives' rows; the task's weight)
    lists: list[tuple[np.ndarray, float]] = []
    for t in tasks:
        found = [pairs(t, w_, r_) for w_, r_ in against]
        uniq = sorted(
            {(int(a), int(b)) for g_, n_, _ in found for a, b in zip(g_, n_, strict=True)}
        )
        g = np.array([a for a, _ in uniq], dtype=int)
        n = np.array([b for _, b in uniq], dtype=int)
        if not len(g):
            continue
        xg = np.where(t.demoted[g, None], role, 1.0) * t.x[g]
        xn = np.where(t.demoted[n, None], role, 1.0) * t.x[n]
        blocks.append((xg - xn, np.full(len(g), float(t.row["weight"]) / len(g))))
        golds = sorted(set(g.tolist()))
        negs = sorted(set(n.tolist()))
        xs = np.where(t.demoted[:, None], role, 1.0) * t.x
        for gi in golds:
            lists.append((xs[[gi, *negs]], float(t.row["weight"]) / len(golds)))
    if not blocks:
        raise SystemExit("no task with a gold file among its candidates: nothing to fit")
    if objective == "listwise":
        return _fit_listwise(lists, l2)
    d = np.vstack([b[0] for b in blocks])
    c = np.concatenate([b[1] for b in blocks])
    total = c.sum()

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        m = d @ w
        value = float((c * np.logaddexp(0.0, -m)).sum() / total + l2 * (w @ w))
        sig = 0.5 * (1.0 + np.tanh(-m / 2.0))  # = 1 / (1 + exp(m)), stable
        grad = -(d.T @ (c * sig)) / total + 2.0 * l2 * w
        return value, grad

    res = minimize(
        loss,
        np.ones(len(FEATURES)),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * len(FEATURES),
        options={"maxiter": 2000},
    )
    return np.asarray(res.x)


def _fit_listwise(lists: Sequence[tuple[np.ndarray, float]], l2: float) -> np.ndarray:
    """Softmax cross-entropy of each gold file against its task's negatives (ListNet with one
    relevant item): closer to what Acc@1 and MRR reward than independent pairs."""
    total = sum(c for _, c in lists)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        value = 0.0
        grad = np.zeros_like(w)
        for x, c in lists:
            s = x @ w
            top = s.max()
            e = np.exp(s - top)
            z = e.sum()
            value += c * (top + math.log(z) - s[0])
            grad += c * ((e / z) @ x - x[0])
        return value / total + l2 * (w @ w), grad / total + 2.0 * l2 * w

    res = minimize(
        loss,
        np.ones(len(FEATURES)),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * len(FEATURES),
        options={"maxiter": 2000},
    )
    return np.asarray(res.x)


def fold_of(group: str) -> int:
    return hashlib.sha256(group.encode()).digest()[0] % FOLDS


def cross_validate(tasks: Sequence[Task], w0: np.ndarray, role0: float) -> tuple[str, float, float]:
    """The (objective, L2 strength, role factor) with the best cross-validated MRR."""
    best: tuple[float, str, float, float] | None = None
    for objective in OBJECTIVES:
        for l2 in L2_GRID:
            for role in ROLE_GRID:
                ranks = []
                for k in range(FOLDS):
                    train = [t for t in tasks if fold_of(t.row["group"]) != k]
                    test = [t for t in tasks if fold_of(t.row["group"]) == k]
                    if not test or not train:
                        continue
                    w = fit(train, w0, role0, l2, role, objective)
                    ranks += [t.ranks(w, role) for t in test]
                mrr = metrics(ranks)["MRR"]
                print(f"  cv {objective} l2={l2:g} role={role:g}: MRR {mrr:.4f}", file=sys.stderr)
                if best is None or mrr > best[0] + 1e-9:
                    best = (mrr, objective, l2, role)
    assert best is not None
    return best[1], best[2], best[3]


def bm25_ranks(t: Task) -> dict[str, int | None]:
    return dict(t.row.get("bm25_rank", {}))


def table(tasks: Sequence[Task], variants: Mapping[str, object]) -> list[str]:
    lines = ["| variant | tasks | " + " | ".join(f"Acc@{k}" for k in KS) + " | MRR |"]
    lines.append("|---|---:|" + "---:|" * (len(KS) + 1))
    for name, get in variants.items():
        m = metrics([get(t) for t in tasks])  # type: ignore[operator]
        lines.append(
            f"| {name} | {len(tasks)} | "
            + " | ".join(f"{m[f'Acc@{k}']:.3f}" for k in KS)
            + f" | {m['MRR']:.3f} |"
        )
    return lines


def group_name(row: dict) -> str:
    if row["language"] == "Python":
        return "Python"
    return locsets.LANGUAGE_GROUP.get(row["language"], row["language"])


def report(
    tasks: Sequence[Task], w: np.ndarray, role: float, w0: np.ndarray, role0: float
) -> list[str]:
    out: list[str] = []
    by_group: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_group[group_name(t.row)].append(t)
        if t.row["language"] != "Python":
            by_group["all other languages"].append(t)
    for g in sorted(by_group, key=lambda g: (g != "Python", g == "all other languages", g)):
        out += [f"**{g}**", ""]
        out += table(
            by_group[g],
            {
                "fitted": lambda t: t.ranks(w, role),
                "before the fit": lambda t: t.ranks(w0, role0),
                "bm25": bm25_ranks,
            },
        )
        out.append("")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("features", type=Path, nargs="+")
    ap.add_argument(
        "--baseline",
        type=Path,
        default=WEIGHTS_FILE,
        help="the weights the features were dumped with (default: the shipped file)",
    )
    ap.add_argument("--write", type=Path, default=None, help="write the fitted weights here")
    ap.add_argument("--evaluate-only", action="store_true", help="score --baseline, fit nothing")
    args = ap.parse_args(argv)

    base = load_weights_file(args.baseline)
    w0 = np.array([base.weights[f] for f in FEATURES])
    role0 = base.role_factor
    rows = load_rows(args.features)
    tasks = [Task(r) for r in rows]
    choose = [t for t in tasks if t.row["split"] == "choose"]
    judge = [t for t in tasks if t.row["split"] == "judge"]
    print(f"{len(choose)} choosing task(s), {len(judge)} judging task(s)", file=sys.stderr)
    if args.evaluate_only:
        print("\n".join(report(judge, w0, role0, w0, role0)))
        return 0
    objective, l2, role = cross_validate(choose, w0, role0)
    w = fit(choose, w0, role0, l2, role, objective)
    w = w / w.max()
    weights = {f: float(f"{v:.4g}") for f, v in zip(FEATURES, w.tolist(), strict=True)}
    wv = np.array([weights[f] for f in FEATURES])
    print("weights:", json.dumps(weights), "role_factor:", role, file=sys.stderr)
    print("## Choosing repositories (fitted on these)\n")
    print("\n".join(report(choose, wv, role, w0, role0)))
    print("## Judging repositories\n")
    print("\n".join(report(judge, wv, role, w0, role0)))
    if args.write:
        groups = sorted({t.row["group"] for t in choose})
        doc = {
            "about": "the relevance model's fitted combination; written by "
            "benchmarks/fit_ranking.py, read by repomapper.relevance.weights",
            "weights": weights,
            "role_factor": role,
            "fitted_on": {
                "data": sorted(p.name for p in args.features),
                "split": "choosing repositories of benchmarks/locsets.py (by repository)",
                "tasks": len(choose),
                "repository_groups": groups,
                "objective": f"{objective} (of {list(OBJECTIVES)}, by cross-validated MRR): "
                f"each gold file against the best {NEGATIVES} other candidates, "
                "dataset-weighted, L2",
                "l2": l2,
                "choose_mrr": round(metrics([t.ranks(wv, role) for t in choose])["MRR"], 4),
            },
        }
        args.write.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        print(f"wrote {args.write}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
