"""Fit the relevance model's combination on the choosing repositories; judge it on the others.

    python benchmarks/fit_ranking.py FEATURES.jsonl [FEATURES.jsonl ...] \
        [--baseline WEIGHTS.json] [--write core/relevance/weights.json] [--evaluate-only] [--no-groups]

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

**Language groups** (:data:`LAYOUTS`): after the shared fit, each layout of groups of language
families gets its groups' sets fitted with the same listwise loss, each file scored by its group's
set (files of no group by the shared fit), plus ``tau`` times each set's squared distance from the
shared fit. A group needs :data:`MIN_GROUP_TASKS` choosing tasks whose gold files are of its
families, from :data:`MIN_GROUP_REPOS` repository groups, else it is left out and its files use the
shared fit; the layout and ``tau`` (:data:`TAU_GRID`, ``inf`` being the shared fit itself) are
chosen by cross-validated MRR over the same folds, the shared fit winning ties. ``--no-groups``
writes the shared fit whatever that choice (as when the judging side says the groups do not
carry over). Every set is scaled by the default set's largest weight, so files of different
groups stay comparable.

The offline scorer orders files as ``rank_task`` does, the declaration/implementation pairs
(:mod:`repomapper.relevance.pairs`) included.

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
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402

from repomapper.relevance.pairs import declaration_suffix, unite_pairs  # noqa: E402
from repomapper.relevance.weights import (  # noqa: E402
    FAMILY_EXTENSIONS,
    FEATURES,
    GRAPH_FEATURES,
    WEIGHTS_FILE,
    LanguageWeights,
    family_of,
    load_weights_file,
)

#: a grouping of the language families: (group name, its families), in order
Layout = tuple[tuple[str, tuple[str, ...]], ...]

KS = (1, 3, 5, 10)
#: the columns of the graph features (a declaration file's graph evidence counts less)
GRAPH_COLUMNS = [FEATURES.index(f) for f in sorted(GRAPH_FEATURES)]
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
        self.family = [family_of(p) or "" for p in self.paths]
        self.declarations = any(declaration_suffix(p) for p in self.paths)
        #: :func:`pairs` against each baseline, made once
        self.pairs_made: dict[tuple[bytes, float], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def gid(self, layout: Layout) -> np.ndarray:
        """Each candidate's weight set under ``layout``: 0 the default, 1 + the group's index."""
        member = {f: i + 1 for i, (_, fams) in enumerate(layout) for f in fams}
        return np.array([member.get(f, 0) for f in self.family], dtype=int)

    def per_file(self, w: np.ndarray, layout: Layout = ()) -> np.ndarray:
        """Each candidate's weights: ``w`` one set (a vector) or one row per set of ``layout``
        (the default first)."""
        return np.broadcast_to(w, self.x.shape) if w.ndim == 1 else w[self.gid(layout)]

    def scores(self, w: np.ndarray, role: float, layout: Layout = ()) -> np.ndarray:
        """Each candidate's score (before the declaration pairs)."""
        s = (self.x * self.per_file(w, layout)).sum(axis=1)
        return np.where(self.demoted & (s > 0), s * role, s)

    def ranks(self, w: np.ndarray, role: float, layout: Layout = ()) -> dict[str, int | None]:
        """Rank of each gold file among all non-test files, as rank_task orders them: score
        (with the declaration/implementation pairs united as ``rank_task`` does), then
        task-free centrality."""
        s = dict(zip(self.paths, self.scores(w, role, layout).tolist(), strict=True))
        if self.declarations:
            wf = self.per_file(w, layout)
            graph = (self.x[:, GRAPH_COLUMNS] * wf[:, GRAPH_COLUMNS]).sum(axis=1)
            whole = (self.x * wf).sum(axis=1)
            g = dict(zip(self.paths, graph.tolist(), strict=True))
            e = dict(zip(self.paths, (whole - graph).tolist(), strict=True))
            s = unite_pairs({p: s.get(p, 0.0) for p in self.hub}, g, e, defaultdict(list))
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
    key = (w0.tobytes(), role0)
    if key not in task.pairs_made:  # the same baseline is asked again for every fold and grid point
        task.pairs_made[key] = _pairs(task, w0, role0)
    return task.pairs_made[key]


def _pairs(task: Task, w0: np.ndarray, role0: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
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


def _minimize_nonnegative(loss: Callable[[np.ndarray], tuple[float, np.ndarray]]) -> np.ndarray:
    """The weights (one per feature, each >= 0) minimising ``loss``, which returns its value and
    gradient: L-BFGS-B from all ones."""
    res = minimize(
        loss,
        np.ones(len(FEATURES)),
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * len(FEATURES),
        options={"maxiter": 2000},
    )
    return np.asarray(res.x)


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

    return _minimize_nonnegative(loss)


def _fit_listwise(lists: Sequence[tuple[np.ndarray, float]], l2: float) -> np.ndarray:
    """Softmax cross-entropy of each gold file against its task's negatives (ListNet with one
    relevant item): closer to what Acc@1 and MRR reward than independent pairs."""
    padded = PaddedLists([x for x, _ in lists], [c for _, c in lists])

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = padded.loss(w)
        return value + l2 * (w @ w), grad + 2.0 * l2 * w

    return _minimize_nonnegative(loss)


class PaddedLists:
    """Lists of candidate rows (the gold file's first) padded into one array, so the listwise
    loss and its gradient are a few array operations rather than a Python loop per list."""

    def __init__(
        self,
        xs: Sequence[np.ndarray],
        weights: Sequence[float],
        offsets: Sequence[np.ndarray] | None = None,
    ):
        n = max(len(x) for x in xs)
        d = xs[0].shape[1]
        self.x = np.zeros((len(xs), n, d))
        self.offset = np.zeros((len(xs), n))
        self.mask = np.zeros((len(xs), n), dtype=bool)
        for i, x in enumerate(xs):
            self.x[i, : len(x)] = x
            self.mask[i, : len(x)] = True
            if offsets is not None:
                self.offset[i, : len(x)] = offsets[i]
        self.c = np.asarray(weights, dtype=float)
        self.total = float(self.c.sum())

    def loss(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        """The weighted mean softmax cross-entropy of the first row of each list, and its
        gradient in ``w``."""
        s = np.where(self.mask, self.x @ w + self.offset, -np.inf)
        top = s.max(axis=1)
        e = np.exp(s - top[:, None])
        z = e.sum(axis=1)
        value = float((self.c * (top + np.log(z) - s[:, 0])).sum()) / self.total
        p = self.c[:, None] * e / z[:, None]
        grad = (np.einsum("ln,lnd->d", p, self.x) - self.c @ self.x[:, 0, :]) / self.total
        return value, grad


# --------------------------------------------------------------------------------------------
# Language groups: a weight set per group of language families, shrunk towards the shared fit

#: the groupings tried (each group's files scored by its own set; every other file by the
#: shared fit, which stays the default); thin groups are dropped first (:func:`supported`)
_NOT_PYTHON = tuple(f for f in FAMILY_EXTENSIONS if f != "python")
LAYOUTS: dict[str, Layout] = {
    "other": (("other", _NOT_PYTHON),),
    "python+other": (("python", ("python",)), ("other", _NOT_PYTHON)),
    "families": (
        ("python", ("python",)),
        ("c_cpp", ("c_cpp",)),
        ("jvm", ("jvm",)),
        ("js_ts", ("js_ts",)),
        ("go", ("go",)),
        ("rust", ("rust",)),
    ),
}
#: how strongly a group's set is pulled towards the shared fit (``inf``: the shared fit itself)
TAU_GRID = (0.0, 1e-4, 1e-3, 1e-2, 1e-1, 1.0, math.inf)
#: a group gets its own set only with at least this many choosing tasks whose gold files are
#: of its families, from at least this many repository groups (else its files use the default)
MIN_GROUP_TASKS = 10
MIN_GROUP_REPOS = 3


def gold_group_of(t: Task, layout: Layout) -> set[str]:
    """The groups of ``layout`` that the task's gold files belong to."""
    member = {f: name for name, fams in layout for f in fams}
    return {member[f] for g in t.gold if (f := family_of(g) or "") in member}


def supported(tasks: Sequence[Task], layout: Layout) -> Layout:
    """``layout`` without the groups the data is too thin for (:data:`MIN_GROUP_TASKS`,
    :data:`MIN_GROUP_REPOS`): their files fall back to the shared fit."""
    count: dict[str, int] = defaultdict(int)
    repos: dict[str, set[str]] = defaultdict(set)
    for t in tasks:
        for name in gold_group_of(t, layout):
            count[name] += 1
            repos[name].add(t.row["group"])
    return tuple(
        (name, fams)
        for name, fams in layout
        if count[name] >= MIN_GROUP_TASKS and len(repos[name]) >= MIN_GROUP_REPOS
    )


def fit_groups(
    tasks: Sequence[Task],
    against: Sequence[tuple[np.ndarray, float]],
    shared: np.ndarray,
    role: float,
    layout: Layout,
    l2: float,
    tau: float,
) -> np.ndarray:
    """One row per set (the shared fit first, kept as it is; then each group of ``layout``):
    the listwise loss of :func:`_fit_listwise` with each file scored by its group's set, an L2
    penalty, and ``tau`` times the squared distance of each group's set from the shared fit."""
    nf = len(FEATURES)
    out = np.tile(shared, (len(layout) + 1, 1))
    if not layout or math.isinf(tau):
        return out
    lists: list[tuple[np.ndarray, np.ndarray, float]] = []
    for t in tasks:
        found = [pairs(t, w_, r_) for w_, r_ in against]
        golds = sorted({int(a) for g_, _, _ in found for a in g_})
        negs = sorted({int(b) for _, n_, _ in found for b in n_})
        if not golds:
            continue
        xs = np.where(t.demoted[:, None], role, 1.0) * t.x
        gid = t.gid(layout)
        for gi in golds:
            rows = [gi, *negs]
            x = xs[rows]
            g = gid[rows]
            wide = np.zeros((len(rows), len(layout) * nf))
            for i, k in enumerate(g.tolist()):
                if k:
                    wide[i, (k - 1) * nf : k * nf] = x[i]
            offset = np.where(g == 0, x @ shared, 0.0)
            lists.append((wide, offset, float(t.row["weight"]) / len(golds)))
    if not lists:
        return out
    padded = PaddedLists(
        [x for x, _, _ in lists], [c for _, _, c in lists], [o for _, o, _ in lists]
    )
    center = np.tile(shared, len(layout))

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        value, grad = padded.loss(w)
        d = w - center
        return (
            value + l2 * (w @ w) + tau * (d @ d),
            grad + 2.0 * l2 * w + 2.0 * tau * d,
        )

    res = minimize(
        loss,
        center,
        jac=True,
        method="L-BFGS-B",
        bounds=[(0.0, None)] * len(center),
        options={"maxiter": 2000},
    )
    out[1:] = np.asarray(res.x).reshape(len(layout), nf)
    return out


def cross_validate_groups(
    tasks: Sequence[Task], w0: np.ndarray, role0: float, objective: str, l2: float, role: float
) -> tuple[str, Layout, float, list[str]]:
    """The (layout name, layout, tau) with the best cross-validated MRR over the same folds
    as :func:`cross_validate` (the shared fit refitted on each fold's training side), and the
    table of every candidate; tau ``inf`` (the shared fit) wins ties."""
    folds = [
        (
            [t for t in tasks if fold_of(t.row["group"]) != k],
            [t for t in tasks if fold_of(t.row["group"]) == k],
        )
        for k in range(FOLDS)
    ]
    folds = [(a, b) for a, b in folds if a and b]
    shared = [fit(train, w0, role0, l2, role, objective) for train, _ in folds]
    results: list[tuple[float, str, float, dict[str, float]]] = []
    for name, full in LAYOUTS.items():
        for tau in TAU_GRID:
            ranks: list[tuple[Task, dict[str, int | None]]] = []
            for (train, test), ws in zip(folds, shared, strict=True):
                layout = supported(train, full)
                w = fit_groups(train, [(w0, role0), (ws, role)], ws, role, layout, l2, tau)
                ranks += [(t, t.ranks(w, role, layout)) for t in test]
            side = {
                "all": metrics([r for _, r in ranks])["MRR"],
                "Python": metrics([r for t, r in ranks if t.row["language"] == "Python"])["MRR"],
                "other": metrics([r for t, r in ranks if t.row["language"] != "Python"])["MRR"],
            }
            print(f"  cv groups {name} tau={tau:g}: MRR {side}", file=sys.stderr)
            results.append((side["all"], name, tau, side))
    best = max(results, key=lambda r: r[0])
    base = next(r for r in results if math.isinf(r[2]))
    if best[0] <= base[0] + 1e-9:
        best = base
    lines = [
        "| layout | tau | CV MRR all | Python | other languages |",
        "|---|---:|---:|---:|---:|",
    ]
    for mrr, name, tau, side in results:
        if math.isinf(tau) and name != next(iter(LAYOUTS)):
            continue  # tau inf is the shared fit whatever the layout: one row
        lines.append(
            f"| {'shared fit' if math.isinf(tau) else name} | {tau:g} | {mrr:.4f} | "
            f"{side['Python']:.4f} | {side['other']:.4f} |"
        )
    return best[1], supported(tasks, LAYOUTS[best[1]]), best[2], lines


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


Ranker = Callable[[Task], dict[str, int | None]]


def report(tasks: Sequence[Task], variants: Mapping[str, Ranker]) -> list[str]:
    out: list[str] = []
    by_group: dict[str, list[Task]] = defaultdict(list)
    for t in tasks:
        by_group[group_name(t.row)].append(t)
        if t.row["language"] != "Python":
            by_group["all other languages"].append(t)
    for g in sorted(by_group, key=lambda g: (g != "Python", g == "all other languages", g)):
        out += [f"**{g}**", ""]
        out += table(by_group[g], {**variants, "bm25": bm25_ranks})
        out.append("")
    return out


def as_matrix(lw: LanguageWeights) -> tuple[np.ndarray, float, Layout]:
    """A weights file as the fit scores it: one row per set (the default first), the role
    factor, and the layout of its groups."""
    names = sorted(lw.groups)
    layout = tuple((n, tuple(sorted(f for f, g in lw.members.items() if g == n))) for n in names)
    sets = [lw.default, *(lw.groups[n] for n in names)]
    roles = {ws.role_factor for ws in sets}
    if len(roles) > 1:
        raise SystemExit("the fit scores one role factor for every set; this file has several")
    w = np.array([[ws.weights[f] for f in FEATURES] for ws in sets])
    return w, lw.default.role_factor, layout


def rounded(w: np.ndarray) -> dict[str, float]:
    return {f: float(f"{v:.4g}") for f, v in zip(FEATURES, w.tolist(), strict=True)}


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
    ap.add_argument(
        "--no-groups",
        action="store_true",
        help="write the shared fit only, whatever the groups' cross-validation says",
    )
    args = ap.parse_args(argv)

    w_base, role0, layout0 = as_matrix(load_weights_file(args.baseline))
    w0 = w_base[0]
    rows = load_rows(args.features)
    tasks = [Task(r) for r in rows]
    choose = [t for t in tasks if t.row["split"] == "choose"]
    judge = [t for t in tasks if t.row["split"] == "judge"]
    print(f"{len(choose)} choosing task(s), {len(judge)} judging task(s)", file=sys.stderr)
    before: Ranker = lambda t: t.ranks(w_base, role0, layout0)  # noqa: E731
    if args.evaluate_only:
        print("\n".join(report(judge, {args.baseline.name: before})))
        return 0
    objective, l2, role = cross_validate(choose, w0, role0)
    w = fit(choose, w0, role0, l2, role, objective)
    name, layout, tau, cv_lines = cross_validate_groups(choose, w0, role0, objective, l2, role)
    chosen_name = name if layout else ""
    if args.no_groups:
        layout = ()
    sets = fit_groups(choose, [(w0, role0), (w, role)], w, role, layout, l2, tau)
    sets = sets / sets[0].max()  # one scale for every set: the order across groups is kept
    sets_r = [rounded(row) for row in sets]
    wv = np.array([[r[f] for f in FEATURES] for r in sets_r])
    print("weights:", json.dumps(sets_r), "role_factor:", role, file=sys.stderr)
    print("## Cross-validation of the language groups (choosing repositories)\n")
    print("\n".join(cv_lines) + "\n")
    print(f"chosen: {'shared fit' if not layout else name} (tau {tau:g}), groups {layout}\n")
    variants: dict[str, Ranker] = {"fitted, shared": lambda t: t.ranks(wv[0], role)}
    if layout:
        variants["fitted, groups"] = lambda t: t.ranks(wv, role, layout)
    variants["before the fit"] = before
    print("## Choosing repositories (fitted on these)\n")
    print("\n".join(report(choose, variants)))
    print("## Judging repositories\n")
    print("\n".join(report(judge, variants)))
    if args.write:
        groups = sorted({t.row["group"] for t in choose})
        fitted = wv if layout else wv[:1]
        doc: dict[str, object] = {
            "about": "the relevance model's fitted combination; written by "
            "benchmarks/fit_ranking.py, read by repomapper.relevance.weights",
            "weights": sets_r[0],
            "role_factor": role,
        }
        if layout:
            doc["groups"] = {
                g: {"families": list(fams), "weights": sets_r[i], "role_factor": role}
                for i, (g, fams) in enumerate(layout, 1)
            }
        doc["fitted_on"] = {
            "data": sorted(p.name for p in args.features),
            "split": "choosing repositories of benchmarks/locsets.py (by repository)",
            "tasks": len(choose),
            "repository_groups": groups,
            "objective": f"{objective} (of {list(OBJECTIVES)}, by cross-validated MRR): "
            f"each gold file against the best {NEGATIVES} other candidates, "
            "dataset-weighted, L2",
            "l2": l2,
            "language_groups": (
                f"{name}: each group's set pulled towards the shared fit with tau {tau:g} "
                f"(of {list(TAU_GRID)} and layouts {list(LAYOUTS)}, by cross-validated MRR); "
                f"a group needs {MIN_GROUP_TASKS} choosing tasks from {MIN_GROUP_REPOS} "
                "repositories, else its files use the default"
                if layout
                else "none: the shared fit scores every file ("
                + (
                    f"--no-groups; cross-validation chose {chosen_name} with tau {tau:g}"
                    if args.no_groups and chosen_name
                    else "by cross-validated MRR"
                )
                + ")"
            ),
            "choose_mrr": round(metrics([t.ranks(fitted, role, layout) for t in choose])["MRR"], 4),
        }
        args.write.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n", encoding="utf-8")
        print(f"wrote {args.write}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
