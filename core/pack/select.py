"""Which files and symbols a task needs, and why: the design's four steps on our ranking and
dependency graph.

1. Seeds: the targets, the files the task names (path, module, traceback frame), the relevance
   model's best files and the symbols the task names; for roles that read bodies, the first
   functions of the task's symbol ranking are shown whole (not seeds).
2. Expansion: dependencies of the seed symbols (depth-limited), dependents (by role), base
   classes and interfaces of what is used (``inheritance`` edges; 0.7 for the seeds' own bases,
   deeper ones count as indirect), tests of the targets (test
   files named after a target, or whose code refers to a target's symbols).
3. Symbols: every symbol of a target; in other files the symbols that were reached or that the
   task names.
4. Scores: each reason carries a factor of the design's table (target 1.0, named in the task
   0.8, interface/base class 0.7, direct dependency 0.6, test 0.5, indirect 0.3, plus the role's
   dependent and test factors); the relevance model's evidence (the file's ranking score over
   the best one's) adds ``RELEVANCE_WEIGHT`` times its square root as a factor of its own. The
   score is ``0.9 * best factor + 0.1 * evidence``; files under ``MIN_RELEVANCE_SCORE`` are cut
   (never a target).
"""

from __future__ import annotations

import math
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..model import SymbolKind, Tag
from ..ranked import RankedRepository, map_items
from ..relevance.roles import tested_stem
from ..relevance.symbols import definition_key, task_evidence
from .content import decorated_start, joined
from .links import SymbolLinks, is_test
from .models import DependencyInfo, split_symbol_id, symbol_id
from .roles import RolePolicy

TARGET = 1.0
NAMED = 0.8
INTERFACE = 0.7
DIRECT = 0.6
INDIRECT = 0.3
RELEVANCE_WEIGHT = 0.6
#: seed symbols taken from the task (the strongest task evidence first)
MAX_TASK_SYMBOLS = 8
#: a symbol the task names weighs ``NAMED`` times its evidence over the best one's; under this
#: share it is not a seed
TASK_SYMBOL_CUT = 0.5
#: seed symbols per target file whose dependents are followed (the first in line order)
MAX_DEPENDENT_SEEDS = 40
#: functions of the task's symbol ranking shown whole: those with task evidence of their own
#: among the ranking's first ``RANKED_BODY_WINDOW`` entries, in its order, while their bodies
#: fit in ``RANKED_BODY_SHARE`` of the pack's budget (a large budget shows more of what the
#: ranking suggests; the budget meant is what the targets shown in full leave, and the rest of
#: it is for the named files and dependencies)
RANKED_BODY_WINDOW = 40
RANKED_BODY_SHARE = 0.5
FUNCTION_KINDS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD})
MAX_REASONS = 6


def relevance_factor(evidence: float) -> float:
    """The factor of a file the relevance model ranks, from its score over the best file's:
    ``RELEVANCE_WEIGHT`` times its square root. Scores fall steeply after a file the task
    names outright; in proportion, the files ranked right after it fell under
    ``MIN_RELEVANCE_SCORE`` and a pack with most of its budget left showed one file."""
    return RELEVANCE_WEIGHT * math.sqrt(max(evidence, 0.0))


@dataclass
class Candidate:
    path: str
    factors: list[tuple[float, str]] = field(default_factory=list)
    #: symbol ids shown whole, in the order they were asked for (the first matter most)
    bodies: dict[str, None] = field(default_factory=dict)
    matter: dict[str, list[tuple[float, str]]] = field(default_factory=dict)
    evidence: float = 0.0
    target: bool = False
    named: bool = False
    test: bool = False
    depth: int = 0

    def add(self, factor: float, why: str) -> None:
        self.factors.append((factor, why))

    def symbol(self, sid: str, factor: float, why: str, body: bool) -> None:
        self.matter.setdefault(sid, []).append((factor, why))
        if body:
            self.bodies.setdefault(sid)

    @property
    def score(self) -> float:
        best = max((f for f, _ in self.factors), default=0.0)
        return round(min(1.0, 0.9 * best + 0.1 * self.evidence), 6)

    def why(self) -> tuple[str, ...]:
        ordered = sorted(dict.fromkeys(self.factors), key=lambda x: (-x[0], x[1]))
        return tuple(w for _, w in ordered[:MAX_REASONS])


@dataclass(frozen=True)
class BodyBudget:
    """The pack's token budget, and how to count a text's tokens."""

    tokens: int
    count: Callable[[str], int]


@dataclass(frozen=True)
class Selection:
    candidates: dict[str, Candidate]
    dependencies: tuple[DependencyInfo, ...]
    cut: tuple[tuple[str, float], ...]


def _name(sid: str) -> str:
    path, qual = split_symbol_id(sid)
    return f"{path}::{qual}" if qual else path


def select(
    links: SymbolLinks,
    ranked: RankedRepository,
    targets: Sequence[str],
    policy: RolePolicy,
    max_depth: int,
    min_score: float,
    budget: BodyBudget,
) -> Selection:
    """The files and symbols a task needs, each with its reasons (the steps of the module's
    docstring, in that order: the order candidates and seeds are met is part of the result).
    ``budget``: the pack's, of which the task ranking's functions shown whole take a share."""
    work = _Selector(links, ranked, tuple(targets), policy)
    work.seed_targets()
    work.seed_named_files()
    work.seed_task_symbols()
    work.seed_relevance()
    work.show_ranked_bodies(budget)
    work.follow_dependencies(max_depth)
    work.follow_dependents()
    work.add_tests_by_name()
    work.add_fixtures()
    return work.finish(min_score)


class _Selector:
    """The state of one selection: the candidates met so far, the seed symbols, the dependency
    edges kept. Each method is one step of :func:`select`."""

    def __init__(
        self,
        links: SymbolLinks,
        ranked: RankedRepository,
        targets: tuple[str, ...],
        policy: RolePolicy,
    ):
        self.view = links.view
        self.files = links.view.mapped
        self.ranked = ranked
        self.targets = targets
        self.target_set = set(targets)
        self.policy = policy
        self.graph = links
        self.cands: dict[str, Candidate] = {}
        self.seeds: list[str] = []
        self.deps: dict[tuple[str, str], DependencyInfo] = {}
        top = max((rf.score for rf in ranked.files), default=0.0)
        #: each ranked file's score over the best one's
        self.evidence = {rf.path: (rf.score / top if top > 0 else 0.0) for rf in ranked.files}

    def cand(self, path: str) -> Candidate:
        c = self.cands.get(path)
        if c is None:
            c = self.cands[path] = Candidate(path)
        return c

    def keep(self, d: DependencyInfo) -> None:
        """Keep an edge, at the smallest depth it was met."""
        k = (d.from_symbol, d.to_symbol)
        if k not in self.deps or self.deps[k].depth > d.depth:
            self.deps[k] = d

    def unique_seeds(self) -> list[str]:
        return list(dict.fromkeys(self.seeds))

    # -- seeds -------------------------------------------------------------------------------------
    def seed_targets(self) -> None:
        """Every target, every symbol in it and its module are seeds."""
        full = self.policy.target_mode == "full"
        for t in self.targets:
            c = self.cand(t)
            c.target = True
            c.add(TARGET, "target")
            for s in self.view.definitions(t):
                sid = symbol_id(t, s.qualified_name)
                c.symbol(sid, TARGET, "defined in a target", full)
                self.seeds.append(sid)
            self.seeds.append(symbol_id(t, ""))

    def seed_named_files(self) -> None:
        """The files the task names (by path, module or traceback frame)."""
        for path in sorted(self.ranked.named):
            if path in self.view.left_out:  # the mapper's own output
                continue
            c = self.cand(path)
            c.named = True
            c.add(NAMED, "named in the task")

    def seed_task_symbols(self) -> None:
        """The symbols the task names, with at least ``TASK_SYMBOL_CUT`` of the best one's
        evidence (the strongest ``MAX_TASK_SYMBOLS``)."""
        task_symbols = sorted(
            ((s, key) for key, s in self.ranked.symbol_scores.items() if s > 0),
            key=lambda x: (-x[0], x[1]),
        )
        best_symbol = task_symbols[0][0] if task_symbols else 0.0
        for weight, (path, qualified, line) in task_symbols[:MAX_TASK_SYMBOLS]:
            strength = weight / best_symbol
            if path not in self.files or strength < TASK_SYMBOL_CUT:
                continue
            for s in self.view.definitions(path):
                if s.qualified_name == qualified and s.start_line == line:
                    sid = symbol_id(path, s.qualified_name)
                    c = self.cand(path)
                    c.add(NAMED * strength, f"the task names {s.qualified_name}")
                    c.symbol(sid, NAMED * strength, "the task names it", True)
                    self.seeds.append(sid)

    def seed_relevance(self) -> None:
        """The relevance model's best files (as many as the role takes), with their best
        ranked symbols; they are candidates, not seeds."""
        for rf in self.ranked.files[: self.policy.relevance_files]:
            e = self.evidence.get(rf.path, 0.0)
            if e <= 0 or rf.path in self.view.left_out:
                continue
            c = self.cand(rf.path)
            reasons = ", ".join(f"{r.signal} {r.detail}".strip() for r in rf.why[:2])
            factor = relevance_factor(e)
            c.add(factor, f"relevance model: {reasons}" if reasons else "relevance model")
            if rf.path not in self.files:
                continue
            for ident, _ in self.ranked.symbols_of(rf.path)[:3]:
                for s in self.view.definitions(rf.path):
                    if s.name == ident:
                        sid = symbol_id(rf.path, s.qualified_name)
                        c.symbol(sid, factor, "ranked for the task", False)

    def show_ranked_bodies(self, budget: BodyBudget) -> None:
        """The functions the task's symbol ranking puts first (the map's order), with task
        evidence of their own, are shown whole while their bodies fit in ``budget``: the one a
        task is about is most often among them, and its signature alone does not show what it
        does (a body too large for what is left is passed over for the next). Not seeds: what
        they use is not followed. Only for the roles that read bodies beyond the targets
        (coding, debugging: those that show the bodies of dependencies)."""
        if not self.ranked.task or not self.policy.dependency_bodies:
            return
        whole = self._targets_shown_whole()
        targets = sum(self._tokens(path, budget.count) for path in sorted(whole))
        left = int(RANKED_BODY_SHARE * (budget.tokens - targets))
        for n, item in enumerate(map_items(self.ranked)):
            if n >= RANKED_BODY_WINDOW or left <= 0:
                return
            path = item.path
            if item.ident is None or path not in self.files or path in self.view.left_out:
                continue
            for tag in item.shown(self.ranked.table.definitions.get((path, item.ident), ())):
                key = definition_key(path, tag)
                evidence = task_evidence(
                    self.ranked.symbol_scores.get(key, 0.0), self.ranked.symbol_reasons.get(key, ())
                )
                if str(tag.symbol_kind) not in FUNCTION_KINDS or evidence <= 0:
                    continue
                if path not in whole:  # (a target shown whole shows it at no cost)
                    cost = self._tokens(path, budget.count, tag)
                    if cost > left:
                        continue
                    left -= cost
                c = self.cand(path)
                factor = relevance_factor(self.evidence.get(path, 0.0))
                c.add(factor, "relevance model: ranked for the task")
                c.symbol(
                    symbol_id(path, tag.qualified_name),
                    factor,
                    "ranked for the task",
                    True,
                )

    def _targets_shown_whole(self) -> frozenset[str]:
        """The targets the role shows in full (they are placed first, whatever their size)."""
        return frozenset(self.targets) if self.policy.target_mode == "full" else frozenset()

    def _tokens(self, path: str, count: Callable[[str], int], tag: Tag | None = None) -> int:
        """What showing ``path`` costs: its whole text as the pack shows it, or with ``tag``
        only that definition's lines and its decorators (a file that cannot be read costs
        nothing here: it is left out when the pack is filled)."""
        lines = self.view.content(path)
        if isinstance(lines, str):
            return 0
        if tag is not None:
            first = tag.start_line
            if 0 < first <= len(lines):
                first = decorated_start(lines, tag)
            lines = lines[first - 1 : max(tag.end_line, tag.start_line)]
        return count(joined(lines))

    # -- expansion ---------------------------------------------------------------------------------
    def follow_dependencies(self, max_depth: int) -> None:
        """What the seeds use, up to ``max_depth`` edges away."""
        for sid in self.unique_seeds():
            for d in self.graph.get_dependencies(sid, max_depth):
                path, qual = split_symbol_id(d.to_symbol)
                if path not in self.files:
                    continue
                self.keep(d)
                if path in self.target_set:  # a target is there already, for a better reason
                    continue
                self._add_dependency(self.cand(path), d, qual)

    def _add_dependency(self, c: Candidate, d: DependencyInfo, qual: str) -> None:
        c.depth = min(c.depth, d.depth) if c.depth else d.depth
        factor, why = _dependency_reason(d)
        if d.kind == "import" and not qual:
            why = f"imported by {d.from_symbol.rstrip(':')}"
        c.add(factor, why)
        if qual:
            body = self.policy.dependency_bodies and d.depth == 1
            c.symbol(d.to_symbol, factor, why, body)

    def follow_dependents(self) -> None:
        """What uses the targets' symbols (the first ``MAX_DEPENDENT_SEEDS`` seeds of the
        targets, as deep as the role goes): tests of a target, or dependents."""
        of_targets = [s for s in self.unique_seeds() if split_symbol_id(s)[0] in self.target_set]
        for sid in of_targets[:MAX_DEPENDENT_SEEDS]:
            if not split_symbol_id(sid)[1]:
                continue
            for d in self.graph.get_dependents(sid, self.policy.dependent_depth):
                path = split_symbol_id(d.from_symbol)[0]
                if path in self.target_set or path not in self.files:
                    continue
                self.keep(d)
                self._add_dependent(self.cand(path), path, d)

    def _add_dependent(self, c: Candidate, path: str, d: DependencyInfo) -> None:
        policy = self.policy
        if is_test(path):
            c.test = True
            c.add(policy.test_factor, f"tests {_name(d.to_symbol)}")
            c.symbol(d.from_symbol, policy.test_factor, "tests a target", policy.test_bodies)
            return
        f = policy.dependent_factor if d.depth == 1 else policy.dependent_factor * 0.6
        c.add(f, f"depends on {_name(d.to_symbol)} ({d.kind}, depth {d.depth})")
        c.symbol(d.from_symbol, f, "depends on a target", policy.role.value == "reviewing")

    def add_tests_by_name(self) -> None:
        """Test files named after a target (``test_x.py`` for ``x.py``)."""
        policy = self.policy
        stems = {posixpath.basename(t).rsplit(".", 1)[0]: t for t in self.targets}
        for path in sorted(self.files):
            if path in self.target_set or not is_test(path):
                continue
            stem = tested_stem(path)
            if not stem or stem not in stems:
                continue
            c = self.cand(path)
            c.test = True
            c.add(policy.test_factor, f"test of {stems[stem]} (by name)")
            if policy.test_bodies:
                for s in self.view.definitions(path):
                    sid = symbol_id(path, s.qualified_name)
                    c.symbol(sid, policy.test_factor, "in a test of a target", True)

    def add_fixtures(self) -> None:
        """For a tester (test factor 0.9 or more): the ``conftest.py`` of the tests selected."""
        factor = self.policy.test_factor
        if factor < 0.9:
            return
        test_dirs = {posixpath.dirname(p) for p, c in self.cands.items() if c.test}
        for d in sorted(test_dirs):
            fixture = posixpath.join(d, "conftest.py") if d else "conftest.py"
            if fixture in self.files:
                self.cand(fixture).add(factor * 0.8, "fixtures of the tests")

    # -- scores and the cut ------------------------------------------------------------------------
    def finish(self, min_score: float) -> Selection:
        """Score every candidate, cut those under ``min_score`` (never a target)."""
        for path, c in self.cands.items():
            c.evidence = self.evidence.get(path, 0.0)
        cut = tuple(
            sorted(
                (
                    (p, c.score)
                    for p, c in self.cands.items()
                    if not c.target and c.score < min_score
                ),
                key=lambda x: (-x[1], x[0]),
            )
        )
        for p, _ in cut:
            del self.cands[p]
        ordered = tuple(
            sorted(self.deps.values(), key=lambda d: (d.depth, d.from_symbol, d.to_symbol))
        )
        return Selection(self.cands, ordered, cut)


def _dependency_reason(d: DependencyInfo) -> tuple[float, str]:
    """The factor and reason of a dependency of a seed."""
    if d.kind == "inheritance" and d.depth == 1:
        return INTERFACE, f"base class or interface of {_name(d.from_symbol)}"
    if d.depth == 1:
        return DIRECT, f"{_name(d.from_symbol)} uses it ({d.kind})"
    return INDIRECT, f"indirect dependency (depth {d.depth}) of a seed"
