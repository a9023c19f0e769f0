"""Each definition scored for the task by its own evidence, so the functions and methods the task
is about lead their file's symbols (and the ``--task`` map, ``ranked_symbols`` and the packs).

A definition's evidence:

* **named**: what :mod:`.explicit` found for it (its name or qualified name in the text, a
  traceback frame inside its lines, a dotted module path ending in it);
* **words**: the task's terms in its name, in its signature and docstring and, for a function
  or method of the best files, in its body (read from the file text the lexical index reads),
  each field by its fitted weight (:mod:`.symbol_weights`), each term by its rarity in the
  repository (the index's IDF) and saturated like BM25 (a term found once says most of what it can), a body's counts not
  normalized by its length (a long function is where a change most often lands);
* **incidental** definitions (module- and class-level variables such as ``__all__``,
  ``__slots__`` and bare class attributes, and helpers defined inside a function, which a file
  repeats in every method that needs one) get only the **named** evidence, and of it only
  ``owner_share``: named, they come before the other definitions without evidence but after
  a function the words describe (the attribute says where to look, the code that reads it is
  what changes); not named, they come after every other definition of their file.

Every score is the definition's own, keyed by :func:`definition_key` (file, qualified name, first
line): two ``__init__`` methods of one file, or the ``parens`` helper of each method, are scored
apart. Named evidence written as a name goes to every definition of that name, but a traceback
frame (or a path with a line) only to the definition holding its line, ``Class.method`` only to
the methods of that class, and the class itself gets ``owner_share`` of it (the method leads,
its class after). A class the task names lends its evidence to its best member that has
evidence of its own (signal ``scope``): the method the task describes comes before its class.
A class with members then keeps ``owner_share`` of its own evidence, named or words: what a
task says of a class is most often said of one of its methods.

A definition's score is its **named** evidence (what the packs take as "the task names it");
an incidental one without any has a negative score, so it sorts last. The **words** evidence
(its fields' weighted sum normalized to the best definition's, times the fitted ``words`` and
its file's score relative to the best file's) is one of its reasons (signal ``words``); its
order in its file and in the map is by the two together (:func:`task_evidence`). The fitted
values are :class:`.symbol_weights.SymbolWeights`; what they weigh is each definition's
:class:`DefinitionFeatures`, combined by :func:`combined` (which the fit's replay calls too).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from ..model import Reason, SymbolKind, Tag
from .lexical import expand_word
from .symbol_weights import SymbolWeights, shipped_symbol_weights

#: BM25 saturation of the body field. A body's term counts are not normalized by its length
#: (BM25's ``b`` is 0 here): normalizing keeps a long document from matching everything, but a
#: long function is where a change most often lands (the changed function is in the longest
#: quarter of its file's functions twice as often as in the shortest), so its length is no
#: evidence against it.
K1 = 1.2
#: Definitions of this many of the best files are scored (a map or a pack shows fewer); the
#: bodies of this many of them are read.
MAX_FILES = 50
MAX_BODY_FILES = 25
#: Bodies are searched for the task's rarest terms only (by IDF), of three letters or more: the
#: common ones say little about one function and would make the scan read every line.
MAX_BODY_TERMS = 64
#: Only this many lines of a body, and this many bytes of a file, are read (a generated
#: table is not a function's meaning).
MAX_BODY_LINES = 400
MAX_TEXT_BYTES = 256_000
#: Score of an incidental definition the task does not name (after every other one).
INCIDENTAL = -1.0

#: The signal of the words evidence among a definition's reasons.
WORDS = "words"
#: The signal of a named class's evidence lent to its best member.
SCOPE = "scope"
#: The signal of the named evidence of a definition whose code holds a message the task shows.
MESSAGE = "message"
#: A message the task shows, found in a definition of the best files, is named evidence (the
#: code that printed what the reporter saw; its weight is the fitted ``message``). It is
#: spread over the definitions that hold it, and says nothing when more than
#: :data:`MAX_MESSAGE_HOLDERS` do (a phrase the whole code base prints).
MAX_MESSAGE_HOLDERS = 5
#: Signals of the reasons that add to a definition's score in its task evidence.
_EVIDENCE_REASONS = frozenset({WORDS, SCOPE})
#: Explicit evidence kinds whose detail is ``line N``: a frame inside one definition.
_LINE_KINDS = frozenset({"traceback", "path"})

#: A definition: (file, qualified name, first line).
SymbolKey = tuple[str, str, int]
#: Explicit evidence per (file, name): (signal, detail, weight) as :mod:`.explicit` finds it.
NamedEvidence = Mapping[tuple[str, str], Sequence[tuple[str, str, float]]]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,63}")
_WORD_OR_BREAK = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,63}|\n")
_FUNCTIONS = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD})
_DATA = frozenset(
    {SymbolKind.VARIABLE, SymbolKind.CONSTANT, SymbolKind.FIELD, SymbolKind.ATTRIBUTE}
)


@dataclass(frozen=True, slots=True)
class DefinitionFeatures:
    """What a definition's score is made of, before the fitted weights (what
    ``benchmarks/fit_symbols.py`` fits them on): its named evidence of its own and as the owner
    of a ``Class.method`` the task writes (before ``owner_share``), its share of a message the
    task shows, the task terms' IDF-weighted, saturated counts in its name, header and body,
    its file's score relative to the best file, whether it is incidental, and the class it is
    a member of."""

    named: float
    named_owner: float
    message: float
    name: float
    doc: float
    body: float
    file_relevance: float
    incidental: bool
    member_of: SymbolKey | None

    def named_score(self, w: SymbolWeights) -> float:
        """Its named evidence under ``w``: its own, ``owner_share`` of what it has as the owner
        of ``Class.method``, and its share of a message."""
        return self.named + w.owner_share * self.named_owner + w.message * self.message

    def words_score(self, w: SymbolWeights) -> float:
        """Its words evidence before it is normalized to the task's best definition."""
        return w.name * self.name + w.doc * self.doc + w.body * self.body


@dataclass(frozen=True, slots=True)
class DefinitionEvidence:
    """A definition's task evidence under a set of weights (:func:`combined`): its score (the
    named evidence, :data:`INCIDENTAL` for an incidental one without any, None when it has
    neither), its words evidence and what the class that owns it lends it, both as its
    reasons show them (four decimals)."""

    score: float | None
    words: float | None
    lent: float

    @property
    def total(self) -> float:
        """What :func:`task_evidence` makes of its score and reasons."""
        return (self.score or 0.0) + (self.words or 0.0) + self.lent


@dataclass(frozen=True, slots=True)
class SymbolScores:
    scores: dict[SymbolKey, float]
    reasons: dict[SymbolKey, tuple[Reason, ...]]
    #: each scored definition's features, when asked for (``score_symbols(features=True)``)
    features: dict[SymbolKey, DefinitionFeatures] | None = None


def definition_key(path: str, tag: Tag) -> SymbolKey:
    """The key of ``tag``'s scores: one per definition, not per name."""
    return (path, tag.qualified_name, tag.start_line)


def task_evidence(score: float, reasons: Sequence[Reason]) -> float:
    """A definition's whole task evidence: its score (named evidence), its words evidence and
    what a named class lends it."""
    return score + sum(r.weight for r in reasons if r.signal in _EVIDENCE_REASONS)


#: Per definition the explicit evidence points at, per (signal, detail): its strongest weight
#: and whether it names the definition as the owner of what the task writes.
NamedFound = dict[SymbolKey, dict[tuple[str, str], tuple[float, bool]]]


def named_evidence(file_defs: Mapping[str, Sequence[Tag]], found: NamedEvidence) -> NamedFound:
    """The explicit evidence per (file, name) given to the definitions it points at: a line to
    the innermost definition of the name holding it, ``Owner.name`` to the definitions inside an
    ``Owner`` (the owner itself as such: :func:`_as_owner`), a module path's name to the
    top-level one; a bare name to every definition of it. Each (signal, detail) counts once per
    definition, by its strongest instance (whether it names an owner is the same for every
    instance of one (signal, detail))."""
    best: NamedFound = {}
    for (path, name), evs in sorted(found.items()):
        defs = [t for t in file_defs.get(path, ()) if t.name == name]
        for signal, detail, w in evs:
            owner = _as_owner(name, signal, detail)
            for t in _targets(defs, name, signal, detail):
                got = best.setdefault(definition_key(path, t), {})
                if w > got.get((signal, detail), (0.0, False))[0]:
                    got[(signal, detail)] = (w, owner)
    return best


def _as_owner(name: str, signal: str, detail: str) -> bool:
    """The evidence names ``name`` as the owner of what the task writes (``name.method``)."""
    return signal == "qualified_name" and detail.rpartition(".")[2] != name


def _named_parts(found: Mapping[tuple[str, str], tuple[float, bool]]) -> dict[str, float]:
    """One definition's named evidence summed, of its own (``named``) and as an owner
    (``named_owner``): the named fields of its :class:`DefinitionFeatures`."""
    return {
        "named": sum(w for w, owner in found.values() if not owner),
        "named_owner": sum(w for w, owner in found.values() if owner),
    }


def _named_reasons(
    found: Mapping[tuple[str, str], tuple[float, bool]], w: SymbolWeights
) -> list[Reason]:
    """One definition's named evidence as reasons (an owner's times ``owner_share``)."""
    return [
        Reason(signal, detail, round(weight * w.owner_share if owner else weight, 4))
        for (signal, detail), (weight, owner) in found.items()
    ]


def _targets(defs: Sequence[Tag], name: str, signal: str, detail: str) -> Sequence[Tag]:
    """Which definitions of ``name`` (``defs``) one piece of explicit evidence points at."""
    if signal in _LINE_KINDS and detail.startswith("line "):
        line = int(detail[5:]) if detail[5:].isdigit() else 0
        inner = innermost(defs, line)
        return [inner] if inner is not None else defs
    if signal == "qualified_name":
        parts = detail.split(".")
        if len(parts) >= 2 and parts[-1] == name:
            owned = [t for t in defs if t.scope.rpartition(".")[2] == parts[-2]]
            return owned or defs
        return defs
    if signal == "module":
        return [t for t in defs if not t.scope] or defs
    return defs


def innermost(defs: Sequence[Tag], line: int) -> Tag | None:
    """The shortest of ``defs`` holding ``line`` (the first by line of equally long ones)."""
    holding = [t for t in defs if t.start_line <= line <= t.end_line]
    return min(holding, key=lambda t: (t.end_line - t.start_line, t.start_line), default=None)


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


@functools.lru_cache(maxsize=65_536)
def _header_terms(header: str) -> tuple[tuple[str, int], ...]:
    """The terms of a definition's signature and docstring with their counts (memoised: a
    signature repeats across files and queries)."""
    out: Counter[str] = Counter()
    for w in _WORD.findall(header):
        out.update(expand_word(w))
    return tuple(out.items())


def _saturated(tf: float) -> float:
    return tf / (K1 + tf) if tf > 0 else 0.0


class _WordLines:
    """Where each word of a file's text is (line numbers, in order) and how many lines it has:
    what the body terms of any task need, made once per file text."""

    __slots__ = ("lines", "lines_of")

    def __init__(self, text: str):
        self.lines = text.count("\n") + 1
        self.lines_of: dict[str, list[int]] = {}
        number = 1
        # one C-level scan gives the words and the line breaks in order
        for tok in _WORD_OR_BREAK.findall(text):
            if tok == "\n":
                number += 1
            else:
                self.lines_of.setdefault(tok, []).append(number)


@functools.lru_cache(maxsize=64)
def _word_lines(text: str) -> _WordLines:
    return _WordLines(text)


class _FileText:
    """A file's query term occurrences (line numbers), so a definition's body counts are a few
    bisections."""

    __slots__ = ("lines", "occurrences")

    def __init__(self, text: str, idf: Mapping[str, float]):
        words = _word_lines(text)
        self.lines = words.lines
        found: dict[str, list[list[int]]] = {}
        for w, at in words.lines_of.items():
            for t in expand_word(w):
                if t in idf:
                    found.setdefault(t, []).append(at)
        self.occurrences = {
            t: parts[0] if len(parts) == 1 else sorted(itertools.chain.from_iterable(parts))
            for t, parts in found.items()
        }

    def body(self, tag: Tag) -> dict[str, int]:
        """Query term counts of the lines after ``tag``'s header."""
        first = min(tag.start_line, self.lines)
        last = min(tag.end_line, tag.start_line + MAX_BODY_LINES, self.lines)
        counts = {}
        for term, at in self.occurrences.items():
            n = bisect.bisect_right(at, last) - bisect.bisect_right(at, first)
            if n:
                counts[term] = n
        return counts


def score_symbols(
    ranked_files: Sequence[tuple[str, float]],
    file_defs: Mapping[str, Sequence[Tag]],
    found: NamedEvidence,
    idf: Mapping[str, float],
    read: Callable[[str], bytes | None] | None = None,
    messages: Sequence[str] = (),
    weights: SymbolWeights | None = None,
    features: bool = False,
) -> SymbolScores:
    """Scores of the definitions of the best files of ``ranked_files`` (best first, with their
    scores) for query terms weighted by ``idf``; ``found`` is the explicit evidence per (file,
    name) (:func:`named_evidence` gives it to definitions). ``read`` gives a file's text for
    body terms and for the ``messages`` the task shows (none are read without it).
    ``weights`` defaults to the shipped fit; with ``features``, each definition's
    :class:`DefinitionFeatures` come too."""
    sw = weights or shipped_symbol_weights()
    named = named_evidence(file_defs, found)
    holders: dict[str, set[SymbolKey]] = {}
    top = [(p, s) for p, s in ranked_files[:MAX_FILES] if p in file_defs]
    words: dict[SymbolKey, float] = {}
    fields: dict[SymbolKey, tuple[float, float, float]] = {}
    matched: dict[SymbolKey, dict[str, float]] = {}
    member_of: dict[SymbolKey, SymbolKey] = {}
    is_incidental: dict[SymbolKey, bool] = {}
    rare = sorted((t for t in idf if len(t) >= 3), key=lambda t: (-idf[t], t))[:MAX_BODY_TERMS]
    body_idf = {t: idf[t] for t in rare}
    for rank, (path, _) in enumerate(top):
        defs = file_defs[path]
        functions = frozenset(t.qualified_name for t in defs if str(t.symbol_kind) in _FUNCTIONS)
        classes = {
            t.qualified_name: definition_key(path, t)
            for t in defs
            if str(t.symbol_kind) == SymbolKind.CLASS
        }
        wanted = read is not None and (body_idf or messages) and rank < MAX_BODY_FILES
        raw = file_text(read, path) if wanted and read is not None else None
        text = _FileText(raw, body_idf) if raw is not None and body_idf else None
        if raw is not None and messages:
            _messages_held(path, raw, defs, messages, holders)
        bodies: dict[int, dict[str, int]] = {}
        if text is not None:
            for t in defs:
                if str(t.symbol_kind) in _FUNCTIONS and t.end_line > t.start_line:
                    bodies[id(t)] = text.body(t)
        for t in defs:
            key = definition_key(path, t)
            inc = incidental(t, functions)
            is_incidental[key] = is_incidental.get(key, True) and inc
            owner = classes.get(t.scope)
            if owner is not None and not inc:
                member_of[key] = owner
            if inc or not idf:
                continue
            header = " ".join(s for s in (t.signature, t.docstring) if s)
            doc = {term: n for term, n in _header_terms(header) if term in idf}
            body = bodies.get(id(t), {})
            hits: dict[str, float] = {}
            in_name = in_doc = in_body = 0.0
            name_terms = expand_word(t.name)
            for term in sorted({*(x for x in name_terms if x in idf), *doc, *body}):
                fn = idf[term] * (term in name_terms)
                fd = idf[term] * _saturated(doc.get(term, 0))
                fb = idf[term] * _saturated(body.get(term, 0))
                in_name, in_doc, in_body = in_name + fn, in_doc + fd, in_body + fb
                hits[term] = sw.name * fn + sw.doc * fd + sw.body * fb
            s = sum(hits.values())
            if s > words.get(key, 0.0):
                words[key] = s
                matched[key] = hits
                fields[key] = (in_name, in_doc, in_body)
    shares = _message_shares(holders)
    best_file = max((s for _, s in top), default=0.0)
    file_score = dict(top)
    made: dict[SymbolKey, DefinitionFeatures] = {}
    for key in sorted(set(is_incidental) | set(named) | set(shares)):
        in_name, in_doc, in_body = fields.get(key, (0.0, 0.0, 0.0))
        made[key] = DefinitionFeatures(
            **_named_parts(named.get(key, {})),
            message=shares.get(key, (0.0, ""))[0],
            name=in_name,
            doc=in_doc,
            body=in_body,
            file_relevance=file_score.get(key[0], 0.0) / best_file if best_file > 0 else 0.0,
            incidental=is_incidental.get(key, False),
            member_of=member_of.get(key),
        )
    evidence = combined(made, sw)
    reasons: dict[SymbolKey, list[Reason]] = {}
    for key, ev in evidence.items():
        rs = _named_reasons(named.get(key, {}), sw)
        share, message = shares.get(key, (0.0, ""))
        if sw.message * share > 0:
            rs.append(Reason(MESSAGE, shortened(message), round(sw.message * share, 4)))
        if ev.words is not None:
            terms = ", ".join(t for t, _ in sorted(matched[key].items(), key=lambda x: -x[1])[:6])
            rs.append(Reason(WORDS, terms, ev.words))
        if ev.lent:
            owner = made[key].member_of
            rs.append(Reason(SCOPE, owner[1] if owner else "", ev.lent))
        if rs:
            reasons[key] = rs
    return SymbolScores(
        {k: ev.score for k, ev in evidence.items() if ev.score is not None},
        {
            k: tuple(sorted(rs, key=lambda r: (-r.weight, r.signal, r.detail)))
            for k, rs in reasons.items()
        },
        made if features else None,
    )


def combined(
    features: Mapping[SymbolKey, DefinitionFeatures], w: SymbolWeights
) -> dict[SymbolKey, DefinitionEvidence]:
    """Each definition's task evidence from its features under ``w``: its named evidence as its
    score (a named incidental one's times ``owner_share``), its words evidence normalized to the
    task's best and times ``words`` and its file's relevance, what a named class lends its best
    member (:func:`_lent_to_members`), and a class with members keeping ``owner_share`` of its
    own (:func:`_owners_after_members`). The map's and the fit's one computation of it."""
    raw = {k: f.words_score(w) for k, f in features.items() if not f.incidental}
    best_words = max(raw.values(), default=0.0)
    scores: dict[SymbolKey, float] = {}
    words: dict[SymbolKey, float] = {}
    #: class key -> the keys of its members (definitions scoped directly in it)
    members: dict[SymbolKey, list[SymbolKey]] = {}
    for key, f in features.items():
        n = f.named_score(w)
        ww = w.words * f.file_relevance * raw.get(key, 0.0) / best_words if best_words > 0 else 0.0
        if ww > 0:
            words[key] = round(ww, 4)  # (as its reason shows it, and the map adds it)
        if n > 0:
            # a variable or attribute the task names says where to look (the code that uses
            # it), it is not itself what changes: it counts as the owner of a name does
            scores[key] = n * w.owner_share if f.incidental else n
        elif ww <= 0 and f.incidental:
            scores[key] = INCIDENTAL
        if f.member_of is not None and not f.incidental:
            members.setdefault(f.member_of, []).append(key)
    lent = _lent_to_members(scores, words, members)
    _owners_after_members(scores, words, members, w.owner_share)
    return {
        k: DefinitionEvidence(scores.get(k), words.get(k), lent.get(k, 0.0))
        for k in sorted(set(scores) | set(words) | set(lent))
    }


def _messages_held(
    path: str,
    text: str,
    defs: Sequence[Tag],
    messages: Sequence[str],
    holders: dict[str, set[SymbolKey]],
) -> None:
    """Note, per message, the innermost definition of ``path`` holding each place ``text``
    has it (a message outside every definition is left out: no code to point at). Past
    :data:`MAX_MESSAGE_HOLDERS` places in one file the message says nothing anyway, so no more
    are looked for (a phrase a generated file repeats thousands of times costs a few finds)."""
    for message in messages:
        at, line, counted = text.find(message), 1, 0
        places = 0
        while at >= 0 and places <= MAX_MESSAGE_HOLDERS:
            line += text.count("\n", counted, at)  # (counted on from the last place)
            counted, places = at, places + 1
            inner = innermost(defs, line)
            if inner is not None:
                holders.setdefault(message, set()).add(definition_key(path, inner))
            at = text.find(message, at + len(message))


def shortened(message: str, limit: int = 60) -> str:
    """``message`` as a reason's detail: at most ``limit`` characters."""
    return message if len(message) <= limit else message[: limit - 3] + "..."


def _message_shares(holders: Mapping[str, set[SymbolKey]]) -> dict[SymbolKey, tuple[float, str]]:
    """Each holder's best message (the runs of one message count once) and its share of it:
    1 / the definitions that hold it."""
    best: dict[SymbolKey, tuple[float, str]] = {}
    for message, keys in sorted(holders.items()):
        if len(keys) > MAX_MESSAGE_HOLDERS:
            continue
        share = 1.0 / len(keys)
        for key in keys:
            if share > best.get(key, (0.0, ""))[0]:
                best[key] = (share, message)
    return best


def _lent_to_members(
    scores: Mapping[SymbolKey, float],
    words: Mapping[SymbolKey, float],
    members: Mapping[SymbolKey, Sequence[SymbolKey]],
) -> dict[SymbolKey, float]:
    """What a class the task names lends: its whole evidence, to its member with the most
    evidence of its own (ties: the first by line), so that member leads and the class follows
    it: a task that names a class is most often about one of its methods. A class the words
    only describe lends nothing (the class itself is then as likely what the task is about)."""
    lent: dict[SymbolKey, float] = {}

    def own(k: SymbolKey) -> float:
        return max(scores.get(k, 0.0), 0.0) + words.get(k, 0.0) + lent.get(k, 0.0)

    for owner in sorted(members):
        if scores.get(owner, 0.0) <= 0:  # only a class the task names
            continue
        amount = round(own(owner), 4)
        best = max(members[owner], key=lambda k: (own(k), -k[2]))
        if own(best) > 0:
            lent[best] = lent.get(best, 0.0) + amount
    return lent


def _owners_after_members(
    scores: dict[SymbolKey, float],
    words: dict[SymbolKey, float],
    members: Mapping[SymbolKey, Sequence[SymbolKey]],
    share: float,
) -> None:
    """A class with members keeps ``share`` (the fitted ``owner_share``) of its own evidence
    (named and words), after it has lent the whole of it: what a task says of a class is most
    often said of one of its methods (a fix changes a class's own body, outside its methods, in
    11 of the 718 changed definitions of the choosing tasks), so the class comes after its
    members with evidence of their own, as the class of a ``Class.method`` the task writes
    does."""
    for owner in members:
        if scores.get(owner, 0.0) > 0:
            scores[owner] *= share
        if owner in words:
            words[owner] = round(words[owner] * share, 4)


def file_text(read: Callable[[str], bytes | None], path: str) -> str | None:
    """The file's text, its first :data:`MAX_TEXT_BYTES` (None when it cannot be read)."""
    try:
        data = read(path)
    except OSError:
        return None
    return None if data is None else data[:MAX_TEXT_BYTES].decode("utf-8", "replace")
