"""The relevance model: which files and symbols a task needs, with the evidence for each.

Signals, each a score per file:

* **explicit** (:mod:`.explicit`): paths, traceback frames, module and qualified names, quoted
  names, error classes, identifiers and file stems the task names, each weighted by its
  specificity; the file-stem evidence also weighted by how specific the word is in this
  repository and whether the reporter wrote it in prose or only in pasted code;
* **lexical** (:mod:`.lexical`): BM25F of the task's terms over the file's path, definition names,
  signatures and docstrings, and text, normalized to the best file;
* **graph**: personalized PageRank over the reference and import graph, seeded by the two
  signals above (and by chat and mentioned files), so the definers, callers and importers of what
  the task points at come next;
* **tests**: a test file that matches the task lends half its score to the module it is named
  after; test, example, doc and vendored files are demoted unless the task is about tests.

The lexical and graph signals are each split by the file's hub-ness (its percentile of the
task-free PageRank), so a file central to everything earns its place from the task's evidence.
The file's score is the weighted sum of these features times the role factor
(:mod:`.weights`: fitted on repositories apart from the ones it is judged on, by
``benchmarks/fit_ranking.py``), with the task-free PageRank as the last tie-break.
:func:`rank_task` with ``features=True`` also returns every feature's raw value per file, which
the fit reads. Each definition of the best files is then scored by its own evidence
(:mod:`.symbols`).
"""

from __future__ import annotations

import functools
import heapq
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..graph import SymbolTable
from ..model import FileSymbols, Reason
from ..rank import ALPHA
from ..summaryview import definitions_of
from .explicit import Findings, PathIndex, distinctive, find_explicit
from .lexical import FIELDS as LEXICAL_FIELDS
from .lexical import LexicalIndex, expand_word
from .messages import message_files
from .pairs import unite_pairs
from .query import TaskQuery
from .roles import CODE, TEMPLATE, file_role, tested_stem
from .symbols import (
    SymbolKey,
    SymbolScores,
    score_symbols,
    shortened,
)
from .weights import GRAPH_FEATURES, LanguageWeights, RankingWeights, shipped_weights

TEST_SHARE = 0.5
#: Seeds of the graph walk: the best files by explicit + lexical score (a long tail of weak
#: lexical matches would only blur the walk).
MAX_SEEDS = 50
#: Reasons kept per file (strongest first).
MAX_REASONS = 8
#: A file-stem word seen only in pasted code, a heading or a prompt counts this much of one the
#: reporter wrote in prose.
CODE_ONLY_STEM = 1 / 3

#: Signals that can be switched off to measure what each adds (the ablation in the benchmark).
SIGNALS = ("explicit", "lexical", "graph", "tests", "roles")

#: The explicit evidence kinds (:mod:`.explicit`) behind each per-kind feature.
_KIND_FEATURE = {
    "path": "ex_path",
    "traceback": "ex_path",
    "module": "ex_name",
    "qualified_name": "ex_name",
    "identifier": "ex_name",
    "quoted_name": "ex_name",
    "error_class": "ex_name",
    "file_stem": "ex_stem",
}


@dataclass(frozen=True, slots=True)
class TaskRanking:
    """Every mapped file's score, best first, with reasons; symbol scores per definition, keyed
    (file, qualified name, first line) (see :mod:`.symbols`: negative for an incidental
    definition the task does not name)."""

    files: tuple[tuple[str, float], ...]
    reasons: dict[str, tuple[Reason, ...]]
    symbols: dict[SymbolKey, float]
    symbol_reasons: dict[SymbolKey, tuple[Reason, ...]]
    #: files the task names by path, module or traceback frame
    named: frozenset[str]
    #: with ``rank_task(..., features=True)``: feature -> file -> raw value (files with a
    #: non-zero value only), plus ``hub`` (the task-free PageRank percentile) and ``demoted``
    #: (1.0 for a file the role factor applied to); empty otherwise
    features: dict[str, dict[str, float]] = field(default_factory=dict)


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
    *,
    features: bool = False,
    weights: LanguageWeights | RankingWeights | None = None,
) -> TaskRanking:
    """Rank ``files`` for ``query``.

    ``walk(personalization)`` runs personalized PageRank over the repository's graph and
    returns file -> rank; ``prior`` is the task-free PageRank (hub-ness, and the last
    tie-break). ``weights`` defaults to the shipped fit (:func:`.weights.shipped_weights`: each
    file scored by its language group's set, else the default); one :class:`RankingWeights`
    scores every file alike. ``features`` returns each file's feature values in :attr:`TaskRanking.features`.
    """
    if weights is None:
        weights = shipped_weights()
    elif isinstance(weights, RankingWeights):
        weights = LanguageWeights(weights)
    paths = sorted(files)
    reasons: dict[str, list[Reason]] = defaultdict(list)
    index = PathIndex(paths)
    explicit = _explicit(query, index, files, table, disabled, reasons)
    terms_of: dict[str, str] = {}
    lex_score, idf, lex_views = _lexical(query, lexical, disabled, terms_of)
    seed: defaultdict[str, float] = defaultdict(float)
    for p in sorted(explicit.files):
        if (s := explicit.file_score(p)) > 0:
            seed[p] += s
    for p, s in lex_score.items():
        seed[p] += s
    test_score = _tests(paths, seed, disabled, reasons)
    graph_score = _graph(seed, walk, files, chat | mentioned_files, disabled)
    values = _feature_values(
        explicit, lex_score, graph_score, test_score, _stem_specific(query, index, idf), prior
    )
    values.update(lex_views)
    if named_walk := _graph_from_named(explicit, walk, files, disabled):
        values["graph_named"] = named_walk
    if in_title := _stem_in_title(query, index, idf):
        values["stem_title"] = in_title
    uses: dict[str, list[str]] = defaultdict(list)
    if refs := _references_to_named(query, table, disabled, uses):
        values["ref_name"] = refs
    read = _read_once(lexical.read)  # the holders of messages and the best files' symbols
    held: dict[str, str] = {}
    if "explicit" not in disabled and (
        shown := message_files(query.messages, lexical, lex_score, set(paths), read)
    ):
        values["message"] = {p: v for p, (v, _) in shown.items()}
        held = {p: m for p, (_, m) in shown.items()}
    if "explicit" in disabled:
        values.pop("stem_specific", None)
    _fitted_reasons(values, weights, terms_of, uses, held, reasons)
    demoted = _demoted(query, paths, explicit.named, disabled)
    ranked = _combine(paths, values, demoted, prior, weights, reasons)
    symbols = _score_symbols(ranked, files, paths, explicit, idf, read, query.messages)
    if features:
        values["demoted"] = dict.fromkeys(sorted(demoted), 1.0)
    return TaskRanking(
        files=ranked,
        reasons={
            p: tuple(sorted(rs, key=lambda r: (-r.weight, r.signal, r.detail))[:MAX_REASONS])
            for p, rs in reasons.items()
        },
        symbols=symbols.scores,
        symbol_reasons=symbols.reasons,
        named=frozenset(explicit.named),
        features=values if features else {},
    )


def _explicit(
    query: TaskQuery,
    index: PathIndex,
    files: Mapping[str, FileSymbols],
    table: SymbolTable,
    disabled: frozenset[str],
    reasons: dict[str, list[Reason]],
) -> Findings:
    """The task's explicit references (empty when the signal is off), each a reason."""
    if "explicit" in disabled:
        return Findings()
    found = find_explicit(query, index, table.defines, definitions_of(files))
    for p in sorted(found.files):
        for signal, detail, w in found.files[p]:
            reasons[p].append(Reason(signal, detail, round(w, 4)))
    return found


def _lexical(
    query: TaskQuery,
    lexical: LexicalIndex,
    disabled: frozenset[str],
    terms_of: dict[str, str],
) -> tuple[dict[str, float], dict[str, float], dict[str, dict[str, float]]]:
    """BM25F normalized to the best file, each found term's IDF, and the lexical features
    beside it (each field alone, the title's, the prose's and the code names' terms, the share
    of the terms, the folder's best match, the file's length), each normalized to its best file;
    ``terms_of`` receives each matching file's best terms (for its reason)."""
    if "lexical" in disabled:
        return {}, {}, {}
    found = lexical.match(
        query.terms,
        {"title": query.title_terms, "prose": query.prose_terms, "names": query.name_terms},
    )
    scores = _norm(found.scores)
    for p in scores:
        terms_of[p] = ", ".join(t for t, _ in found.contrib.get(p, [])[:6])
    views = {f"lex_{name}": _norm(found.fields[name]) for name in LEXICAL_FIELDS}
    views["lex_title"] = _norm(found.parts["title"])
    views["lex_prose"] = _norm(found.parts["prose"])
    views["lex_ident"] = _norm(found.parts["names"])
    views["lex_cover"] = _coverage(found.contrib, found.idf)
    views["lex_dir"] = _directory_best(scores)
    size = lexical.size_percentiles()
    views["size"] = {p: size[p] for p in scores if size.get(p)}
    views["lex_size"] = {p: s * size[p] for p, s in scores.items() if s * size.get(p, 0.0)}
    return scores, found.idf, {k: v for k, v in views.items() if v}


#: The reason each fitted feature's share of a file's score is shown under (the explicit
#: evidence shows its own reasons, one per reference the task makes).
_REASON_OF_FEATURE = {
    **dict.fromkeys(
        (
            "lex_plain",
            "lex_hub",
            "lex_rr",
            "lex_path",
            "lex_names",
            "lex_docs",
            "lex_body",
            "lex_title",
            "lex_prose",
            "lex_ident",
            "lex_cover",
            "size",
            "lex_size",
        ),
        "lexical",
    ),
    "graph_plain": "graph",
    "graph_hub": "graph",
    "graph_named": "graph",
    "lex_dir": "folder",
    "ref_name": "uses",
    "message": "message",
}
#: The features whose signals show reasons of their own: the explicit evidence (one per
#: reference the task makes, file stems included) and the tests signal.
_OWN_REASONS = frozenset(
    {"explicit", "ex_path", "ex_name", "ex_stem", "stem_specific", "stem_title", "named", "tests"}
)


def _fitted_reasons(
    values: Mapping[str, Mapping[str, float]],
    weights: LanguageWeights,
    terms_of: Mapping[str, str],
    uses: Mapping[str, list[str]],
    held: Mapping[str, str],
    reasons: dict[str, list[Reason]],
) -> None:
    """A reason per signal the fit weighs (lexical, graph, folder, uses, message), worth its
    features' weighted share of the file's score, with what matched."""
    shares: dict[tuple[str, str], float] = defaultdict(float)
    one_set = weights.default if not weights.groups else None
    for feature, signal in _REASON_OF_FEATURE.items():
        if one_set is not None:
            w = one_set.weights[feature]
            if w:
                for p, v in values.get(feature, {}).items():
                    shares[p, signal] += w * v
            continue
        for p, v in values.get(feature, {}).items():
            shares[p, signal] += weights.for_path(p).weights[feature] * v
    for (p, signal), w in sorted(shares.items()):
        if round(w, 4) > 0:
            reasons[p].append(
                Reason(signal, _reason_detail(signal, p, terms_of, uses, held), round(w, 4))
            )


def _reason_detail(
    signal: str,
    path: str,
    terms_of: Mapping[str, str],
    uses: Mapping[str, list[str]],
    held: Mapping[str, str],
) -> str:
    """What a fitted signal's reason says of ``path``."""
    if signal == "message":
        return shortened(held.get(path, ""))
    if signal == "lexical":
        return terms_of.get(path, "")
    if signal == "graph":
        return "near the files the task points at"
    if signal == "folder":
        return "other files of its folder match the task"
    return ", ".join(sorted(uses.get(path, ()))[:6])


def _coverage(
    contrib: Mapping[str, list[tuple[str, float]]], idf: Mapping[str, float]
) -> dict[str, float]:
    """The share of the task's terms (by IDF) that each file has: a file that has the rare
    terms of the task together, rather than many of one."""
    total = sum(idf.values())
    if total <= 0:
        return {}
    return {p: sum(idf[t] for t, _ in terms) / total for p, terms in contrib.items() if terms}


def _directory_best(scores: Mapping[str, float]) -> dict[str, float]:
    """For each file with a lexical score, the best score of another file of its folder: the
    part of the repository the task is about, beside the file's own match."""
    by_dir: dict[str, list[tuple[float, str]]] = defaultdict(list)
    for p, s in scores.items():
        by_dir[p.rpartition("/")[0]].append((s, p))
    out: dict[str, float] = {}
    for members in by_dir.values():
        if len(members) < 2:
            continue
        # the best and the second best (ties by path): each file's best other is one of them
        best, second = heapq.nsmallest(2, members, key=lambda x: (-x[0], x[1]))
        for _, p in members:
            out[p] = second[0] if p == best[1] else best[0]
    return {p: v for p, v in out.items() if v > 0}


def _references_to_named(
    query: TaskQuery,
    table: SymbolTable,
    disabled: frozenset[str],
    names_of: dict[str, list[str]],
) -> dict[str, float]:
    """Files that use the code names the task writes (compound identifiers, names in backticks,
    error classes) and some file defines: the reporter names what they call, the fix is often
    in its callers or in what handles it. Each name counts 1 spread over its referencing
    files; a file's sum is capped at 1."""
    if "explicit" in disabled:
        return {}
    out: dict[str, float] = defaultdict(float)
    for word in sorted(query.words):
        strong = word in query.quoted or word in query.errors or distinctive(word)
        if not strong or not table.defines.get(word):
            continue
        users = table.references.get(word) or {}
        definers = set(table.defines.get(word) or ())
        users = {f: n for f, n in users.items() if f not in definers}
        for f in users:
            out[f] += 1.0 / len(users)
            names_of[f].append(word)
    return {f: min(1.0, v) for f, v in out.items() if v > 0}


def _tests(
    paths: list[str],
    seed: Mapping[str, float],
    disabled: frozenset[str],
    reasons: dict[str, list[Reason]],
) -> dict[str, float]:
    """What each matching test file lends to the code module it is named after."""
    lent: dict[str, float] = defaultdict(float)
    if "tests" in disabled:
        return lent
    by_stem: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        if file_role(p) == CODE:
            by_stem[p.rsplit("/", 1)[-1].rsplit(".", 1)[0]].append(p)
    for p, s in sorted(seed.items()):
        stem = tested_stem(p)
        targets = by_stem.get(stem or "", [])
        for t in targets:
            lent[t] += TEST_SHARE * s / len(targets)
            reasons[t].append(Reason("tests", p, round(TEST_SHARE * s / len(targets), 4)))
    return lent


def _graph(
    seed: Mapping[str, float],
    walk: Callable[[Mapping[str, float]], Mapping[str, float]],
    files: Mapping[str, FileSymbols],
    pinned: frozenset[str],
    disabled: frozenset[str],
) -> dict[str, float]:
    """Personalized PageRank from the best seeds (and the chat and mentioned files): only the
    rank that arrives over edges, normalized to the best file."""
    if "graph" in disabled:
        return {}
    top = sorted(seed.items(), key=lambda x: (-x[1], x[0]))[:MAX_SEEDS]
    pers = {p: s for p, s in top if s > 0}
    base = max(pers.values(), default=1.0)
    for p in sorted(pinned):
        if p in files:
            pers[p] = pers.get(p, 0.0) + base
    if not pers:
        return {}
    # the walk's restarts at the seeds themselves are the seeds' own evidence, already counted
    total = sum(pers.values())
    arrived = {p: r - (1 - ALPHA) * pers.get(p, 0.0) / total for p, r in walk(pers).items()}
    return _norm({p: r for p, r in arrived.items() if r > 0})


def _graph_from_named(
    explicit: Findings,
    walk: Callable[[Mapping[str, float]], Mapping[str, float]],
    files: Mapping[str, FileSymbols],
    disabled: frozenset[str],
) -> dict[str, float]:
    """Personalized PageRank seeded only by what the task names (paths, frames, modules and
    definitions, file stems; not its words): the neighbourhood of what the reporter points at,
    where a fix often lands (the caller of a named function, the module a frame passes
    through). Only the rank that arrives over edges, normalized to the best file."""
    if "graph" in disabled or "explicit" in disabled:
        return {}
    seed = {p: s for p in sorted(explicit.files) if (s := explicit.file_score(p)) > 0}
    return _graph(seed, walk, files, frozenset(), disabled)


def _word_idf(word: str, idf: Mapping[str, float]) -> float:
    """The IDF of the term a written word is indexed as (``fields`` as ``field``)."""
    parts = expand_word(word)
    return idf.get(parts[0], 0.0) if parts else 0.0


def _stem_in_title(
    query: TaskQuery, index: PathIndex, idf: Mapping[str, float]
) -> dict[str, float]:
    """File-name evidence from the task's first line only (an issue's title names what it is
    about), weighted as :func:`_stem_specific` weighs it."""
    found = _stem_evidence(query.title_words, index, idf, lambda word: 1.0)
    return {f: v for f, v in found.items() if v > 0}


def _stem_specific(
    query: TaskQuery, index: PathIndex, idf: Mapping[str, float]
) -> dict[str, float]:
    """File-name evidence weighted by the word's specificity here and where it stands: each word
    of the task that is a file's stem, IDF over the files' contents (relative to the task's
    rarest term; 1 when the lexical signal has none), a third when only in pasted code, spread
    over the files sharing the stem."""
    return _stem_evidence(
        query.words,
        index,
        idf,
        lambda word: 1.0 if word in query.prose else CODE_ONLY_STEM,
    )


def _stem_evidence(
    words: Iterable[str],
    index: PathIndex,
    idf: Mapping[str, float],
    where: Callable[[str], float],
) -> dict[str, float]:
    """Each file whose stem is one of ``words``: the best of the word's IDF here (relative to
    the rarest term; 1 without any) times ``where(word)``, spread over the files sharing it."""
    top = max(idf.values(), default=0.0)
    out: dict[str, float] = defaultdict(float)
    for word in sorted(words):
        stems = index.by_stem.get(word.lower())
        if not stems:
            continue
        specific = _word_idf(word, idf) / top if top > 0 else 1.0
        weight = where(word)
        for f in stems:
            out[f] = max(out[f], specific * weight / len(stems))
    return dict(out)


def _hubness(prior: Mapping[str, float]) -> dict[str, float]:
    """Each file's percentile of the task-free PageRank: 0 for the least central, 1 for the
    most (ties broken by path, so the value is the same on every run)."""
    order = sorted(prior, key=lambda p: (prior[p], p))
    n = len(order)
    return {p: i / (n - 1) for i, p in enumerate(order)} if n > 1 else dict.fromkeys(order, 0.0)


def _feature_values(
    explicit: Findings,
    lex_score: Mapping[str, float],
    graph_score: Mapping[str, float],
    test_score: Mapping[str, float],
    stem_specific: Mapping[str, float],
    prior: Mapping[str, float],
) -> dict[str, dict[str, float]]:
    """feature -> file -> value (see :data:`.weights.FEATURES`), non-zero values only."""
    hub = _hubness(prior)
    out: dict[str, dict[str, float]] = defaultdict(dict)
    for p in sorted(explicit.files):
        if (s := explicit.file_score(p)) > 0:
            out["explicit"][p] = s
        for signal, _, w in explicit.files[p]:
            name = _KIND_FEATURE.get(signal)
            if name is not None and w > out[name].get(p, 0.0):
                out[name][p] = w
    for name, scores in (("lex", lex_score), ("graph", graph_score)):
        for p, s in scores.items():
            h = hub.get(p, 0.0)
            if s * (1.0 - h):
                out[f"{name}_plain"][p] = s * (1.0 - h)
            if s * h:
                out[f"{name}_hub"][p] = s * h
    ranked_lex = sorted(lex_score.items(), key=lambda x: (-x[1], x[0]))
    out["lex_rr"] = {p: 1.0 / i for i, (p, s) in enumerate(ranked_lex, 1) if s > 0}
    out["named"] = dict.fromkeys(sorted(explicit.named), 1.0)
    out["tests"] = {p: s for p, s in test_score.items() if s}
    out["stem_specific"] = {p: s for p, s in stem_specific.items() if s}
    out["hub"] = hub
    return out


def _demoted(
    query: TaskQuery, paths: list[str], named: set[str], disabled: frozenset[str]
) -> set[str]:
    """Test, example, doc, template and vendored files the task is not about (and does not
    name)."""
    if "roles" in disabled or query.about_tests:
        return set()
    spared = {CODE, TEMPLATE} if query.about_templates else {CODE}
    return {p for p in paths if p not in named and file_role(p) not in spared}


def _combine(
    paths: list[str],
    values: Mapping[str, Mapping[str, float]],
    demoted: set[str],
    prior: Mapping[str, float],
    weights: LanguageWeights,
    reasons: dict[str, list[Reason]],
) -> tuple[tuple[str, float], ...]:
    """Every file's fitted score, best first (ties by task-free PageRank, then path); each file
    weighed by its language group's set (:meth:`.weights.LanguageWeights.for_path`)."""
    prior_n = _norm(prior)
    scores: dict[str, float] = {}
    graph_part: dict[str, float] = {}
    rest_part: dict[str, float] = {}
    by_file: dict[str, dict[str, float]] = defaultdict(dict)
    for k, v in values.items():
        for p, x in v.items():
            by_file[p][k] = x
    for p in paths:
        own = by_file.get(p, {})
        fw = weights.for_path(p)
        s = fw.score(own)
        g = fw.score({k: x for k, x in own.items() if k in GRAPH_FEATURES})
        graph_part[p], rest_part[p] = g, s - g
        if p in demoted and s > 0:
            s *= fw.role_factor
            role = file_role(p)
            reasons[p].append(
                Reason("demoted", f"{role} file; the task is not about {role}s", fw.role_factor)
            )
        scores[p] = s + 1e-6 * prior_n.get(p, 0.0)
    # a declaration file and its implementation rank as one unit (see pairs.py)
    scores = unite_pairs(scores, graph_part, rest_part, reasons)
    return tuple(
        sorted(((p, float(f"{s:.12g}")) for p, s in scores.items()), key=lambda x: (-x[1], x[0]))
    )


def _read_once(
    read: Callable[[str], bytes | None] | None,
) -> Callable[[str], bytes | None] | None:
    """``read``, each file read at most once for this task (a file may hold a message the
    task shows and be among the best files whose symbols are scored)."""
    return functools.cache(read) if read is not None else None


def _score_symbols(
    ranked: tuple[tuple[str, float], ...],
    files: Mapping[str, FileSymbols],
    paths: list[str],
    explicit: Findings,
    idf: Mapping[str, float],
    read: Callable[[str], bytes | None] | None,
    messages: Sequence[str] = (),
    features: bool = False,
) -> SymbolScores:
    """Each definition of the best files scored by its own evidence (:mod:`.symbols`), with
    each one's features when asked for (what ``benchmarks/fit_symbols.py`` fits on)."""
    file_defs = {p: files[p].definitions for p in paths}
    return score_symbols(
        ranked,
        file_defs,
        explicit.symbols,
        dict(idf),
        read=read,
        messages=messages,
        features=features,
    )
