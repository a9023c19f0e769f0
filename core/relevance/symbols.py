"""Each definition scored for the task by its own evidence, so the functions and methods the task
is about lead their file's symbols (and the ``--task`` map, ``ranked_symbols`` and the packs).

A definition's evidence:

* **named**: what :mod:`.explicit` found for it (its name or qualified name in the text, a
  traceback frame inside its lines, a dotted module path ending in it);
* **words**: the task's terms in its name (x3), in its signature and docstring (x1) and, for a
  function or method of the best files, in its body (x1, read from the file text the lexical
  index reads), each weighted by the term's rarity in the repository (the index's IDF) and
  saturated like BM25 (a term found once says most of what it can);
* **incidental** definitions (module- and class-level variables such as ``__all__``,
  ``__slots__`` and bare class attributes, and helpers defined inside a function, which a file
  repeats in every method that needs one) get only the **named** evidence: they lead only when the
  task names them, and without it they come after every other definition of their file.

A definition's score is its **named** evidence (what the packs take as "the task names it");
an incidental one without any has a negative score, so it sorts last. The **words** evidence,
``WORDS_WEIGHT * words * file relevance`` (``words`` normalized to the best definition), is one of
its reasons (signal ``words``); its order in its file and in the map is by the two together
(:func:`task_evidence`).
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..model import Reason, SymbolKind, Tag
from .lexical import expand_word

#: The words evidence, at the best definition of the best file, is worth this much next to a
#: name the task writes (0.5 for an identifier, 0.8 for a qualified name or traceback frame).
WORDS_WEIGHT = 0.4
#: Field weights of the words evidence: a term in a definition's name says most.
NAME_WEIGHT = 3.0
DOC_WEIGHT = 1.0
BODY_WEIGHT = 1.0
#: BM25 saturation and length normalization of the body field.
K1 = 1.2
B = 0.75
#: Definitions of this many of the best files are scored (a map or a pack shows fewer); the
#: bodies of this many of them are read.
MAX_FILES = 50
MAX_BODY_FILES = 25
#: Bodies are searched for the task's rarest terms only (by IDF), of three letters or more: the
#: common ones say little about one function and would make the scan read every line.
MAX_BODY_TERMS = 64
#: Only this many lines of a body are read (a generated table is not a function's meaning).
MAX_BODY_LINES = 400
#: Score of an incidental definition the task does not name (after every other one).
INCIDENTAL = -1.0

#: The signal of the words evidence among a definition's reasons.
WORDS = "words"

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,63}")
_FUNCTIONS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD})
_DATA = frozenset(
    {SymbolKind.VARIABLE, SymbolKind.CONSTANT, SymbolKind.FIELD, SymbolKind.ATTRIBUTE}
)


@dataclass(frozen=True, slots=True)
class SymbolScores:
    scores: dict[tuple[str, str], float]
    reasons: dict[tuple[str, str], tuple[Reason, ...]]


def task_evidence(score: float, reasons: Sequence[Reason]) -> float:
    """A definition's whole task evidence: its score (named evidence) and its words evidence."""
    return score + sum(r.weight for r in reasons if r.signal == WORDS)


def incidental(tag: Tag, functions: frozenset[str]) -> bool:
    """A variable or attribute (``__all__``, ``__slots__``, ``x = 1`` in a class), or a
    definition inside a function (``Printer._print_x.parens``)."""
    if str(tag.symbol_kind) in _DATA:
        return True
    scope = tag.scope
    while scope:
        if scope in functions:
            return True
        scope = scope.rpartition(".")[0]
    return False


def _query_terms(text: str, idf: Mapping[str, float]) -> Counter[str]:
    """How often each query term occurs in ``text`` (other words are not counted)."""
    out: Counter[str] = Counter()
    for w in _WORD.findall(text):
        for t in expand_word(w):
            if t in idf:
                out[t] += 1
    return out


def _saturated(tf: float) -> float:
    return tf / (K1 + tf) if tf > 0 else 0.0


class _FileText:
    """A file's text read once for body terms: the lines of each query term's occurrences and
    the running character count, so a definition's body counts are a few bisections. Only the
    lines where a query term may occur (``probe``) are split into words."""

    __slots__ = ("occurrences", "size")

    def __init__(self, text: str, idf: Mapping[str, float], probe: re.Pattern[str]):
        lines = text.split("\n")
        self.size = [0, *itertools.accumulate(len(line) + 1 for line in lines)]
        self.occurrences: dict[str, list[int]] = {}
        # one scan of the whole text finds the lines worth splitting into words
        candidates = sorted(
            {bisect.bisect_right(self.size, m.start()) for m in probe.finditer(text.lower())}
        )
        for number in candidates:
            for w in _WORD.findall(lines[number - 1]):
                for t in expand_word(w):
                    if t in idf:
                        self.occurrences.setdefault(t, []).append(number)

    def body(self, tag: Tag) -> tuple[dict[str, int], int]:
        """Query term counts and the length of the lines after ``tag``'s header."""
        first = min(tag.start_line, len(self.size) - 1)
        last = min(tag.end_line, tag.start_line + MAX_BODY_LINES, len(self.size) - 1)
        counts = {}
        for term, at in self.occurrences.items():
            n = bisect.bisect_right(at, last) - bisect.bisect_right(at, first)
            if n:
                counts[term] = n
        return counts, self.size[last] - self.size[first]


def _probe(idf: Mapping[str, float]) -> re.Pattern[str]:
    """Matches (in lower-cased text) where a query term may be: terms are lower-cased words or parts of them,
    with a plural ``s`` folded away (or ``ies`` made ``y``), so each is a substring of its word
    but for that ``y``."""
    stems = sorted({t[:-1] if t.endswith("y") and len(t) > 2 else t for t in idf}, key=len)
    return re.compile("|".join(re.escape(s) for s in reversed(stems)))


def score_symbols(
    ranked_files: Sequence[tuple[str, float]],
    file_defs: Mapping[str, Sequence[Tag]],
    named: Mapping[tuple[str, str], float],
    named_reasons: Mapping[tuple[str, str], tuple[Reason, ...]],
    idf: Mapping[str, float],
    read: Callable[[str], bytes | None] | None = None,
) -> SymbolScores:
    """Scores of the definitions of the best files of ``ranked_files`` (best first, with their
    scores) for query terms weighted by ``idf``; ``named`` is the explicit evidence per (file,
    name). ``read`` gives a file's text for body terms (none are read without it)."""
    top = [(p, s) for p, s in ranked_files[:MAX_FILES] if p in file_defs]
    best_file = max((s for _, s in top), default=0.0)
    words: dict[tuple[str, str], float] = {}
    matched: dict[tuple[str, str], dict[str, float]] = {}
    is_incidental: dict[tuple[str, str], bool] = {}
    docs: dict[str, Counter[str]] = {}  # signatures repeat (``def __init__(self):``)
    rare = sorted((t for t in idf if len(t) >= 3), key=lambda t: (-idf[t], t))[:MAX_BODY_TERMS]
    body_idf = {t: idf[t] for t in rare}
    probe = _probe(body_idf) if body_idf else None
    for rank, (path, _) in enumerate(top):
        defs = file_defs[path]
        functions = frozenset(t.qualified_name for t in defs if str(t.symbol_kind) in _FUNCTIONS)
        raw = _text(read, path) if probe and read is not None and rank < MAX_BODY_FILES else None
        text = _FileText(raw, body_idf, probe) if raw is not None and probe else None
        bodies: dict[int, tuple[dict[str, int], int]] = {}
        if text is not None:
            for t in defs:
                if str(t.symbol_kind) in _FUNCTIONS and t.end_line > t.start_line:
                    bodies[id(t)] = text.body(t)
        avg_body = max(1.0, sum(n for _, n in bodies.values()) / len(bodies)) if bodies else 1.0
        for t in defs:
            key = (path, t.name)
            inc = incidental(t, functions)
            is_incidental[key] = is_incidental.get(key, True) and inc
            if inc or not idf:
                continue
            header = " ".join(s for s in (t.signature, t.docstring) if s)
            doc = docs.get(header)
            if doc is None:
                doc = docs[header] = _query_terms(header, idf)
            body, length = bodies.get(id(t), ({}, 0))
            norm = 1.0 - B + B * length / avg_body
            hits: dict[str, float] = {}
            for term in sorted({*(x for x in expand_word(t.name) if x in idf), *doc, *body}):
                f = (
                    NAME_WEIGHT * (term in expand_word(t.name))
                    + DOC_WEIGHT * _saturated(doc.get(term, 0))
                    + BODY_WEIGHT * _saturated(body.get(term, 0) / norm)
                )
                hits[term] = idf[term] * f
            s = sum(hits.values())
            if s > words.get(key, 0.0):
                words[key] = s
                matched[key] = hits
    best_words = max(words.values(), default=0.0)
    file_score = dict(top)
    scores: dict[tuple[str, str], float] = {}
    reasons: dict[tuple[str, str], tuple[Reason, ...]] = {}
    for key in sorted(set(is_incidental) | set(named)):
        n = named.get(key, 0.0)
        rel = file_score.get(key[0], 0.0) / best_file if best_file > 0 else 0.0
        w = WORDS_WEIGHT * rel * words.get(key, 0.0) / best_words if best_words > 0 else 0.0
        rs = list(named_reasons.get(key, ()))
        if w > 0:
            terms = ", ".join(t for t, _ in sorted(matched[key].items(), key=lambda x: -x[1])[:6])
            rs.append(Reason(WORDS, terms, round(w, 4)))
        if n > 0:
            scores[key] = n
        elif w <= 0 and is_incidental.get(key, False):
            scores[key] = INCIDENTAL
        if rs:
            reasons[key] = tuple(sorted(rs, key=lambda r: (-r.weight, r.signal, r.detail)))
    return SymbolScores(scores, reasons)


def _text(read: Callable[[str], bytes | None], path: str) -> str | None:
    """The file's text (None when it cannot be read)."""
    try:
        data = read(path)
    except OSError:
        return None
    return None if data is None else data.decode("utf-8", "replace")
