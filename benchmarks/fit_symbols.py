"""Fit the symbol scoring's constants on the choosing repositories; judge them on the others.

    python benchmarks/fit_symbols.py --choose CHOOSE.jsonl [CHOOSE.jsonl ...] \
        [--judge JUDGE.jsonl ...] [--write core/relevance/symbol_weights.json]

The input is what ``benchmarks/localization.py --dump`` writes for the tasks with gold spans
(the functions the fix changed): per task, the definitions of the 50 best files with each one's
features (:class:`repomapper.relevance.symbols.DefinitionFeatures`: its named evidence, its
share of a message, the task's words in its name, header and body, its file's relevance, ...),
each file's identifiers in the reference graph's order, and which files the task names.

**The replay.** For a set of constants (:class:`repomapper.relevance.symbol_weights.SymbolWeights`)
this script scores every definition by the scoring's own combination of its features
(:func:`repomapper.relevance.symbols.combined`: named evidence, the words evidence
normalized to the best definition, a named class lending to its best member and keeping
``owner_share``), orders each file's definitions as
``RankedRepository.definitions_in`` does, and merges the files as ``map_items`` does (the k-th
symbol of a file wanted as its file's score times ``place_share / k ** place_power``, or times
its evidence over the task's best raised to ``evidence_power`` when that is more), with lines
of a shape shown before priced down as ``repomapper.render.repriced`` does; the distinct symbols
in that order are ``ranked_symbols``. With the constants the dump was made with, the replay
gives the recorded order (checked on every run: the number of tasks whose first 40 symbols
agree is printed; the rest part past the first ten, where the 51st file's symbols, which the
dump leaves out, come in). ``tests/test_symbol_weights.py`` holds the replay to a real map.

**The fit.** The metric is the one ``localization.py`` reports at function level: Acc@1, Acc@5
and Acc@10 (every gold span among the first k symbols, or the first k all gold when there are
more), with the reciprocal rank of the first gold span added to smooth it; each task weighs its
dataset's weight (:data:`locsets.DATASET_WEIGHT`). The order is a step function of the
constants, so they are fitted by coordinate search over a grid per constant, from the shipped
values, until no step helps (a small L1 pull towards the shipped values breaks ties, so a
constant the data says nothing about stays where it was). Folds by repository group give the
cross-validated figure on the choosing side; the final fit uses every choosing task. The judging
tasks are scored with the shipped and the fitted constants, never fitted on.
"""

from __future__ import annotations

import argparse
import heapq
import json
import math
import multiprocessing
import multiprocessing.pool
import os
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402

from repomapper.ranked import name_suffixes, ordered_definitions, symbol_want  # noqa: E402
from repomapper.relevance.symbol_weights import (  # noqa: E402
    SYMBOL_WEIGHT_NAMES,
    SYMBOL_WEIGHTS_FILE,
    SymbolWeights,
    load_symbol_weights,
)
from repomapper.relevance.symbols import DefinitionFeatures, combined  # noqa: E402
from repomapper.render import REPEAT_FACTOR  # noqa: E402

#: how the input files are made (written beside the fitted values)
DUMPS = (
    "benchmarks/localization.py --set SET --split choose --spans-only --no-ablation "
    "--no-write --dump SET-choose.jsonl (every task of python-more and multilang)"
)
KS = (1, 5, 10)
#: the grid each constant is searched over
GRID: dict[str, tuple[float, ...]] = {
    "words": (0.05, 0.1, 0.2, 0.3, 0.4, 0.6, 0.8, 1.2, 1.6, 2.4, 3.2, 4.8),
    "name": (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 9.0),
    "doc": (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0),
    "body": (0.0, 0.25, 0.5, 1.0, 1.5, 2.0, 3.0),
    "message": (0.0, 0.2, 0.4, 0.8, 1.2, 1.6, 2.4, 3.2, 4.8),
    "owner_share": (0.1, 0.25, 0.5, 0.75, 1.0),
    "evidence_power": (0.1, 0.15, 0.2, 0.25, 0.35, 0.5, 0.7, 1.0, 1.5, 2.0),
    "place_share": (0.1, 0.2, 0.35, 0.5, 0.7, 1.0),
    "place_power": (0.5, 1.0, 1.5, 2.0, 3.0, 4.0),
}
#: the map's file recall, by proxy: a gold file among the files of the first n symbols (a
#: 1,024-token task map shows a few dozen entries); the fit keeps it, as the symbols' order
#: decides which files the map has room for
MAP_SYMBOLS = (20, 40)
#: the pull towards the shipped values, per unit of a constant's log-distance (ties only)
PULL = 1e-4
FOLDS = 5
#: the symbols replayed (the metric looks at the first 10; the first gold span's rank at these)
DEPTH = 50

Key = tuple[str, str, int]


@dataclass
class Definition:
    key: Key
    end: int
    #: what the scoring made it of, as ``localization.py --dump`` wrote it (None: the scoring
    #: did not reach it, a file the task names ranked past the 50 whose definitions are scored)
    f: DefinitionFeatures | None
    #: its line's shape (:func:`repomapper.render.line_shape`): repeats are priced down
    shape: str | None


def _features(dumped: dict | None) -> DefinitionFeatures | None:
    """A dumped definition's features (JSON: the class it is a member of as a list)."""
    if dumped is None:
        return None
    member = dumped["member_of"]
    return DefinitionFeatures(**{**dumped, "member_of": tuple(member) if member else None})


@dataclass
class File:
    path: str
    score: float
    named: bool
    #: identifier -> its definitions in the symbol table's order
    tags: dict[str, list[Definition]]
    graph_order: list[str]


class Task:
    def __init__(self, row: dict):
        self.id = row["instance_id"]
        self.group = locsets.repo_group(row["repo"])
        self.weight = locsets.DATASET_WEIGHT.get(row["dataset"], 0.5)
        self.spans = [tuple(s) for s in row["gold_spans"]]
        self.gold_files = set(row["gold_files"])
        self.recorded = [(s["path"], s["name"], s["line"]) for s in row["symbols"]]
        self.files: list[File] = []
        self.complete = True
        for f in row["definitions"]:
            tags: dict[str, list[Definition]] = {}
            for ident, _which, _evidence, rows in f["defs"]:
                if ident in tags:
                    continue
                tags[ident] = []
                for r in rows:
                    if len(r) < 9:
                        self.complete = False
                        continue
                    key = (f["path"], r[3], r[0])
                    tags[ident].append(Definition(key, r[1], _features(r[7]), r[8]))
            self.files.append(File(f["path"], f["score"], f["named"], tags, f["graph_order"]))
        #: the features of the definitions the scoring reached (the others have no evidence)
        self.features = {
            d.key: d.f for f in self.files for ds in f.tags.values() for d in ds if d.f is not None
        }
        #: per file and set of scored qualified names, the identifiers they may be listed under
        self._names: dict[tuple[str, frozenset[str]], set[str]] = {}

    # ---------------------------------------------------------------------------------------
    def evidence(self, w: SymbolWeights) -> dict[Key, tuple[float, float]]:
        """Per definition with any: (its score, its whole task evidence), as the map has them
        (:func:`repomapper.relevance.symbols.combined`)."""
        return {k: (e.score or 0.0, e.total) for k, e in combined(self.features, w).items()}

    def symbols(self, w: SymbolWeights, depth: int = DEPTH) -> list[tuple[str, str, int, int]]:
        """The distinct symbols of the map's order under ``w``: (path, name, line, end line)."""
        ev = self.evidence(w)
        best = max((e for _, e in ev.values()), default=0.0)
        streams = []
        firsts: list[tuple[File, tuple[str, int | None]]] = []
        by_path: dict[str, list[str]] = {}
        for path, qualified, _ in ev:
            by_path.setdefault(path, []).append(qualified)
        for pos, f in enumerate(self.files):
            entries = self._definitions_in(f, ev, by_path.get(f.path, []))[:depth]
            if f.named and entries and entries[0][2] > 0:
                firsts.append((f, entries[0][:2]))
                streams.append((pos, f, entries, True))
            else:
                streams.append((pos, f, entries, False))
        wanted: list[tuple[tuple[float, int, int], File, str, int | None, float]] = []
        for pos, f, entries, first in streams:
            last = f.score
            for k, (ident, which, e) in enumerate(entries):
                want = min(last, symbol_want(f.score, k, e, best, w))
                last = want
                if k == 0 and first:
                    continue
                wanted.append(((-want, pos, k), f, ident, which, want))
        wanted.sort(key=lambda x: x[0])
        items = [(f, ident, which, f.score) for f, (ident, which) in firsts]
        items += [(f, ident, which, want) for _, f, ident, which, want in wanted]
        out: list[tuple[str, str, int, int]] = []
        seen: set[tuple[str, str, int]] = set()
        for f, ident, shown in _repriced(items):
            for d in sorted(shown, key=lambda d: d.key[2]):
                s = (f.path, ident, d.key[2], d.end)
                if s[:3] not in seen:
                    seen.add(s[:3])
                    out.append(s)
            if len(out) >= depth:
                break
        return out

    def _definitions_in(
        self, f: File, ev: dict[Key, tuple[float, float]], scored: Sequence[str]
    ) -> list[tuple[str, int | None, float]]:
        """``RankedRepository.definitions_in``: ``scored`` are the qualified names of the
        file's definitions with evidence."""
        memo = (f.path, frozenset(scored))
        if memo not in self._names:
            self._names[memo] = {n for q in scored for n in name_suffixes(q)}
        return ordered_definitions(
            f.graph_order,
            self._names[memo],
            lambda ident: [ev.get(d.key, (0.0, 0.0))[1] for d in f.tags.get(ident, [])],
        )

    # ---------------------------------------------------------------------------------------
    def matches(self, sym: tuple[str, str, int, int]) -> bool:
        return any(_match(g, sym) for g in self.spans)

    def outcome(self, w: SymbolWeights) -> dict[str, float]:
        syms = self.symbols(w)
        first = next((i for i, s in enumerate(syms, 1) if self.matches(s)), None)
        found: dict[int, int] = {}
        for i, s in enumerate(syms, 1):
            for j, g in enumerate(self.spans):
                if j not in found and _match(g, s):
                    found[j] = i
        every = max(found.values()) if len(found) == len(self.spans) else None
        out = {"rr": 1.0 / first if first else 0.0, "first5": float(bool(first and first <= 5))}
        for n in MAP_SYMBOLS:
            out[f"map{n}"] = float(any(s[0] in self.gold_files for s in syms[:n]))
        for k in KS:
            if len(self.spans) > k:
                head = syms[:k]
                out[f"Acc@{k}"] = float(len(head) == k and all(self.matches(s) for s in head))
            else:
                out[f"Acc@{k}"] = float(every is not None and every <= k)
        return out


def _repriced(
    items: Sequence[tuple[File, str, int | None, float]],
) -> Iterable[tuple[File, str, list[Definition]]]:
    """The map's entries in the order :func:`repomapper.render.repriced` gives them: an entry
    whose line's shape was shown before is wanted :data:`REPEAT_FACTOR` times less per showing
    and waits behind the entries wanted more."""
    shown: Counter[str] = Counter()
    #: (-want, arrival, its own want, file, identifier, definitions, shape)
    waiting: list[tuple[float, int, float, File, str, list[Definition], str]] = []

    def release(bound: float | None) -> Iterable[tuple[File, str, list[Definition]]]:
        while waiting and (bound is None or -waiting[0][0] >= bound):
            neg, n, own, f, ident, defs, shape = heapq.heappop(waiting)
            want = own * REPEAT_FACTOR ** shown[shape]
            if want < -neg:  # its shape was shown again while it waited
                heapq.heappush(waiting, (-want, n, own, f, ident, defs, shape))
                continue
            shown[shape] += 1
            yield f, ident, defs

    arrived = 0
    for f, ident, which, want in items:
        tags = f.tags.get(ident, [])
        defs = tags if which is None else tags[which : which + 1]
        shapes = [d.shape for d in defs]
        split = len(shapes) > 1 and (
            len(set(shapes)) < len(shapes) or any(x is not None and shown[x] for x in shapes)
        )
        one = shapes[0] if len(shapes) == 1 else None
        pieces = [([d], d.shape) for d in defs] if split else [(defs, one)]
        for piece, shape in pieces:
            yield from release(want)
            if shape is None or not shown[shape]:
                if shape is not None:
                    shown[shape] += 1
                yield f, ident, piece
                continue
            arrived += 1
            later = want * REPEAT_FACTOR ** shown[shape]
            heapq.heappush(waiting, (-later, arrived, want, f, ident, piece, shape))
    yield from release(None)


def _match(g: Sequence, sym: tuple[str, str, int, int]) -> bool:
    path, name, start, end = g
    return (
        sym[0] == path and sym[1] == name.rsplit(".", 1)[-1] and sym[2] <= end and sym[3] >= start
    )


def load(paths: Iterable[Path]) -> list[Task]:
    rows: dict[str, dict] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if not row.get("error") and row.get("gold_spans") and row.get("definitions"):
                    rows[row["instance_id"]] = row
    return [Task(rows[k]) for k in sorted(rows)]


#: the loaded tasks, shared with the worker processes (forked after they are loaded)
_LOADED: list[Task] = []
_POOL: multiprocessing.pool.Pool | None = None


def _outcomes(job: tuple[SymbolWeights, list[int]]) -> list[dict[str, float]]:
    w, which = job
    return [_LOADED[i].outcome(w) for i in which]


def start_workers(tasks: Sequence[Task], processes: int) -> None:
    """Replay ``tasks`` in ``processes`` forked workers from now on (the fit's cost is the
    replays: a few hundred per fit)."""
    global _POOL
    _LOADED[:] = tasks
    if processes > 1 and "fork" in multiprocessing.get_all_start_methods():
        _POOL = multiprocessing.get_context("fork").Pool(processes)


def outcomes(tasks: Sequence[Task], w: SymbolWeights) -> list[dict[str, float]]:
    """Each task's outcome under ``w``, in the workers when they hold the tasks."""
    index = {id(t): i for i, t in enumerate(_LOADED)}
    if _POOL is None or not all(id(t) in index for t in tasks):
        return [t.outcome(w) for t in tasks]
    n = len(_POOL._pool)  # type: ignore[attr-defined]
    which = [index[id(t)] for t in tasks]
    jobs = [(w, which[i::n]) for i in range(n)]
    parts = _POOL.map(_outcomes, jobs)
    got: dict[int, dict[str, float]] = {}
    for (_, idx), part in zip(jobs, parts, strict=True):
        got.update(zip(idx, part, strict=True))
    return [got[i] for i in which]


def summary(tasks: Sequence[Task], w: SymbolWeights, weighted: bool = False) -> dict[str, float]:
    """The mean outcome of ``tasks`` under ``w``: each task counts once (as the reports count
    them), or by its dataset's weight (as the fit counts them)."""
    total = sum(t.weight if weighted else 1.0 for t in tasks) or 1.0
    out: dict[str, float] = {}
    for t, got in zip(tasks, outcomes(tasks, w), strict=True):
        for k, v in got.items():
            out[k] = out.get(k, 0.0) + (t.weight if weighted else 1.0) * v / total
    return out


def objective(tasks: Sequence[Task], w: SymbolWeights, start: SymbolWeights) -> float:
    s = summary(tasks, w, weighted=True)
    value = sum(s[f"Acc@{k}"] for k in KS) / len(KS) + s["rr"]
    value += sum(s[f"map{n}"] for n in MAP_SYMBOLS) / len(MAP_SYMBOLS)
    pull = sum(
        abs(math.log1p(getattr(w, n)) - math.log1p(getattr(start, n))) for n in SYMBOL_WEIGHT_NAMES
    )
    return value - PULL * pull


def fit(tasks: Sequence[Task], start: SymbolWeights, rounds: int = 4) -> SymbolWeights:
    """Coordinate search over :data:`GRID` from ``start`` until a round changes nothing."""
    w = start
    best = objective(tasks, w, start)
    for _ in range(rounds):
        changed = False
        for name in SYMBOL_WEIGHT_NAMES:
            for v in GRID[name]:
                cand = replace(w, **{name: v})
                if cand == w or cand.name + cand.doc + cand.body <= 0:
                    continue
                got = objective(tasks, cand, start)
                if got > best + 1e-12:
                    w, best, changed = cand, got, True
        if not changed:
            break
    return w


def cross_validated(tasks: Sequence[Task], start: SymbolWeights) -> dict[str, float]:
    """The choosing side scored by constants fitted on the other folds (folds by repository)."""
    groups = sorted({t.group for t in tasks})
    out: dict[str, float] = {}
    for i in range(FOLDS):
        held = {g for j, g in enumerate(groups) if j % FOLDS == i}
        w = fit([t for t in tasks if t.group not in held], start)
        for t in tasks:
            if t.group in held:
                for k, v in t.outcome(w).items():
                    out[k] = out.get(k, 0.0) + v / len(tasks)
    return out


def agreement(tasks: Sequence[Task], w: SymbolWeights) -> tuple[int, int]:
    """Tasks whose replayed first symbols are the recorded ones (of the tasks replayed)."""
    same = 0
    for t in tasks:
        got = [s[:3] for s in t.symbols(w, depth=len(t.recorded))][: len(t.recorded)]
        same += got == t.recorded[: len(got)]
    return same, len(tasks)


def line(label: str, s: dict[str, float]) -> str:
    columns = ("Acc@1", "Acc@5", "Acc@10", "first5", "rr", *(f"map{n}" for n in MAP_SYMBOLS))
    cells = " | ".join(f"{s[k]:.3f}" for k in columns)
    return f"| {label} | {cells} |"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--choose", type=Path, nargs="+", required=True)
    ap.add_argument("--judge", type=Path, nargs="*", default=[])
    ap.add_argument("--baseline", type=Path, default=SYMBOL_WEIGHTS_FILE)
    ap.add_argument("--write", type=Path, default=None)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    ap.add_argument(
        "--cv", action="store_true", help="also the cross-validated figure (five more fits)"
    )
    args = ap.parse_args(argv)
    start = load_symbol_weights(args.baseline)
    choose = [t for t in load(args.choose) if t.complete]
    judge = [t for t in load(args.judge) if t.complete]
    start_workers(choose + judge, args.jobs)
    same, n = agreement(choose + judge, start)
    print(f"replay agrees with the recorded order in {same} of {n} task(s)")
    fitted = fit(choose, start)
    print("fitted:", json.dumps(fitted.to_dict()))
    maps = " | ".join(f"a gold file in the first {n}" for n in MAP_SYMBOLS)
    print(f"| tasks | Acc@1 | Acc@5 | Acc@10 | first gold in 5 | MRR (first gold) | {maps} |")
    print("|---|---:|---:|---:|---:|---:|" + "---:|" * len(MAP_SYMBOLS))
    print(line(f"choosing, shipped ({len(choose)})", summary(choose, start)))
    print(line(f"choosing, fitted ({len(choose)})", summary(choose, fitted)))
    if args.cv:
        print(line(f"choosing, cross-validated ({len(choose)})", cross_validated(choose, start)))
    sides = {p.name: [t for t in load([p]) if t.complete] for p in args.judge}
    for name, part in sides.items():
        ids = {t.id for t in part}
        part = [t for t in judge if t.id in ids]  # the loaded ones (the workers hold them)
        print(line(f"judging {name}, shipped ({len(part)})", summary(part, start)))
        print(line(f"judging {name}, fitted ({len(part)})", summary(part, fitted)))
    if args.write is not None:
        doc = {
            "about": "the symbol scoring's constants; written by benchmarks/fit_symbols.py, "
            "read by repomapper.relevance.symbol_weights",
            "weights": fitted.to_dict(),
            "fitted_on": {
                "data": sorted({p.name for p in args.choose}),
                "dumps": DUMPS,
                "split": "choosing repositories of benchmarks/locsets.py (by repository)",
                "tasks": len(choose),
                "repository_groups": sorted({t.group for t in choose}),
            },
        }
        args.write.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
