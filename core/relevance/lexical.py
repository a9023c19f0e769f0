"""A BM25F index over what extraction already has: path, definition names, signatures and
docstrings, and the words of the file's text (identifiers, comments, strings).

Each file's terms are computed once per file version (the same key as its cached tags) and kept
as postings: in the tag cache's SQLite database when there is one, so a later process reads only
the postings of the task's terms, and in memory otherwise. A changed file replaces its own rows;
nothing else is rebuilt. Scoring reads the postings of the query's terms only.
"""

from __future__ import annotations

import functools
import logging
import math
import re
import sqlite3
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..cache import CacheKey, TagCache
from ..codedigest import made_by
from ..model import FileSymbols
from .terms import identifier_terms

log = logging.getLogger(__name__)


@functools.cache
def lexical_version() -> str:
    """The digest of the code that makes the postings: they are keyed by it, and the stored
    index of other code is dropped."""
    return made_by("lexical")


#: Field order in postings and lengths.
FIELDS = ("path", "names", "docs", "body")
#: BM25F field weights: a term in the file's path or a definition's name says more about what
#: the file is than the same term in its body. Chosen once from that reasoning, not fitted.
FIELD_WEIGHTS = (3.0, 2.0, 1.0, 1.0)
K1 = 1.2
B = 0.75
#: Only this many bytes of a file's text are indexed (generated files can be huge).
MAX_BODY_BYTES = 400_000

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{1,63}")

Postings = dict[str, tuple[int, int, int, int]]


@functools.lru_cache(maxsize=200_000)
def expand_word(word: str) -> tuple[str, ...]:
    """:func:`identifier_terms`, memoised: a file repeats its words, a repository its names."""
    return tuple(identifier_terms(word))


def text_terms(text: str) -> set[str]:
    """The search terms ``text`` is indexed by (as a file's body is)."""
    return {t for w in _WORD.findall(text) for t in expand_word(w)}


def _count(words: Iterable[str]) -> Counter[str]:
    out: Counter[str] = Counter()
    for word, n in Counter(words).items():
        for t in expand_word(word):
            out[t] += n
    return out


@dataclass(frozen=True, slots=True)
class FileTerms:
    """The term frequencies of one file, per field."""

    path: str
    #: term -> (tf in path, names, docs, body)
    postings: Postings
    lengths: tuple[int, int, int, int]


def file_terms(path: str, symbols: FileSymbols, data: bytes) -> FileTerms:
    fields: list[Counter[str]] = [
        _count(_WORD.findall(path)),
        _count(t.name for t in symbols.definitions),
        _count(
            w
            for t in symbols.definitions
            for s in (t.signature, t.docstring)
            if s
            for w in _WORD.findall(s)
        ),
        _count(_WORD.findall(data[:MAX_BODY_BYTES].decode("utf-8", "replace"))),
    ]
    postings: dict[str, list[int]] = {}
    for i, counter in enumerate(fields):
        for term, n in counter.items():
            postings.setdefault(term, [0, 0, 0, 0])[i] = n
    path_n, names_n, docs_n, body_n = (sum(c.values()) for c in fields)
    return FileTerms(
        path,
        {t: (v[0], v[1], v[2], v[3]) for t, v in postings.items()},
        (path_n, names_n, docs_n, body_n),
    )


def _summary(symbols: Mapping[str, FileSymbols], path: str) -> FileSymbols:
    """``path``'s summary for its terms, not kept by a view that makes summaries when read (an
    index of a large tree reads every file's once)."""
    transient = getattr(symbols, "transient", None)  # (a SummaryView's)
    if transient is not None and path in symbols:
        return transient(path)  # type: ignore[no-any-return]
    return symbols.get(path) or FileSymbols(path)


#: files whose postings are stored at a time: a large tree indexed at once held every file's
#: postings and their sorted rows together (the kernel's 22 million, gigabytes)
STORED_BATCH = 1000


def _key_text(key: CacheKey) -> str:
    content = key.digest or f"{key.mtime_ns}|{key.size}"
    return f"{lexical_version()}|{content}|{key.fingerprint}"


class _MemoryStore:
    """Postings in memory: term -> {path: tfs}."""

    def __init__(self) -> None:
        self.docs: dict[str, tuple[str, tuple[int, ...]]] = {}
        self.postings: dict[str, dict[str, tuple[int, int, int, int]]] = defaultdict(dict)
        self.terms_of: dict[str, tuple[str, ...]] = {}

    def known(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        return self.docs

    def replace(self, items: list[tuple[str, str, FileTerms]]) -> None:
        for path, key, ft in items:
            for term in self.terms_of.get(path, ()):
                self.postings[term].pop(path, None)
            for term, tfs in ft.postings.items():
                self.postings[term][path] = tfs
            self.terms_of[path] = tuple(ft.postings)
            self.docs[path] = (key, ft.lengths)

    def lookup(self, terms: Iterable[str]) -> dict[str, dict[str, tuple[int, int, int, int]]]:
        return {t: self.postings.get(t, {}) for t in terms}


class _SqliteStore:
    """Postings in the tag cache's database (tables ``lexdocs`` and ``postings``)."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        row = conn.execute("SELECT value FROM meta WHERE key='lexical'").fetchone()
        if row is None or row[0] != lexical_version():
            conn.execute("DROP TABLE IF EXISTS lexdocs")
            conn.execute("DROP TABLE IF EXISTS postings")
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('lexical', ?)", (lexical_version(),))
        conn.execute(
            "CREATE TABLE IF NOT EXISTS lexdocs (path TEXT PRIMARY KEY, key TEXT, lp INTEGER,"
            " ln INTEGER, ld INTEGER, lb INTEGER, terms TEXT)"
        )
        conn.execute(
            "CREATE TABLE IF NOT EXISTS postings (term TEXT, path TEXT, tp INTEGER, tn INTEGER,"
            " td INTEGER, tb INTEGER, PRIMARY KEY (term, path)) WITHOUT ROWID"
        )

    def known(self) -> dict[str, tuple[str, tuple[int, ...]]]:
        return {
            p: (k, tuple(ln))
            for p, k, *ln in self.conn.execute("SELECT path, key, lp, ln, ld, lb FROM lexdocs")
        }

    def replace(self, items: list[tuple[str, str, FileTerms]]) -> None:
        """Replace the postings of ``items``' files: the old rows are found through the term list
        kept with each file (no second index to maintain), the new ones inserted in key order."""
        if not items:
            return
        paths = [path for path, _, _ in items]
        self.conn.execute("BEGIN")
        try:
            old: list[tuple[str, str]] = []
            for i in range(0, len(paths), 500):
                chunk = paths[i : i + 500]
                marks = ",".join("?" * len(chunk))
                for path, terms in self.conn.execute(
                    f"SELECT path, terms FROM lexdocs WHERE path IN ({marks})", chunk
                ):
                    old.extend((t, path) for t in (terms or "").split())
            self.conn.executemany("DELETE FROM postings WHERE term=? AND path=?", old)
            rows = sorted(
                (t, path, *tfs) for path, _, ft in items for t, tfs in ft.postings.items()
            )
            self.conn.executemany("INSERT INTO postings VALUES (?,?,?,?,?,?)", rows)
            self.conn.executemany(
                "INSERT OR REPLACE INTO lexdocs VALUES (?,?,?,?,?,?,?)",
                [(path, key, *ft.lengths, " ".join(ft.postings)) for path, key, ft in items],
            )
        except BaseException:
            self.conn.execute("ROLLBACK")
            raise
        self.conn.execute("COMMIT")

    def lookup(self, terms: Iterable[str]) -> dict[str, dict[str, tuple[int, int, int, int]]]:
        out: dict[str, dict[str, tuple[int, int, int, int]]] = {t: {} for t in terms}
        wanted = sorted(out)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for term, path, *tfs in self.conn.execute(
                f"SELECT term, path, tp, tn, td, tb FROM postings WHERE term IN ({marks})", chunk
            ):
                out[term][path] = tuple(tfs)
        return out


class LexicalIndex:
    """BM25F over the mapped files. :meth:`update` brings it to a set of file versions (only the
    changed files are read and re-indexed); :meth:`score` ranks files for query terms."""

    def __init__(self, cache: TagCache | None = None):
        self.store: _MemoryStore | _SqliteStore = _MemoryStore()
        conn = getattr(cache, "conn", None)
        if conn is not None and not getattr(cache, "_fallen_back", True):
            try:
                self.store = _SqliteStore(conn)
            except sqlite3.Error as exc:
                log.warning("lexical index: cache database unusable (%s); indexing in memory", exc)
        self.lengths: dict[str, tuple[int, ...]] = {}
        self._sizes: tuple[dict[str, tuple[int, ...]], dict[str, float]] | None = None
        self.indexed = 0
        #: how the last :meth:`update` read a file (for the symbols' body terms)
        self.read: Callable[[str], bytes | None] | None = None

    def update(
        self,
        keys: Mapping[str, CacheKey],
        symbols: Mapping[str, FileSymbols],
        read: Callable[[str], bytes | None],
    ) -> None:
        """Index every file of ``keys`` whose version is not indexed yet."""
        try:
            known = self.store.known()
        except sqlite3.Error as exc:
            self._to_memory(exc)
            known = {}
        fresh: list[tuple[str, str, FileTerms]] = []
        lengths: dict[str, tuple[int, ...]] = {}
        indexed = 0
        for path in sorted(keys):
            k = _key_text(keys[path])
            have = known.get(path)
            if have is not None and have[0] == k:
                lengths[path] = have[1]
                continue
            data = read(path)
            if data is None:
                continue
            ft = file_terms(path, _summary(symbols, path), data)
            fresh.append((path, k, ft))
            lengths[path] = ft.lengths
            if len(fresh) >= STORED_BATCH:
                indexed += self._stored(fresh)
                fresh = []
        indexed += self._stored(fresh)
        self.indexed = indexed
        self.lengths = lengths
        self.read = read

    def _stored(self, fresh: list[tuple[str, str, FileTerms]]) -> int:
        """Store a batch of files' postings (in memory when the database fails)."""
        try:
            self.store.replace(fresh)
        except sqlite3.Error as exc:
            self._to_memory(exc)
            self.store.replace(fresh)
        return len(fresh)

    def _to_memory(self, exc: Exception) -> None:
        log.warning("lexical index: cache database failed (%s); indexing in memory", exc)
        self.store = _MemoryStore()

    def files_with_all(self, terms: Iterable[str]) -> set[str]:
        """The indexed files whose text (body) has every one of ``terms`` (none for no terms,
        or when the index cannot be read: logged)."""
        wanted = sorted(set(terms))
        try:
            postings = self.store.lookup(wanted)
        except sqlite3.Error as exc:
            log.warning("lexical index lookup failed: %s", exc)
            return set()
        having: set[str] | None = None
        for term in sorted(wanted, key=lambda t: (len(postings[t]), t)):  # rarest first
            in_body = {p for p, tfs in postings[term].items() if tfs[3] and p in self.lengths}
            having = in_body if having is None else having & in_body
            if not having:
                break
        return having or set()

    def score(
        self, query_terms: Mapping[str, int], idf_out: dict[str, float] | None = None
    ) -> tuple[dict[str, float], dict[str, list[tuple[str, float]]]]:
        """BM25F score of every file with a query term, and per file its best-matching terms
        (term, contribution), strongest first. ``idf_out`` receives each found term's IDF."""
        found = self.match(query_terms)
        if idf_out is not None:
            idf_out.update(found.idf)
        return found.scores, found.contrib

    def match(
        self, query_terms: Mapping[str, int], parts: Mapping[str, Mapping[str, int]] | None = None
    ) -> LexicalMatch:
        """The query's BM25F scores with their terms and IDFs, each field's own BM25, and the
        BM25F of each named sub-query of ``parts`` (terms of the query, such as its title), from
        one read of the postings."""
        files = self.lengths
        n = len(files)
        parts = parts or {}
        found = LexicalMatch({}, {}, {f: {} for f in FIELDS}, {k: {} for k in parts}, {})
        if not n or not query_terms:
            return found
        avg = [max(1e-9, sum(ln[i] for ln in files.values()) / n) for i in range(len(FIELDS))]
        try:
            postings = self.store.lookup(query_terms)
        except sqlite3.Error as exc:
            log.warning("lexical index lookup failed: %s", exc)
            return found
        scores: dict[str, float] = defaultdict(float)
        contrib: dict[str, list[tuple[str, float]]] = defaultdict(list)
        fields: list[defaultdict[str, float]] = [defaultdict(float) for _ in FIELDS]
        part_scores: dict[str, defaultdict[str, float]] = {k: defaultdict(float) for k in parts}
        for term in sorted(query_terms):
            hits = {p: tfs for p, tfs in postings.get(term, {}).items() if p in files}
            df = len(hits)
            if not df:
                continue
            idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
            found.idf[term] = idf
            qtf = query_terms[term]
            in_parts = [(k, q[term]) for k, q in parts.items() if q.get(term)]
            for path, tfs in hits.items():
                ln = files[path]
                tf = sum(
                    w * t / (1.0 - B + B * ln[i] / avg[i])
                    for i, (w, t) in enumerate(zip(FIELD_WEIGHTS, tfs, strict=True))
                    if t
                )
                s = qtf * idf * tf / (K1 + tf)
                scores[path] += s
                contrib[path].append((term, s))
                for i, t in enumerate(tfs):
                    if t:
                        ft = t / (1.0 - B + B * ln[i] / avg[i])
                        fields[i][path] += qtf * idf * ft / (K1 + ft)
                for k, part_tf in in_parts:
                    part_scores[k][path] += part_tf * idf * tf / (K1 + tf)
        for path in contrib:
            contrib[path].sort(key=lambda x: (-x[1], x[0]))
        found.scores.update(scores)
        found.contrib.update(contrib)
        for name, by_path in zip(FIELDS, fields, strict=True):
            found.fields[name].update(by_path)
        for k, by_path in part_scores.items():
            found.parts[k].update(by_path)
        return found

    def size_percentiles(self) -> dict[str, float]:
        """Each indexed file's percentile of length (all fields' terms): 0 the shortest, 1 the
        longest (ties by path), computed once per set of file versions."""
        if self._sizes is None or self._sizes[0] is not self.lengths:
            order = sorted(self.lengths, key=lambda p: (sum(self.lengths[p]), p))
            n = len(order)
            pct = (
                {p: i / (n - 1) for i, p in enumerate(order)}
                if n > 1
                else dict.fromkeys(order, 0.0)
            )
            self._sizes = (self.lengths, pct)
        return self._sizes[1]


@dataclass(frozen=True)
class LexicalMatch:
    """What :meth:`LexicalIndex.match` finds: path -> score maps of the files with a query term."""

    #: BM25F of the whole query
    scores: dict[str, float]
    #: per file, (term, its share of the BM25F score), strongest first
    contrib: dict[str, list[tuple[str, float]]]
    #: field name (:data:`FIELDS`) -> path -> BM25 of that field alone
    fields: dict[str, dict[str, float]]
    #: sub-query name -> path -> its BM25F
    parts: dict[str, dict[str, float]]
    #: term -> IDF, for the terms some file has
    idf: dict[str, float]
