"""Localization benchmark: does the ranking put the files a real task changes near the top?

    python benchmarks/localization.py [--tasks PATH] [--snapshots DIR] [--only ID,...]
                                      [--packs] [--output docs/localization.md] [--no-write]
    python benchmarks/localization.py --set python-more|multilang [--split judge|choose|all]
                                      [--sample N] [--mirrors DIR] [--work DIR]

The tasks are SWE-bench Lite development tasks handed to us in ``../shared/bench/localization``
next to the repository (``tasks.jsonl`` and ``snapshots/<instance_id>.tar.gz``; see its
README.md). For each task the snapshot is unpacked into a temporary directory and three rankings
of the same files are scored against the task's gold files (the files the accepted fix changed):

* ``repomapper``: ``RepoMap(root, use_cache=False).rank(task=problem_statement)``, its
  ``ranked_files`` (every mapped file, best first);
* ``bm25``: a plain Okapi BM25 baseline (k1=1.5, b=0.75) over the contents of the files
  repomapper mapped, the problem statement as the query;
* ``repomapper (no task)``: ``map()`` without the task, to show what the task text contributes.

Acc@k is 1 when every gold file is among the first k files, else 0; MRR averages 1/rank of the
first gold file (0 when it is not ranked at all). At function level, the ``ranked_symbols`` of the
``--task`` map are scored against the task's ``gold_spans`` (from its line, or from the file
``benchmarks/gold_spans.py`` writes, ``--spans``): Acc@1/5/10 is 1 when every gold span is among
the first k symbols (each definition counted once).

With ``--packs`` the context packs are measured too (``RepoMapper.generate_context_pack_sync``,
problem statement, no target, role coding): is a gold file in the pack at 8k, 32k and 100k tokens
and at what position in the pack's file order; then, with the first gold file as the target
(32k), how many of the other gold files (tasks whose fix changed several) are in the pack; and
the time of a first and of a repeated pack. A table goes to stdout, the report to
``docs/localization.md`` (a hand-written discussion between the DISCUSSION markers of an existing
report is kept). Progress goes to stderr. A task whose snapshot is missing or fails becomes an
error row. This set is small and for development: not for tuning constants.

With ``--set`` a larger set runs instead (:mod:`locsets`: ``python-more.jsonl`` or
``multilang.jsonl``, split by repository into the repositories the ranking's weights were fitted
on, ``choose``, and the ones it is judged on, ``judge``; ``--sample N`` takes at most N tasks per
repository): each tree is written from the repository's mirror into ``--work`` (outside the
repository; the extraction cache of each repository is kept there too), test files are left out
of every ranking, and the figures per language group (Python: all rows, the SWE-bench rows and the
noisier ones apart), the ablation and the function level (tasks with a gold patch) go to a section
of the report of their own, which a run of the development set keeps.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import platform
import re
import shlex
import subprocess
import sys
import tarfile
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import locsets  # noqa: E402
from locsets import SetTask  # noqa: E402

REPO_ROOT = HERE.parent
DEFAULT_DATA = locsets.DEFAULT_DATA
DEFAULT_OUTPUT = REPO_ROOT / "docs" / "localization.md"
#: gold spans of tasks whose line has none (written by benchmarks/gold_spans.py)
DEFAULT_SPANS = HERE / "data" / "localization_gold_spans.jsonl"
#: gold spans of a larger set's tasks without a gold patch (written by benchmarks/fix_spans.py)
FIX_SPANS = HERE / "data" / "fix_spans-{set}.jsonl"
#: the pack whose bodies are measured (task text only, no target)
BODY_BUDGET = 8_000
SYMBOL_KS = (1, 5, 10)
MAP_TOKENS = 1024
KS = (1, 3, 5, 10)
VARIANTS = ("repomapper", "bm25", "repomapper (no task)")
#: Ablation: the relevance model with one signal switched off (see repomapper.relevance.model).
ABLATIONS = ("explicit", "lexical", "graph", "tests", "roles")
ABLATION_VARIANTS = tuple(f"without {a}" for a in ABLATIONS)
MAP_BUDGETS = (1024, 4096)
DISCUSSION_START = "<!-- DISCUSSION: hand-written, kept when the report is regenerated -->"
DISCUSSION_END = "<!-- /DISCUSSION -->"

# --------------------------------------------------------------------------------------------
# BM25 baseline

BM25_K1 = 1.5
BM25_B = 0.75
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def tokenize(text: str) -> list[str]:
    """Identifier-like lowercase tokens, plus their snake_case and CamelCase parts."""
    out: list[str] = []
    for word in _IDENT.findall(text):
        parts = [p.lower() for chunk in word.split("_") for p in _PART.findall(chunk)]
        if len(word) >= 2:
            out.append(word.lower())
        if len(parts) > 1:
            out.extend(p for p in parts if len(p) >= 2)
    return out


def bm25_rank(query: str, docs: dict[str, str]) -> list[str]:
    """Paths of ``docs`` (path -> text) best first by Okapi BM25; ties broken by path.

    IDF is ``ln(1 + (N - n + 0.5) / (n + 0.5))`` (never negative); a term repeated in the query
    counts once per occurrence.
    """
    paths = sorted(docs)
    if not paths:
        return []
    counts = {p: Counter(tokenize(docs[p])) for p in paths}
    lengths = {p: sum(counts[p].values()) for p in paths}
    avgdl = (sum(lengths.values()) / len(paths)) or 1.0
    qtf = Counter(tokenize(query))
    n_docs = len(paths)
    scores = dict.fromkeys(paths, 0.0)
    for term in sorted(qtf):
        df = sum(1 for p in paths if term in counts[p])
        if not df:
            continue
        idf = math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        for p in paths:
            tf = counts[p].get(term, 0)
            if tf:
                norm = BM25_K1 * (1.0 - BM25_B + BM25_B * lengths[p] / avgdl)
                scores[p] += qtf[term] * idf * tf * (BM25_K1 + 1.0) / (tf + norm)
    return sorted(paths, key=lambda p: (-round(scores[p], 9), p))


# --------------------------------------------------------------------------------------------
# Tasks, snapshots, metrics


@dataclass(frozen=True)
class GoldSpan:
    """A function or class the accepted fix changed (lines of the snapshot)."""

    path: str
    name: str  # qualified: ``Class.method``
    start_line: int
    end_line: int

    def matches(self, path: str, ident: str, line: int, end_line: int) -> bool:
        """A ranked symbol is this span: same file and name, and their lines overlap."""
        return (
            path == self.path
            and ident == self.name.rsplit(".", 1)[-1]
            and line <= self.end_line
            and end_line >= self.start_line
        )


@dataclass
class Task:
    instance_id: str
    repo: str
    problem_statement: str
    gold_files: tuple[str, ...]
    #: the functions and classes the fix changed; empty when not known
    gold_spans: tuple[GoldSpan, ...] = ()
    #: a task of a larger set (``--set``): its tree is written from a mirror, and test files
    #: are left out of every ranking
    set_task: SetTask | None = None


PACK_BUDGETS = (8_000, 32_000, 100_000)


@dataclass
class PackOutcome:
    gold: tuple[str, ...]
    error: str | None = None
    #: budget -> (position of the first gold file in the pack or None, files in the pack, tokens)
    at: dict[int, tuple[int | None, int, int]] = field(default_factory=dict)
    #: with gold[0] as the target: (other gold files in the pack, other gold files)
    others: tuple[int, int] = (0, 0)
    first_seconds: float = 0.0
    repeat_seconds: float = 0.0
    #: :func:`pack_bodies` of the 8k pack
    bodies: tuple[str, ...] = ()


def pack_bodies(pack: Any, spans: Sequence[GoldSpan]) -> tuple[str, ...]:
    """What ``pack`` shows of each gold span: ``body`` (every line of it), ``signature`` (its
    first line), ``file`` (its file, not its first line) or ``absent``."""
    shown = {f.path: {n for a, b in f.spans for n in range(a, b + 1)} for f in pack.files}
    out = []
    for g in spans:
        lines = shown.get(g.path)
        if lines is None:
            out.append("absent")
        elif all(n in lines for n in range(g.start_line, g.end_line + 1)):
            out.append("body")
        elif g.start_line in lines:
            out.append("signature")
        else:
            out.append("file")
    return tuple(out)


def measure_set_pack(rm: Any, problem: str, spans: Sequence[GoldSpan]) -> tuple[str, ...]:
    """:func:`pack_bodies` of the 8k coding pack of the task text (no target), read from the
    open RepoMap ``rm`` (its state: nothing is extracted again)."""
    from repomapper.pack import RepoMapper

    m = RepoMapper(rm.root, write=False, env={}, repomap=rm)
    pack = m.generate_context_pack_sync("loc", problem, [], "coding", BODY_BUDGET)
    return pack_bodies(pack, spans)


def measure_pack(
    problem: str, gold: tuple[str, ...], root: Path, tmp: Path, spans: Sequence[GoldSpan] = ()
) -> PackOutcome:
    """The packs of one task (see the module docstring); an error is recorded, never raised."""
    from repomapper.pack import RepoMapper

    out = PackOutcome(gold)
    m = RepoMapper(root, write=False, env={}, cache_dir=tmp / "pack-cache")
    try:
        for budget in PACK_BUDGETS:
            t = time.perf_counter()
            pack = m.generate_context_pack_sync("loc", problem, [], "coding", budget)
            if budget == PACK_BUDGETS[0]:
                out.first_seconds = time.perf_counter() - t
            paths = [f.path for f in pack.files]
            pos = [paths.index(g) + 1 for g in gold if g in paths]
            out.at[budget] = (min(pos) if pos else None, len(paths), pack.token_count)
            if budget == BODY_BUDGET:
                out.bodies = pack_bodies(pack, spans)
        t = time.perf_counter()
        m.generate_context_pack_sync("loc", problem, [], "coding", 32_000)
        out.repeat_seconds = time.perf_counter() - t
        if gold and (root / gold[0]).is_file():
            pack = m.generate_context_pack_sync("loc", problem, [gold[0]], "coding", 32_000)
            paths = {f.path for f in pack.files}
            rest = gold[1:]
            out.others = (sum(1 for g in rest if g in paths), len(rest))
    except Exception as exc:  # an error cell, never the end of the run
        out.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    finally:
        m.repomap.close()
    return out


@dataclass
class Outcome:
    task: Task
    error: str | None = None
    files_mapped: int = 0
    #: variant -> ranked paths, best first
    rankings: dict[str, list[str]] = field(default_factory=dict)
    #: gold file -> why it is not in the ranking (not in the snapshot, no backend, ...)
    unmapped: dict[str, str] = field(default_factory=dict)
    skipped_members: int = 0
    seconds: float = 0.0
    #: budget -> (a gold file is in the --task map, the map's exact token count, files in the map
    #: that are tests, examples, docs or vendored, files in the map)
    maps: dict[int, tuple[bool, int, int, int]] = field(default_factory=dict)
    #: the context packs of the task (with --packs)
    pack: PackOutcome | None = None
    #: ``ranked_symbols`` of the --task map: (path, name, line, end_line), best first
    symbols: list[tuple[str, str, int, int]] = field(default_factory=list)
    #: per gold span, what the 8k pack (task only) shows of it: body, signature, file (the file
    #: is in the pack without the span's first line) or absent; empty when not measured
    pack_bodies: tuple[str, ...] = ()
    #: the first symbols with their reasons, and the first files with theirs (for ``--dump``)
    details: dict[str, Any] = field(default_factory=dict)

    def distinct_symbols(self) -> list[tuple[str, str, int, int]]:
        """``symbols`` with each definition once (its first place)."""
        seen: set[tuple[str, str, int]] = set()
        out = []
        for sym in self.symbols:
            if sym[:3] not in seen:
                seen.add(sym[:3])
                out.append(sym)
        return out

    def symbol_hit(self, k: int) -> bool:
        """Function-level Acc@k of this task, by the sets' rule for files: every gold span among
        the first k symbols, or when there are more gold spans than k, the first k all gold."""
        spans = self.task.gold_spans
        if not spans:
            return False
        if len(spans) > k:
            first = self.distinct_symbols()[:k]
            return len(first) == k and all(any(g.matches(*s) for g in spans) for s in first)
        return (r := self.symbol_rank()) is not None and r <= k

    def first_symbol_rank(self) -> int | None:
        """1-based place of the first gold span among the distinct symbols."""
        for i, sym in enumerate(self.distinct_symbols(), 1):
            if any(g.matches(*sym) for g in self.task.gold_spans):
                return i
        return None

    def symbol_rank(self) -> int | None:
        """1-based position in ``symbols`` (each definition counted once) by which every gold
        span has appeared; None when a gold span is missing (or the task has none)."""
        spans = self.task.gold_spans
        if not spans:
            return None
        found: dict[GoldSpan, int] = {}
        seen: set[tuple[str, str, int]] = set()
        for sym in self.symbols:
            if sym[:3] in seen:
                continue
            seen.add(sym[:3])
            for g in spans:
                if g not in found and g.matches(*sym):
                    found[g] = len(seen)
        return max(found.values()) if len(found) == len(spans) else None

    def first_rank(self, variant: str) -> int | None:
        """1-based rank of the best-ranked gold file, None when no gold file is ranked."""
        ranking = self.rankings.get(variant, [])
        pos = {p: i + 1 for i, p in enumerate(ranking)}
        found = [pos[g] for g in self.task.gold_files if g in pos]
        return min(found) if found else None

    def hit(self, variant: str, k: int) -> bool:
        """Acc@k of this task: every gold file among the first k, or when there are more gold
        files than k, the first k all gold (the sets' README)."""
        ranking = self.rankings.get(variant, [])
        gold = set(self.task.gold_files)
        if not gold:
            return False
        if len(gold) > k:
            return len(ranking) >= k and all(p in gold for p in ranking[:k])
        return (r := self.all_rank(variant)) is not None and r <= k

    def all_rank(self, variant: str) -> int | None:
        """1-based rank by which every gold file has appeared, None if one is missing."""
        ranking = self.rankings.get(variant, [])
        pos = {p: i + 1 for i, p in enumerate(ranking)}
        if not self.task.gold_files or any(g not in pos for g in self.task.gold_files):
            return None
        return max(pos[g] for g in self.task.gold_files)


def _spans(raw: object) -> tuple[GoldSpan, ...]:
    if not isinstance(raw, list):
        return ()
    return tuple(
        GoldSpan(str(s["path"]), str(s["name"]), int(s["start_line"]), int(s["end_line"]))
        for s in raw
    )


def load_gold_spans(path: Path) -> dict[str, tuple[GoldSpan, ...]]:
    """instance id -> gold spans, from the file ``benchmarks/gold_spans.py`` writes."""
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            out[str(raw["instance_id"])] = _spans(raw.get("gold_spans"))
    return out


def load_tasks(path: Path, spans_file: Path = DEFAULT_SPANS) -> list[Task]:
    known_spans = load_gold_spans(spans_file)

    def task(raw: dict[str, Any]) -> Task:
        return Task(
            str(raw["instance_id"]),
            str(raw.get("repo", "")),
            str(raw["problem_statement"]),
            tuple(raw["gold_files"]),
            _spans(raw.get("gold_spans")) or known_spans.get(str(raw["instance_id"]), ()),
        )

    tasks = locsets.read_task_lines(path, task)
    return sorted(tasks, key=lambda t: t.instance_id)


def _member_problem(m: tarfile.TarInfo, top: str) -> str | None:
    """Why a tar member must not be unpacked, or None when it is safe."""
    name = m.name
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return "absolute path"
    parts = PurePosixPath(name.replace("\\", "/")).parts
    if ".." in parts:
        return "'..' in the path"
    if not parts or parts[0] != top:
        return f"outside the top folder {top!r}"
    if not (m.isfile() or m.isdir() or m.issym() or m.islnk()):
        return "not a regular file, directory or link"
    if m.issym() or m.islnk():
        link = m.linkname.replace("\\", "/")
        if link.startswith("/"):
            return "link to an absolute path"
        base = PurePosixPath(*parts[:-1]) if m.issym() else PurePosixPath()
        depth = 0
        for part in (base / link).parts:
            depth += -1 if part == ".." else (0 if part == "." else 1)
            if depth < 1:  # climbs out of the top folder
                return "link pointing outside the snapshot"
    return None


def unpack(archive: Path, dest: Path, top: str) -> tuple[Path, int]:
    """Unpack the safe members of ``archive`` into ``dest``; the root and the number skipped."""
    skipped = 0
    with tarfile.open(archive, "r:*") as tf:
        members = []
        for m in tf.getmembers():
            problem = _member_problem(m, top)
            if problem:
                skipped += 1
                log(f"  {archive.name}: skipped member {m.name!r}: {problem}")
            else:
                members.append(m)
        tf.extractall(dest, members=members, filter="data")
    root = dest / top
    if not root.is_dir():
        raise RuntimeError(f"{archive.name} has no top folder {top!r}")
    return root, skipped


def why_unmapped(root: Path, path: str, result) -> str:
    if not (root / path).is_file():
        return "not in the snapshot"
    for d in result.diagnostics:
        if d.path == path or path in d.paths:
            return d.code
    return "not discovered (ignored?)"


@contextlib.contextmanager
def git_ceiling(directory: Path) -> Iterator[None]:
    """Keep git from finding a repository above ``directory`` (so discovery walks the snapshot)."""
    old = os.environ.get("GIT_CEILING_DIRECTORIES")
    os.environ["GIT_CEILING_DIRECTORIES"] = str(directory)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("GIT_CEILING_DIRECTORIES", None)
        else:
            os.environ["GIT_CEILING_DIRECTORIES"] = old


def run_task(
    task: Task,
    snapshots: Path,
    jobs: int | None,
    packs: bool = False,
    *,
    set_file: Path | None = None,
    mirrors: Path = locsets.DEFAULT_MIRRORS,
    work: Path | None = None,
    ablation: bool = True,
) -> Outcome:
    """One task's rankings. A task of a larger set has its tree written from its mirror (into
    ``work``, where the extraction cache of its repository is kept too), and its test files are
    left out of every ranking (the set's README)."""
    from repomapper import RepoMap
    from repomapper.relevance.roles import CODE, TEST, file_role

    out = Outcome(task)
    archive = snapshots / f"{task.instance_id}.tar.gz"
    if task.set_task is None and not archive.is_file():
        out.error = "snapshot missing"
        return out
    start = time.perf_counter()
    try:
        with (
            tempfile.TemporaryDirectory(prefix="repomapper-loc-", dir=work) as tmp,
            git_ceiling(Path(tmp)),
        ):
            if task.set_task is not None:
                root = locsets.materialize(set_file, task.set_task, Path(tmp) / "tree", mirrors)
                cache = {
                    "cache_dir": Path(work or tempfile.gettempdir()) / "cache" / task.set_task.group
                }
                if task.set_task.gold_patch and not task.gold_spans:
                    task.gold_spans = tuple(
                        GoldSpan(*s)
                        for s in locsets.gold_spans_from_patch(
                            task.set_task.gold_patch, root, task.gold_files
                        )
                    )
            else:
                root, out.skipped_members = unpack(archive, Path(tmp), task.instance_id)
                cache = {"use_cache": False}
            rm = RepoMap(root, MAP_TOKENS, jobs=jobs, **cache)  # type: ignore[arg-type]
            try:
                with SymbolFeatures() as captured:
                    ranked = rm.rank(task=task.problem_statement)
                without = rm.map()
                for budget in MAP_BUDGETS:
                    result = rm.render(ranked, budget)
                    shown = {
                        line[:-1]
                        for line in result.map.splitlines()
                        if line.endswith(":") and not line.startswith((" ", "\t"))
                    }
                    exact = rm.counter.count(result.map)
                    side = sum(1 for f in shown if file_role(f) != CODE)
                    out.maps[budget] = (
                        any(g in shown for g in task.gold_files),
                        exact,
                        side,
                        len(shown),
                    )
                out.symbols = [(s.path, s.name, s.line, s.end_line) for s in result.ranked_symbols]
                if task.set_task is not None:
                    out.details = run_details(ranked, result, captured.features)
                for name, variant in zip(ABLATIONS, ABLATION_VARIANTS, strict=True):
                    if not ablation:
                        break
                    ablated = rm.rank(task=task.problem_statement, disabled_signals=[name])
                    out.rankings[variant] = [f.path for f in ablated.files]
                if packs and task.set_task is not None and task.gold_spans:
                    out.pack_bodies = measure_set_pack(rm, task.problem_statement, task.gold_spans)
            finally:
                rm.close()
            with_task = result
            mapped = [f.path for f in ranked.files]
            out.files_mapped = len(mapped)
            out.rankings["repomapper"] = mapped
            out.rankings["repomapper (no task)"] = [f.path for f in without.ranked_files]
            if task.set_task is not None:
                mapped = [p for p in mapped if file_role(p) != TEST]
                out.rankings = {
                    v: [p for p in r if file_role(p) != TEST] for v, r in out.rankings.items()
                }
            docs = {p: (root / p).read_text("utf-8", errors="replace") for p in mapped}
            out.rankings["bm25"] = bm25_rank(task.problem_statement, docs)
            for g in task.gold_files:
                if g not in set(mapped):
                    out.unmapped[g] = why_unmapped(root, g, with_task)
            if packs and task.set_task is None:
                out.pack = measure_pack(
                    task.problem_statement, task.gold_files, root, Path(tmp), task.gold_spans
                )
                out.pack_bodies = out.pack.bodies
    except Exception as exc:  # a broken task is an error row, never the end of the run
        out.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
        out.rankings.clear()
    out.seconds = time.perf_counter() - start
    return out


DETAIL_SYMBOLS = 40
DETAIL_FILES = 10
#: files whose definitions ``--dump`` lists with their evidence (to replay the symbol order:
#: as many as the symbol scoring scores)
DETAIL_DEFINITION_FILES = 50


class SymbolFeatures:
    """Captures the features of the definitions the task ranking scores (its symbol scoring
    called with ``features=True``), for ``--dump``: what ``benchmarks/fit_symbols.py`` fits on.
    Empty when the ranking did not score symbols (a memoised ranking)."""

    def __init__(self) -> None:
        import repomapper.relevance.model as model

        self.model = model
        self.original = model._score_symbols
        self.features: dict[Any, Any] = {}

    def __enter__(self) -> SymbolFeatures:
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            result = self.original(*args, **kwargs, features=True)
            self.features = result.features or {}
            return result

        self.model._score_symbols = wrapped
        return self

    def __exit__(self, *exc: object) -> None:
        self.model._score_symbols = self.original


def run_details(ranked: Any, result: Any, features: Any = None) -> dict[str, Any]:
    """What ``--dump`` keeps of a task's ranking: its first files and symbols with their
    reasons, and where every symbol of ``ranked_symbols`` is (to place the gold spans); with
    ``features`` (:class:`SymbolFeatures`), each definition's, to replay the symbol order."""

    def why(rs: Sequence[Any]) -> list[str]:
        return [f"{r.signal} {r.detail} {r.weight}" for r in rs[:4]]

    return {
        "files": [
            {"path": f.path, "score": f.score, "why": why(f.why)}
            for f in ranked.files[:DETAIL_FILES]
        ],
        "symbols": [
            {
                "path": s.path,
                "name": s.name,
                "scope": s.scope,
                "kind": s.symbol_kind,
                "line": s.line,
                "end_line": s.end_line,
                "score": s.score,
                "why": why(s.why),
            }
            for s in result.ranked_symbols[:DETAIL_SYMBOLS]
        ],
        "definitions": [
            {
                "path": f.path,
                "score": f.score,
                "named": f.path in ranked.named,
                "defs": [
                    [
                        ident,
                        which,
                        evidence,
                        [tag_evidence(ranked, f.path, t, features) for t in tags],
                    ]
                    for ident, which, evidence in ranked.definitions_in(f.path)
                    for tags in [ranked._tags(f.path, ident)]
                ],
                "graph_order": [ident for ident, _ in ranked.by_file.get(f.path, [])],
            }
            for f in [
                *ranked.files[:DETAIL_DEFINITION_FILES],
                # a file the task names leads the map wherever it ranks
                *(f for f in ranked.files[DETAIL_DEFINITION_FILES:] if f.path in ranked.named),
            ]
        ],
    }


def tag_evidence(ranked: Any, path: str, tag: Any, features: Any = None) -> list[Any]:
    """A definition's lines, kind, qualified name and evidence: its score (named, or -1 for an
    incidental one), its words and the scope lent to it; then, when ``features`` holds them,
    its features (an object) and its line's shape (what the map prices repeats by)."""
    import dataclasses

    from repomapper.relevance.symbols import definition_key

    key = definition_key(path, tag)
    reasons = ranked.symbol_reasons.get(key, ())
    lent = {r.signal: r.weight for r in reasons if r.signal in ("words", "scope")}
    from repomapper.render import line_shape

    extra = []
    if features:  # (a definition the scoring did not reach has no features: null)
        got = features.get(key)
        extra = [dataclasses.asdict(got) if got is not None else None, line_shape(tag)]
    return [
        tag.start_line,
        tag.end_line,
        str(tag.symbol_kind),
        tag.qualified_name,
        ranked.symbol_scores.get(key, 0.0),
        lent.get("words", 0.0),
        lent.get("scope", 0.0),
        *extra,
    ]


def dump_row(o: Outcome) -> dict[str, Any]:
    """One task's line of ``--dump``."""
    st = o.task.set_task
    ranking = o.rankings.get("repomapper", [])
    return {
        "instance_id": o.task.instance_id,
        "repo": o.task.repo,
        "dataset": st.dataset if st else "",
        "error": o.error,
        "problem_statement": o.task.problem_statement,
        "gold_files": {
            g: (ranking.index(g) + 1 if g in ranking else None) for g in o.task.gold_files
        },
        "gold_spans": [[g.path, g.name, g.start_line, g.end_line] for g in o.task.gold_spans],
        "first_gold_symbol": o.first_symbol_rank(),
        "all_gold_symbols": o.symbol_rank(),
        "hits": {k: o.symbol_hit(k) for k in SYMBOL_KS},
        "in_map": {b: hit for b, (hit, *_) in o.maps.items()},
        "pack_bodies": list(o.pack_bodies),
        **o.details,
    }


def metrics(outcomes: Sequence[Outcome], variant: str) -> dict[str, float]:
    """Acc@k and MRR over the tasks that ran (error rows are left out)."""
    ok = [o for o in outcomes if o.error is None]
    res: dict[str, float] = {}
    for k in KS:
        hits = sum(1 for o in ok if o.hit(variant, k))
        res[f"Acc@{k}"] = hits / len(ok) if ok else 0.0
    rr = [1.0 / r if (r := o.first_rank(variant)) else 0.0 for o in ok]
    res["MRR"] = sum(rr) / len(rr) if rr else 0.0
    return res


# --------------------------------------------------------------------------------------------
# Output


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _fmt_rank(r: int | None) -> str:
    return "-" if r is None else str(r)


def map_rows(outcomes: Sequence[Outcome]) -> list[list[str]]:
    """Per budget: how often a gold file is inside the --task map, and the largest map's size."""
    ok = [o for o in outcomes if o.error is None and o.maps]
    rows = []
    for budget in MAP_BUDGETS:
        hits = sum(1 for o in ok if o.maps[budget][0])
        over = sum(1 for o in ok if o.maps[budget][1] > budget)
        largest = max((o.maps[budget][1] for o in ok), default=0)
        used = sum(o.maps[budget][1] for o in ok) / (len(ok) * budget) if ok else 0.0
        side = sum(o.maps[budget][2] for o in ok) / max(1, sum(o.maps[budget][3] for o in ok))
        rows.append(
            [
                str(budget),
                f"{hits / len(ok):.3f}" if ok else "-",
                f"{used:.2f}",
                str(largest),
                str(over),
                f"{side:.2f}",
            ]
        )
    return rows


MAP_HEADER = [
    "budget",
    "gold file in map",
    "mean fill",
    "largest map (tokens)",
    "maps over budget",
    "tests/examples/docs/vendored share of map files",
]


def results_rows(
    outcomes: Sequence[Outcome], variants: Sequence[str] = VARIANTS
) -> list[list[str]]:
    rows = []
    for v in variants:
        m = metrics(outcomes, v)
        rows.append([v, *(f"{m[f'Acc@{k}']:.3f}" for k in KS), f"{m['MRR']:.3f}"])
    return rows


RESULT_HEADER = ["variant", *(f"Acc@{k}" for k in KS), "MRR"]
SYMBOL_HEADER = [
    "tasks with gold spans",
    *(f"Acc@{k}" for k in SYMBOL_KS),
    "in the first 200",
    "a gold span in the first " + " / ".join(str(k) for k in SYMBOL_KS),
]
BODY_HEADER = [
    f"a gold body in the {BODY_BUDGET // 1000}k pack",
    "every gold body",
    "a gold signature or body",
]


def symbol_table(outcomes: Sequence[Outcome]) -> tuple[list[str], list[list[str]]]:
    """Function level: :meth:`Outcome.symbol_hit` at each k, every gold span among the 200 of
    ``ranked_symbols``, and when the packs were measured, what the 8k pack shows of them."""
    bodies = any(o.pack_bodies for o in outcomes)
    return [*SYMBOL_HEADER, *(BODY_HEADER if bodies else [])], [symbol_cells(outcomes, bodies)]


def symbol_cells(outcomes: Sequence[Outcome], bodies: bool = False) -> list[str]:
    ok = [o for o in outcomes if o.error is None and o.task.gold_spans]
    ranks = [o.symbol_rank() for o in ok]

    def share(hits: int, of: int | None = None) -> str:
        n = len(ok) if of is None else of
        return f"{hits / n:.3f}" if n else "-"

    cells = [
        str(len(ok)),
        *(share(sum(1 for o in ok if o.symbol_hit(k))) for k in SYMBOL_KS),
        share(sum(1 for r in ranks if r is not None)),
        " / ".join(
            share(sum(1 for o in ok if (r := o.first_symbol_rank()) is not None and r <= k))
            for k in SYMBOL_KS
        ),
    ]
    if bodies:
        packed = [o.pack_bodies for o in ok if o.pack_bodies]
        cells += [
            share(sum(1 for b in packed if "body" in b), len(packed)),
            share(sum(1 for b in packed if all(x == "body" for x in b)), len(packed)),
            share(sum(1 for b in packed if {"body", "signature"} & set(b)), len(packed)),
        ]
    return cells


TASK_HEADER = [
    "instance",
    "gold files",
    "named",
    "mapped",
    *(f"rank: {v}" for v in VARIANTS),
    "gold symbol rank",
]


def gold_named(task: Task) -> str:
    """'yes' when the file name of every gold file (without its extension) is a word of the task."""
    text_words = {w.lower() for w in re.findall(r"[A-Za-z0-9_]+", task.problem_statement)}
    named = [PurePosixPath(g).stem.lower() in text_words for g in task.gold_files]
    return "yes" if named and all(named) else ("some" if any(named) else "no")


def task_rows(outcomes: Sequence[Outcome]) -> list[list[str]]:
    rows = []
    for o in outcomes:
        gold = ", ".join(o.task.gold_files)
        if o.error:
            rows.append(
                [o.task.instance_id, gold, gold_named(o.task), "error", o.error, "", "", ""]
            )
            continue
        note = "".join(f" (gold {g}: {why})" for g, why in sorted(o.unmapped.items()))
        if o.skipped_members:
            note += f" ({o.skipped_members} unsafe tar member(s) skipped)"
        rows.append(
            [
                o.task.instance_id,
                gold,
                gold_named(o.task),
                f"{o.files_mapped}{note}",
                *(_fmt_rank(o.first_rank(v)) for v in VARIANTS),
                _fmt_rank(o.symbol_rank()) if o.task.gold_spans else "n/a",
            ]
        )
    return rows


def text_table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def md_table(header: list[str], rows: list[list[str]], right_from: int) -> str:
    def esc(c: str) -> str:
        return c.replace("|", "\\|")

    align = ["---" if i < right_from else "---:" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(esc(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


def git_commit() -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return proc.stdout.strip() if proc.returncode == 0 and proc.stdout.strip() else "unknown"


DEFAULT_DISCUSSION = """## Discussion

(Not written yet: look at the per-task table and a few failures, and write it here. This section
is kept when the report is regenerated.)
"""


def existing_discussion(path: Path) -> str:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return DEFAULT_DISCUSSION
    start, end = text.find(DISCUSSION_START), text.find(DISCUSSION_END)
    if start < 0 or end < start:
        return DEFAULT_DISCUSSION
    return text[start + len(DISCUSSION_START) : end].strip("\n") + "\n"


def report(outcomes: Sequence[Outcome], command: str, discussion: str) -> str:
    ok = [o for o in outcomes if o.error is None]
    errors = len(outcomes) - len(ok)
    unmapped = [o for o in ok if o.unmapped]
    parts = [
        "# Localization benchmark",
        "",
        "How well does the ranking put the files a real task changes near the top? Produced by",
        "`benchmarks/localization.py`. The tasks are the 22 usable tasks of the SWE-bench Lite",
        "development split (sqlfluff, marshmallow, pvlib-python, astroid, pydicom): the GitHub issue",
        "text as the task, and the files the accepted fix changed as the gold files. Each task's",
        "repository snapshot at its base commit is unpacked into a temporary directory and three",
        "rankings of the same files are scored:",
        "",
        "- **repomapper**: `RepoMap(root, use_cache=False).rank(task=problem_statement)`, the relevance",
        "  model's file ranking (every mapped file, best first; the same `ranked_files` that",
        "  `map --task` reports; run with `jobs=1` by default, which changes the speed, not the ranking);",
        f"- **bm25**: plain Okapi BM25 (k1={BM25_K1}, b={BM25_B}) over the contents of the files",
        "  repomapper mapped, the problem statement as the query; tokens are identifier-like",
        "  lowercase words plus their snake_case and CamelCase parts; ties broken by path;",
        "- **repomapper (no task)**: `map()` without the task, to show what the task text contributes.",
        "",
        "Acc@k is 1 when every gold file is among the first k files ranked, else 0; MRR is the mean",
        "of 1/rank of the first gold file (0 when it is not ranked at all).",
        "",
        "**This set is small (22 tasks, 5 repositories) and for development**: use it to see whether a",
        "change helps, not to tune constants until these 22 come out right"
        + (f": one task is {100 / len(ok):.1f} points of Acc@k." if ok else "."),
        "",
        "## Command",
        "",
        "```sh",
        command,
        "```",
        "",
        "## Machine",
        "",
        f"- nproc: {os.cpu_count()}",
        f"- Python: {platform.python_version()} ({platform.system()} {platform.machine()})",
        f"- repomapper commit: `{git_commit()}` (uncommitted changes in the work tree are not shown)",
        "",
        "## Results",
        "",
        f"{len(ok)} task(s) scored" + (f", {errors} error(s) left out" if errors else "") + ".",
        "",
        md_table(RESULT_HEADER, results_rows(outcomes), 1),
        "",
        "## Function level",
        "",
        "Are the functions the fix changed (`gold_spans`: the functions and methods around the changed",
        "lines, or the class when its own body changed; read from the fix commit by",
        "`benchmarks/gold_spans.py` when the task line has none) at the head of the `ranked_symbols` of",
        "the `--task` map? Acc@k is 1 when every gold span is among the first k symbols (each",
        "definition counted once; a symbol is a gold span when its file and name agree and their",
        "lines overlap), or when there are more gold spans than k, when the first k are all gold",
        "spans (the sets' rule for files). `ranked_symbols` lists at most 200. With `--packs`: what",
        f"the {BODY_BUDGET:,}-token coding pack of the task text (no target) shows of the gold spans.",
        "",
        md_table(*symbol_table(outcomes), 0),
        "",
        "## Ablation",
        "",
        "The relevance model with one signal switched off (`RepoMap.rank(task=..., disabled_signals=[name])`):",
        "what each signal adds is the drop from the first row. `explicit`: paths, traceback frames, module,",
        "qualified, quoted and error names, identifiers and file stems the task names; `lexical`: BM25F over",
        "path, names, docstrings and text; `graph`: personalized PageRank from the matched files; `tests`:",
        "a matching test file lends its score to the module it tests; `roles`: tests, examples, docs and",
        "vendored files demoted for tasks not about them.",
        "",
        md_table(RESULT_HEADER, results_rows(outcomes, ("repomapper", *ABLATION_VARIANTS)), 1),
        "",
        "## Map recall",
        "",
        "Is a gold file inside the `--task` map (`RepoMap.render(RepoMap.rank(task=...), budget)`)? Mean",
        "fill is the maps' exact token count over their budget; every map is counted exactly (`cl100k_base`).",
        "",
        md_table(MAP_HEADER, map_rows(outcomes), 1),
        "",
        "## Per task",
        "",
        "Rank of the first gold file in each ranking (`-`: not ranked). `named`: whether the gold",
        "file's name without extension (`L060`, `config`, `raw_building`) is a word of the task text.",
        "`mapped`: how many files repomapper mapped, i.e. how many files every ranking orders.",
        "",
        md_table(TASK_HEADER, task_rows(outcomes), 2),
        "",
    ]
    parts += pack_section(outcomes)
    if unmapped:
        parts += [
            "Gold files repomapper did not map: "
            + "; ".join(
                f"{o.task.instance_id}: {g} ({why})"
                for o in unmapped
                for g, why in sorted(o.unmapped.items())
            )
            + ".",
            "",
        ]
    parts += [DISCUSSION_START, discussion.rstrip("\n"), DISCUSSION_END, ""]
    return "\n".join(parts)


PACK_HEADER = [
    "task",
    *(f"gold @ {b // 1000}k (pos / files)" for b in PACK_BUDGETS),
    "others with target",
    "first s",
    "repeat s",
]


def pack_rows(outcomes: Sequence[Outcome]) -> list[list[str]]:
    rows = []
    for o in outcomes:
        pk = o.pack
        if pk is None or o.error:
            continue
        if pk.error:
            rows.append([o.task.instance_id, pk.error, "", "", "", "", ""])
            continue
        cells = [f"{p if p else '-'} / {n}" for p, n, _ in (pk.at[b] for b in PACK_BUDGETS)]
        rows.append(
            [
                o.task.instance_id,
                *cells,
                f"{pk.others[0]}/{pk.others[1]}" if pk.others[1] else "n/a",
                f"{pk.first_seconds:.1f}",
                f"{pk.repeat_seconds:.2f}",
            ]
        )
    return rows


def pack_section(outcomes: Sequence[Outcome]) -> list[str]:
    """The context-pack part of the report (empty without --packs)."""
    packs = [o.pack for o in outcomes if o.pack is not None and o.error is None]
    if not packs:
        return []
    ok = [pk for pk in packs if pk.error is None]
    several = [pk for pk in ok if pk.others[1]]
    repeat = sorted(pk.repeat_seconds for pk in ok)
    lines = [
        "## Context packs",
        "",
        "`RepoMapper.generate_context_pack_sync(task_id, problem_statement, [], 'coding', budget)`",
        "on the same snapshot: is a gold file in the pack and at what position (1-based, in the",
        "pack's file order; '-': not in the pack). Then, with the first gold file given as the",
        "target (32k), how many of the other gold files are in the pack, for tasks whose fix",
        "changed several files. Times: the first pack of a new mapper (extraction of the snapshot",
        "included, no cache) and the same request repeated on it.",
        "",
        f"- tasks: {len(packs)} ({len(packs) - len(ok)} errors)",
        *(
            f"- a gold file in the pack at {b // 1000}k: {sum(1 for pk in ok if pk.at[b][0])}/{len(ok)}"
            for b in PACK_BUDGETS
        ),
        (
            f"- other gold files in the pack with the first as the target (32k): "
            f"{sum(pk.others[0] for pk in several)}/{sum(pk.others[1] for pk in several)} "
            f"over {len(several)} task(s)"
            if several
            else "- other gold files with the first as the target: no task of this set changed "
            "more than one file (the measure runs on sets that do)"
        ),
    ]
    if repeat:
        lines.append(f"- repeated pack, median: {repeat[len(repeat) // 2]:.2f} s")
    return [*lines, "", md_table(PACK_HEADER, pack_rows(outcomes), 1), ""]


# --------------------------------------------------------------------------------------------
# The larger sets: a section per set and split, kept when the development report is regenerated

SET_START = "<!-- SET {key}: written by benchmarks/localization.py --set; kept across runs -->"
SET_END = "<!-- /SET {key} -->"
_SET_BLOCK = re.compile(r"<!-- SET (\S+ \S+):.*?<!-- /SET \1 -->\n?", re.S)


def set_tasks(
    set_name: str, data: Path, split: str, sample: int | None, spans_only: bool = False
) -> list[Task]:
    """The tasks of a larger set's split (see :mod:`locsets`), as benchmark tasks, with the gold
    spans ``benchmarks/fix_spans.py`` found for the tasks without a gold patch (those with one
    get theirs from it when their tree is written). ``spans_only``: the sample is drawn from
    the tasks that have gold spans (a gold patch, or a fix with a changed function)."""
    fixed = load_gold_spans(Path(str(FIX_SPANS).format(set=set_name)))
    tasks = locsets.load_set(data / locsets.SETS[set_name])
    if spans_only:
        tasks = [t for t in tasks if t.gold_patch or fixed.get(t.instance_id)]
    chosen = locsets.select(tasks, split, sample)
    return [
        Task(
            t.instance_id,
            t.repo,
            t.problem_statement,
            t.gold_files,
            () if t.gold_patch else fixed.get(t.instance_id, ()),
            t,
        )
        for t in chosen
    ]


def outcome_groups(outcomes: Sequence[Outcome]) -> dict[str, list[Outcome]]:
    """The rows of a set's tables: Python (all, SWE-bench rows, the noisier rows) or each
    language group and all of them."""
    groups: dict[str, list[Outcome]] = {}
    for o in outcomes:
        st = o.task.set_task
        if st is None:
            continue
        if st.language == "Python":
            keys = ["Python, all"]
            keys.append(
                "Python, SWE-bench rows"
                if st.dataset.startswith("SWE-bench dev")
                else "Python, MULocBench and crawled rows (noisier gold)"
            )
        else:
            keys = [locsets.LANGUAGE_GROUP.get(st.language, st.language), "all other languages"]
        for k in keys:
            groups.setdefault(k, []).append(o)
    order = sorted(
        groups, key=lambda g: (g == "all other languages", not g.startswith("Python"), g)
    )
    return {g: groups[g] for g in order}


def group_rows(outcomes: Sequence[Outcome], variants: Sequence[str]) -> list[list[str]]:
    rows = []
    for g, os_ in outcome_groups(outcomes).items():
        ok = [o for o in os_ if o.error is None]
        repos = len({o.task.repo for o in ok})
        for row in results_rows(os_, variants):
            rows.append([g, f"{len(ok)} / {repos}", *row])
    return rows


GROUP_HEADER = ["group", "tasks / repos", *RESULT_HEADER]


def symbol_group_table(outcomes: Sequence[Outcome]) -> tuple[list[str], list[list[str]]]:
    """The function-level table of a set, one row per group of :func:`outcome_groups`."""
    bodies = any(o.pack_bodies for o in outcomes)
    header = ["group", "repos", *SYMBOL_HEADER, *(BODY_HEADER if bodies else [])]
    rows = []
    for g, os_ in outcome_groups(outcomes).items():
        with_spans = [o for o in os_ if o.error is None and o.task.gold_spans]
        if with_spans:
            repos = str(len({o.task.repo for o in with_spans}))
            rows.append([g, repos, *symbol_cells(with_spans, bodies)])
    return header, rows


def set_key(set_name: str, split: str, spans_only: bool, sample: int | None = 0) -> str:
    """The key of a set's section: a sample drawn from the tasks with gold spans (function
    level) has a section of its own beside the file-level one, and so does a run of every task
    (``sample`` None: the record), so a quick sample never replaces the record."""
    return (
        f"{set_name} {split}"
        + ("/functions" if spans_only else "")
        + ("/all" if sample is None else "")
    )


def set_section(
    outcomes: Sequence[Outcome],
    set_name: str,
    split: str,
    sample: int | None,
    command: str,
    spans_only: bool = False,
    ablation: bool = True,
) -> str:
    ok = [o for o in outcomes if o.error is None]
    errors = [o for o in outcomes if o.error]
    key = set_key(set_name, split, spans_only, sample)
    spans = [o for o in ok if o.task.gold_spans]
    parts = [
        SET_START.format(key=key),
        f"## {set_name}: "
        + ("function level on " if spans_only else "")
        + f"the {split} repositories"
        + (", every task (the record)" if sample is None else ""),
        "",
        f"`{locsets.SETS[set_name]}`, the {split} side of the split by repository"
        " (`benchmarks/locsets.py`: the repositories of the 22 development tasks choose, every"
        " other repository judges when the first byte of SHA-256 of"
        f" `{locsets.SPLIT_SALT}<name>` is odd)"
        + (
            f", at most {sample} tasks per repository (SWE-bench rows first, then by the"
            " digest of the instance id)"
            if sample
            else ""
        )
        + (", drawn from the tasks that have gold spans (`--spans-only`)" if spans_only else "")
        + ". Each tree is written at the task's base commit from the repository's mirror;"
        " test files are left out of every ranking; BM25 ranks the same files.",
        "",
        "```sh",
        command,
        "```",
        "",
        f"- repomapper commit: `{git_commit()}`; weights: `core/relevance/weights.json`",
        f"- {len(ok)} task(s) of {len({o.task.repo for o in ok})} repositories scored"
        + (f", {len(errors)} error(s) left out (listed below)" if errors else ""),
        "",
        md_table(GROUP_HEADER, group_rows(outcomes, ("repomapper", "bm25")), 2),
        "",
    ]
    if ablation:
        parts += [
            "Ablation (each signal off, `RepoMap.rank(task=..., disabled_signals=[name])`):",
            "",
            md_table(GROUP_HEADER, group_rows(outcomes, ("repomapper", *ABLATION_VARIANTS)), 2),
            "",
        ]
    if any(o.maps for o in ok):
        parts += [
            "Map recall: is a gold file inside the `--task` map at each budget (exact counts)?",
            "",
            md_table(MAP_HEADER, map_rows(outcomes), 1),
            "",
        ]
    if spans:
        parts += [
            "Function level: the functions and classes the fix changed (a SWE-bench row's gold"
            " patch, else the fixing commit `benchmarks/fix_spans.py` found in the mirror:"
            " `benchmarks/data/fix_spans-<set>.jsonl`) against the `ranked_symbols` of the"
            " `--task` map; Acc@k as for files (every gold span among the first k symbols, or"
            " the first k all gold when there are more)"
            + (
                f"; with `--packs`, what the {BODY_BUDGET:,}-token coding pack of the task text"
                " (no target) shows of them: a gold function's whole body, every one's, or at"
                " least a signature"
                if any(o.pack_bodies for o in spans)
                else ""
            )
            + ":",
            "",
            md_table(*symbol_group_table(outcomes), 2),
            "",
        ]
    else:
        parts += [
            "Function level: no task of this sample has gold spans (neither a gold patch nor a"
            " fixing commit with a changed function), so it is not measured here.",
            "",
        ]
    rows = [
        [
            o.task.instance_id,
            str(len(o.task.gold_files)),
            str(o.files_mapped),
            _fmt_rank(o.first_rank("repomapper")),
            _fmt_rank(o.first_rank("bm25")),
            *(symbol_task_cells(o) if spans else []),
        ]
        for o in ok
    ]
    header = ["instance", "gold files", "ranked", "repomapper", "bm25"]
    if spans:
        header += ["gold spans", "first gold symbol", "all gold symbols by"]
        if any(o.pack_bodies for o in spans):
            header.append(f"{BODY_BUDGET // 1000}k pack")
    parts += [
        "<details><summary>Per task: rank of the first gold file"
        + (" and of the gold symbols" if spans else "")
        + "</summary>",
        "",
        md_table(header, rows, 1),
        "",
        "</details>",
        "",
    ]
    if errors:
        parts += [
            "Errors: " + "; ".join(f"{o.task.instance_id}: {o.error}" for o in errors) + ".",
            "",
        ]
    parts.append(SET_END.format(key=key))
    return "\n".join(parts) + "\n"


def symbol_task_cells(o: Outcome) -> list[str]:
    """A task's function-level cells: gold spans, the place of the first and of the last."""
    if not o.task.gold_spans:
        return ["0", "", ""] + ([""] if o.pack_bodies else [])
    cells = [
        str(len(o.task.gold_spans)),
        _fmt_rank(o.first_symbol_rank()),
        _fmt_rank(o.symbol_rank()),
    ]
    if o.pack_bodies:
        counts = Counter(o.pack_bodies)
        cells.append(", ".join(f"{n} {k}" for k, n in sorted(counts.items())))
    return cells


def existing_sets(path: Path) -> dict[str, str]:
    """The set sections of an existing report, by ``set split``."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    return {m.group(1): m.group(0).rstrip("\n") + "\n" for m in _SET_BLOCK.finditer(text)}


def with_sets(text: str, sets: dict[str, str]) -> str:
    """``text`` (a report) with its set sections replaced by ``sets``, placed before the
    discussion."""
    text = _SET_BLOCK.sub("", text)
    block = "".join(sets[k] + "\n" for k in sorted(sets))
    at = text.find(DISCUSSION_START)
    return text[:at] + block + text[at:] if at >= 0 else text + "\n" + block


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--tasks",
        type=Path,
        default=DEFAULT_DATA / "tasks.jsonl",
        help="tasks.jsonl (default: <repo>/../shared/bench/localization/tasks.jsonl)",
    )
    ap.add_argument(
        "--snapshots",
        type=Path,
        default=None,
        help="directory of <instance_id>.tar.gz (default: 'snapshots' next to --tasks)",
    )
    ap.add_argument("--only", default="", help="comma-separated instance ids to run")
    ap.add_argument(
        "--spans",
        type=Path,
        default=DEFAULT_SPANS,
        help="gold spans of tasks whose line has none (default: benchmarks/data/"
        "localization_gold_spans.jsonl, written by benchmarks/gold_spans.py)",
    )
    ap.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the markdown report")
    ap.add_argument("--no-write", action="store_true", help="do not write the report")
    ap.add_argument("--jobs", type=int, default=1, help="repomapper's extraction jobs (default 1)")
    ap.add_argument(
        "--packs", action="store_true", help="measure the context packs too (several minutes)"
    )
    ap.add_argument(
        "--set",
        choices=("dev", *sorted(locsets.SETS)),
        default="dev",
        help="dev: the 22 development tasks (--tasks); or a larger set, its trees written from "
        "the mirrors, reported in its own section of the output",
    )
    ap.add_argument("--split", choices=("choose", "judge", "all"), default="judge")
    ap.add_argument(
        "--spans-only",
        action="store_true",
        help="a larger set's sample is drawn from the tasks with gold spans (function level)",
    )
    ap.add_argument(
        "--no-ablation", action="store_true", help="a larger set without the ablation rankings"
    )
    ap.add_argument(
        "--dump",
        type=Path,
        default=None,
        help="a larger set: write each task's gold spans, file ranks and first symbols here "
        "(JSON lines, for reading where the gold function loses)",
    )
    ap.add_argument("--sample", type=int, default=None, help="at most N tasks per repository")
    ap.add_argument("--mirrors", type=Path, default=locsets.DEFAULT_MIRRORS)
    ap.add_argument(
        "--work",
        type=Path,
        default=Path(tempfile.gettempdir()) / "repomapper-localization",
        help="trees and extraction caches of a larger set (outside the repository)",
    )
    args = ap.parse_args(argv)
    if args.set != "dev":
        return main_set(args, argv)

    snapshots = args.snapshots if args.snapshots is not None else args.tasks.parent / "snapshots"
    if not args.tasks.is_file():
        log(f"error: {args.tasks}: no such file (use --tasks)")
        return 2
    tasks = load_tasks(args.tasks, args.spans)
    if args.only:
        wanted = {s.strip() for s in args.only.split(",") if s.strip()}
        unknown = sorted(wanted - {t.instance_id for t in tasks})
        if unknown:
            log(f"error: unknown instance id(s): {', '.join(unknown)}")
            return 2
        tasks = [t for t in tasks if t.instance_id in wanted]

    started = time.perf_counter()
    outcomes = []
    for n, task in enumerate(tasks, 1):
        log(f"[{n}/{len(tasks)}] {task.instance_id} ...")
        o = run_task(task, snapshots, args.jobs, args.packs)
        if o.error:
            log(f"  error: {o.error}")
        else:
            ranks = ", ".join(f"{v} {_fmt_rank(o.first_rank(v))}" for v in VARIANTS)
            sym = _fmt_rank(o.symbol_rank()) if o.task.gold_spans else "n/a"
            log(
                f"  {o.files_mapped} files mapped; gold rank: {ranks}; gold symbols by {sym}"
                f" ({o.seconds:.1f}s)"
            )
        outcomes.append(o)
    elapsed = time.perf_counter() - started
    log(f"done: {len(outcomes)} task(s) in {elapsed:.0f}s")

    n_err = sum(1 for o in outcomes if o.error)
    print(f"{len(outcomes) - n_err} task(s) scored, {n_err} error(s)")
    print(text_table(RESULT_HEADER, results_rows(outcomes)))
    print()
    print(text_table(*symbol_table(outcomes)))
    print()
    print(text_table(RESULT_HEADER, results_rows(outcomes, ("repomapper", *ABLATION_VARIANTS))))
    print()
    print(text_table(MAP_HEADER, map_rows(outcomes)))
    print()
    print(text_table(TASK_HEADER, task_rows(outcomes)))
    if args.packs:
        print()
        print(text_table(PACK_HEADER, pack_rows(outcomes)))

    if not args.no_write:
        shown = [
            "python",
            "benchmarks/localization.py",
            *(argv if argv is not None else sys.argv[1:]),
        ]
        output = args.output if args.output.is_absolute() else Path.cwd() / args.output
        text = report(outcomes, shlex.join(shown), existing_discussion(output))
        text = with_sets(text, existing_sets(output))
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        log(f"wrote {output}")
    return 1 if outcomes and all(o.error for o in outcomes) else 0


def main_set(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    """A larger set's split: run, print, and write its section of the report."""
    tasks = set_tasks(args.set, locsets.DEFAULT_DATA, args.split, args.sample, args.spans_only)
    if args.only:
        wanted = {s.strip() for s in args.only.split(",") if s.strip()}
        tasks = [t for t in tasks if t.instance_id in wanted]
    set_file = locsets.DEFAULT_DATA / locsets.SETS[args.set]
    args.work.mkdir(parents=True, exist_ok=True)
    outcomes = []
    started = time.perf_counter()
    for n, task in enumerate(tasks, 1):
        o = run_task(
            task,
            Path(),
            args.jobs,
            args.packs,
            set_file=set_file,
            mirrors=args.mirrors,
            work=args.work,
            ablation=not args.no_ablation,
        )
        log(
            f"[{n}/{len(tasks)}] {task.instance_id}: "
            + (
                o.error
                or f"repomapper {_fmt_rank(o.first_rank('repomapper'))}, "
                f"bm25 {_fmt_rank(o.first_rank('bm25'))}, gold symbols "
                f"{_fmt_rank(o.first_symbol_rank())} / {_fmt_rank(o.symbol_rank())}"
                + (f", pack {'/'.join(o.pack_bodies)}" if o.pack_bodies else "")
                + f" ({o.seconds:.1f}s)"
            )
        )
        outcomes.append(o)
        if args.dump is not None:
            with args.dump.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(dump_row(o), sort_keys=True) + "\n")
    log(f"done: {len(outcomes)} task(s) in {time.perf_counter() - started:.0f}s")
    variants = ("repomapper", "bm25", *(() if args.no_ablation else ABLATION_VARIANTS))
    print(text_table(GROUP_HEADER, group_rows(outcomes, variants)))
    print()
    print(text_table(*symbol_group_table(outcomes)))
    if not args.no_write:
        shown = [
            "python",
            "benchmarks/localization.py",
            *(argv if argv is not None else sys.argv[1:]),
        ]
        output = args.output if args.output.is_absolute() else Path.cwd() / args.output
        sets = existing_sets(output)
        section = set_section(
            outcomes,
            args.set,
            args.split,
            args.sample,
            shlex.join(shown),
            args.spans_only,
            not args.no_ablation,
        )
        sets[set_key(args.set, args.split, args.spans_only, args.sample)] = (
            section.rstrip("\n") + "\n"
        )
        text = output.read_text(encoding="utf-8") if output.is_file() else ""
        output.write_text(with_sets(text, sets), encoding="utf-8")
        log(f"wrote {output}")
    return 1 if outcomes and all(o.error for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
