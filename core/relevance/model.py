"""The relevance model: which files and symbols a task needs, with the evidence for each.

Signals, each a score per file:

* **explicit** (:mod:`.explicit`): paths, traceback frames, module and qualified names, quoted
  names, error classes and identifiers the task names, each weighted by its specificity;
* **lexical** (:mod:`.lexical`): BM25F of the task's terms over the file's path, definition names,
  signatures and docstrings, and text, normalized to the best file;
* **graph**: personalized PageRank over the reference and import graph, seeded by the two
  signals above (and by chat and mentioned files), so the definers, callers and importers of what
  the task points at come next;
* **tests**: a test file that matches the task lends half its score to the module it is named
  after; test, example, doc and vendored files are demoted unless the task is about tests.

Each definition of the best files is then scored by its own evidence (:mod:`.symbols`).

The final score is ``(explicit + lexical + GRAPH_WEIGHT * graph + tests) * role factor``, with the
task-free PageRank as the last tie-break. The weights are round numbers chosen for what each
signal means (a full path mention is worth as much as the best lexical match), not fitted to a
benchmark; ``docs/localization.md`` has the ablation that measures each one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..graph import SymbolTable
from ..model import FileSymbols, Reason
from ..rank import ALPHA
from .explicit import Findings, PathIndex, find_explicit
from .lexical import LexicalIndex
from .pairs import unite_pairs
from .query import TaskQuery
from .roles import CODE, file_role, tested_stem
from .symbols import score_symbols

GRAPH_WEIGHT = 0.5
TEST_SHARE = 0.5
ROLE_FACTOR = 0.5
#: Seeds of the graph walk: the best files by explicit + lexical score (a long tail of weak
#: lexical matches would only blur the walk).
MAX_SEEDS = 50
#: Reasons kept per file (strongest first).
MAX_REASONS = 8

#: Signals that can be switched off to measure what each adds (the ablation in the benchmark).
SIGNALS = ("explicit", "lexical", "graph", "tests", "roles")


@dataclass(frozen=True, slots=True)
class TaskRanking:
    """Every mapped file's score, best first, with reasons; symbol scores per (file, name)
    (see :mod:`.symbols`: negative for an incidental definition the task does not name)."""

    files: tuple[tuple[str, float], ...]
    reasons: dict[str, tuple[Reason, ...]]
    symbols: dict[tuple[str, str], float]
    symbol_reasons: dict[tuple[str, str], tuple[Reason, ...]]
    #: files the task names by path, module or traceback frame
    named: frozenset[str]


def _norm(scores: Mapping[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    return {k: v / top for k, v in scores.items()} if top > 0 else {}


def rank_task(
    query: TaskQuery,
    files: Mapping[str, FileSymbols],
    table: SymbolTable,
    lexical: LexicalIndex,
    walk: Callable[[Mapping[str, float]], Mapping[str, float]],
    prior: Mapping[str, float],
    chat: frozenset[str] = frozenset(),
    mentioned_files: frozenset[str] = frozenset(),
    disabled: frozenset[str] = frozenset(),
) -> TaskRanking:
    """Rank ``files`` for ``query``.

    ``walk(personalization)`` runs personalized PageRank over the repository's graph and
    returns file -> rank; ``prior`` is the task-free PageRank (the last tie-break).
    """
    paths = sorted(files)
    reasons: dict[str, list[Reason]] = defaultdict(list)
    explicit = Findings()
    if "explicit" not in disabled:
        explicit = find_explicit(
            query, PathIndex(paths), table.defines, {p: files[p].definitions for p in paths}
        )
    for p in paths:
        for signal, detail, w in explicit.files.get(p, ()):
            reasons[p].append(Reason(signal, detail, round(w, 4)))
    ex_score = {p: s for p in explicit.files if (s := explicit.file_score(p)) > 0}

    lex_score: dict[str, float] = {}
    idf: dict[str, float] = {}
    if "lexical" not in disabled:
        raw, contrib = lexical.score(query.terms, idf)
        lex_score = _norm(raw)
        for p, s in lex_score.items():
            top_terms = ", ".join(t for t, _ in contrib.get(p, [])[:6])
            reasons[p].append(Reason("lexical", top_terms, round(s, 4)))

    seed: defaultdict[str, float] = defaultdict(float)
    for p, s in ex_score.items():
        seed[p] += s
    for p, s in lex_score.items():
        seed[p] += s

    test_score: dict[str, float] = defaultdict(float)
    if "tests" not in disabled:
        by_stem: dict[str, list[str]] = defaultdict(list)
        for p in paths:
            if file_role(p) == CODE:
                by_stem[p.rsplit("/", 1)[-1].rsplit(".", 1)[0]].append(p)
        for p, s in sorted(seed.items()):
            stem = tested_stem(p)
            targets = by_stem.get(stem or "", [])
            for t in targets:
                test_score[t] += TEST_SHARE * s / len(targets)
                reasons[t].append(Reason("tests", p, round(TEST_SHARE * s / len(targets), 4)))

    graph_score: dict[str, float] = {}
    if "graph" not in disabled:
        top = sorted(seed.items(), key=lambda x: (-x[1], x[0]))[:MAX_SEEDS]
        pers = {p: s for p, s in top if s > 0}
        base = max(pers.values(), default=1.0)
        for p in chat | mentioned_files:
            if p in files:
                pers[p] = pers.get(p, 0.0) + base
        if pers:
            # only what arrives over edges: the walk's restarts at the seeds themselves are the
            # seeds' own evidence, already counted
            total = sum(pers.values())
            arrived = {p: r - (1 - ALPHA) * pers.get(p, 0.0) / total for p, r in walk(pers).items()}
            graph_score = _norm({p: r for p, r in arrived.items() if r > 0})
    for p, g in graph_score.items():
        if g >= 0.05:
            reasons[p].append(
                Reason("graph", "near the files the task points at", round(GRAPH_WEIGHT * g, 4))
            )

    about_tests = query.about_tests
    prior_n = _norm(prior)
    scores: dict[str, float] = {}
    for p in paths:
        s = seed.get(p, 0.0) + GRAPH_WEIGHT * graph_score.get(p, 0.0) + test_score.get(p, 0.0)
        role = file_role(p)
        if (
            "roles" not in disabled
            and role != CODE
            and not about_tests
            and p not in explicit.named
            and s > 0
        ):
            s *= ROLE_FACTOR
            reasons[p].append(
                Reason("demoted", f"{role} file; the task is not about {role}s", ROLE_FACTOR)
            )
        scores[p] = s + 1e-6 * prior_n.get(p, 0.0)

    # a declaration file and its implementation rank as one unit (see pairs.py)
    scores = unite_pairs(
        scores,
        {p: GRAPH_WEIGHT * g for p, g in graph_score.items()},
        {p: seed.get(p, 0.0) + test_score.get(p, 0.0) for p in paths},
        reasons,
    )

    ranked = tuple(
        sorted(((p, float(f"{s:.12g}")) for p, s in scores.items()), key=lambda x: (-x[1], x[0]))
    )

    named_scores: dict[tuple[str, str], float] = {}
    named_reasons: dict[tuple[str, str], tuple[Reason, ...]] = {}
    for key, evs in explicit.symbols.items():
        best: dict[tuple[str, str], float] = {}
        for sig, det, w in evs:
            best[(sig, det)] = max(w, best.get((sig, det), 0.0))
        named_scores[key] = sum(best.values())
        named_reasons[key] = tuple(
            Reason(s, d, round(w, 4))
            for (s, d), w in sorted(best.items(), key=lambda x: (-x[1], x[0]))
        )
    symbols = score_symbols(
        ranked,
        {p: files[p].definitions for p in paths},
        named_scores,
        named_reasons,
        idf,
        read=lexical.read,
    )
    return TaskRanking(
        files=ranked,
        reasons={
            p: tuple(sorted(rs, key=lambda r: (-r.weight, r.signal, r.detail))[:MAX_REASONS])
            for p, rs in reasons.items()
        },
        symbols=symbols.scores,
        symbol_reasons=symbols.reasons,
        named=frozenset(explicit.named),
    )
