"""Words of text and of code as search terms: one tokenizer for the task and for the index.

An identifier gives itself (lower-cased) and its snake_case / camelCase parts, so ``JsonEncoder``,
``json_encoder`` and the words "JSON encoder" meet on ``json`` and ``encoder``. Terms shorter than
two characters, numbers alone and English function words are dropped; a light suffix rule folds
plurals (``aliases`` and ``alias`` are one term) without a stemmer's surprises.
"""

from __future__ import annotations

import re

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
#: The longest identifier considered: longer runs are data (hashes, base64), not names.
MAX_WORD = 64

STOP_WORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
        "get",
        "set",
        "use",
        "used",
        "using",
        "like",
        "want",
        "would",
        "way",
        "thing",
        "things",
        "one",
        "two",
        "also",
        "however",
        "thanks",
        "thank",
        "please",
        "hi",
        "hello",
        "issue",
        "problem",
        "bug",
        "expected",
        "actual",
        "behaviour",
        "behavior",
        "version",
        "versions",
        "self",
        "cls",
        "def",
        "return",
        "none",
        "true",
        "false",
        "import",
        "from",
        "class",
        "pass",
    ]
)


def fold(term: str) -> str:
    """A plural or third-person ``s`` folded away (``aliases`` -> ``alias``, ``classes`` ->
    ``class``), leaving ``ss`` endings and short words alone."""
    if len(term) > 4 and term.endswith("ies"):
        return term[:-3] + "y"
    if len(term) > 4 and term.endswith(("sses", "xes", "ches", "shes", "ses")):
        return term[:-2]
    if len(term) > 3 and term.endswith("s") and not term.endswith(("ss", "us", "is")):
        return term[:-1]
    return term


def split_identifier(word: str) -> list[str]:
    """The lower-case parts of a snake_case or camelCase identifier (``HTTPError`` -> http, error)."""
    return [p.lower() for chunk in word.split("_") for p in _PART.findall(chunk)]


def identifier_terms(word: str) -> list[str]:
    """Search terms of one identifier: the whole (folded) and, when compound, its parts."""
    out: list[str] = []
    whole = word.lower().strip("_")
    parts = split_identifier(word)
    if len(whole) >= 2 and not whole.isdigit() and whole not in STOP_WORDS:
        out.append(fold(whole))
    if len(parts) > 1:
        out.extend(
            fold(p) for p in parts if len(p) >= 2 and not p.isdigit() and p not in STOP_WORDS
        )
    return out


def terms(text: str) -> list[str]:
    """Every search term of ``text``, in order, with repeats (runs longer than
    :data:`MAX_WORD` are data, not names, and give none)."""
    out: list[str] = []
    for word in _IDENT.findall(text):
        if len(word) <= MAX_WORD:
            out.extend(identifier_terms(word))
    return out
