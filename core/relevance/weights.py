"""The fitted combination of the relevance signals: the weights file and its loader.

The task ranking scores a file by a weighted sum of its features (:data:`FEATURES`, each computed
by :mod:`.model`), multiplied by ``role_factor`` for a test, example, doc or vendored file when
the task is not about those. The weights are not chosen by hand: ``benchmarks/fit_ranking.py``
fits them on the choosing repositories of the localization sets and writes ``weights.json``
beside this module, with the data and split they were fitted on. The file is read once per
process and validated; a broken file is an error that says what is wrong, never a silent
fallback. It is part of the package's code for the persisted keys (``codedigest`` walks every
file of the package), so a new fit changes the keys of memoised task maps.

**Language groups.** The file holds a default set (``weights``, ``role_factor``) and may hold
per-group sets (``groups``: name -> its ``families``, ``weights`` and ``role_factor``). A file's
*family* is a closed set of names chosen by its extension (:data:`FAMILY_EXTENSIONS`:
``python``, ``c_cpp``, ``jvm``, ...); the group whose ``families`` list it is scored with that
group's set, every other file (an unknown extension, a family no group lists) with the
default. The fit decides which groups get their own set (see ``benchmarks/fit_ranking.py``);
a group it cannot support is simply absent, so its files fall back to the default.
"""

from __future__ import annotations

import functools
import json
import math
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

WEIGHTS_FILE = Path(__file__).with_name("weights.json")

#: The features of a file for a task, in the order of the weights file:
#:
#: * ``explicit``: the explicit references' capped sum (:meth:`.explicit.Findings.file_score`);
#: * ``ex_path``, ``ex_name``, ``ex_stem``: its strongest path or traceback frame, named
#:   definition (module, qualified, quoted, error or plain identifier) and file-stem match;
#: * ``stem_specific``: the task's words that are this file's stem, each weighted by how
#:   specific the word is in this repository (its IDF over the files' contents, relative to
#:   the rarest term of the task), spread over the files sharing the stem, and worth a third
#:   when it stands only in pasted code, a heading or a prompt line;
#: * ``lex_plain``, ``lex_hub``: BM25F (normalized to the best file) times ``1 - hub`` and
#:   ``hub``, where ``hub`` is the file's percentile of task-free PageRank (1: the most central);
#: * ``graph_plain``, ``graph_hub``: what arrives over the graph's edges from the seeds, the
#:   same way split, so a file central to everything earns its place from the task's evidence;
#: * ``tests``: the score a matching test file lends to the module it tests;
#: * ``named``: 1 for a file the task names by path, module or traceback frame (one file only);
#: * ``lex_rr``: 1 / the file's rank by BM25F (a rank says the same in every repository, where
#:   a score normalized to the best file depends on how many files match);
#: * ``lex_path``, ``lex_names``, ``lex_docs``, ``lex_body``: BM25 of each of the lexical
#:   index's fields alone (its path, its definitions' names, their signatures and docstrings,
#:   its text), normalized to the best file, so the fit weighs the fields;
#: * ``lex_title``, ``lex_prose``: BM25F of the terms of the task's first line (an issue's
#:   title) and of its prose lines (not pasted code, headings or prompts), normalized likewise;
#: * ``size``: the file's percentile of length among the mapped files, for a file with a
#:   lexical match (a long file holds more of what can go wrong), and ``lex_size``: BM25F
#:   times that percentile;
#: * ``lex_ident``: BM25F of the terms that stand for whole code names the task writes
#:   (compound identifiers, names in backticks), normalized likewise;
#: * ``lex_cover``: the share of the task's terms, by IDF, that the file has;
#: * ``lex_dir``: the best BM25F (normalized) of another file of the file's folder;
#: * ``ref_name``: the file uses code names the task writes that other files define (each name
#:   spread over its users, capped at 1): the callers of what the reporter names;
#: * ``graph_named``: what arrives over the graph's edges from the files the task names
#:   explicitly (not from its words), normalized to the best file;
#: * ``stem_title``: ``stem_specific`` for the words of the task's first line only;
#: * ``message``: the file's code holds a message the task shows (an error pasted, a string
#:   quoted in prose), 1 / the code files holding it (:mod:`.messages`).
FEATURES = (
    "explicit",
    "ex_path",
    "ex_name",
    "ex_stem",
    "stem_specific",
    "lex_plain",
    "lex_hub",
    "graph_plain",
    "graph_hub",
    "tests",
    "named",
    "lex_rr",
    "lex_path",
    "lex_names",
    "lex_docs",
    "lex_body",
    "lex_title",
    "lex_prose",
    "size",
    "lex_size",
    "lex_ident",
    "lex_cover",
    "lex_dir",
    "ref_name",
    "graph_named",
    "stem_title",
    "message",
)
#: The features that are graph evidence: what a declaration file gets from everything near it
#: (see :mod:`.pairs`), from the task's matches and from the files it names.
GRAPH_FEATURES = frozenset({"graph_plain", "graph_hub", "graph_named"})


#: A file's language family by its extension (lower-case). Closed: the weights file may name
#: only these, so a typo is an error rather than a group no file belongs to.
FAMILY_EXTENSIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "python": (".py", ".pyi", ".pyx", ".pxd"),
        "c_cpp": (
            ".c", ".h", ".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++",
            ".inl", ".ipp", ".tcc", ".tpp", ".m", ".mm", ".cu", ".cuh",
        ),
        "jvm": (".java", ".kt", ".kts", ".scala", ".groovy", ".clj"),
        "js_ts": (".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx", ".vue", ".svelte"),
        "go": (".go",),
        "rust": (".rs",),
        "php": (".php",),
        "ruby": (".rb",),
        "csharp": (".cs",),
        "swift": (".swift",),
    }
)  # fmt: skip
_FAMILY_BY_EXTENSION = {e: f for f, exts in FAMILY_EXTENSIONS.items() for e in exts}


def family_of(path: str) -> str | None:
    """The language family of ``path`` by its extension, or None (docs, data, unknown)."""
    return _FAMILY_BY_EXTENSION.get(posixpath.splitext(path)[1].lower())


class WeightsError(ValueError):
    """The weights file is missing, unreadable or not a valid fit."""


@dataclass(frozen=True)
class RankingWeights:
    """One weight per feature (non-negative) and the factor of a demoted role."""

    weights: Mapping[str, float]
    role_factor: float

    def score(self, values: Mapping[str, float]) -> float:
        """The weighted sum of ``values`` (feature -> value; absent features are 0), summed in
        :data:`FEATURES` order so the result is the same float on every run."""
        total = 0.0
        for name in FEATURES:
            v = values.get(name, 0.0)
            if v:
                total += self.weights[name] * v
        return total


@dataclass(frozen=True)
class LanguageWeights:
    """The default set and the per-group sets, with the family -> group map."""

    default: RankingWeights
    groups: Mapping[str, RankingWeights] = field(default_factory=lambda: MappingProxyType({}))
    #: family -> the group that lists it
    members: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))

    def for_path(self, path: str) -> RankingWeights:
        """The set that scores ``path``: its family's group's, else the default."""
        if not self.members:  # one set for every file (the shipped fit)
            return self.default
        group = self.members.get(family_of(path) or "")
        return self.groups[group] if group is not None else self.default

    def group_of(self, path: str) -> str | None:
        """The group that scores ``path``, or None for the default set."""
        return self.members.get(family_of(path) or "")


def parse_weights(raw: object, source: str) -> LanguageWeights:
    """Validate a loaded weights document; :class:`WeightsError` says what is wrong."""
    if not isinstance(raw, dict):
        raise WeightsError(f"{source}: not a JSON object")
    default = _parse_set(raw, source)
    groups_raw = raw.get("groups", {})
    if not isinstance(groups_raw, dict):
        raise WeightsError(f"{source}: 'groups' must be an object of group name -> weight set")
    groups: dict[str, RankingWeights] = {}
    members: dict[str, str] = {}
    for name in sorted(groups_raw):
        where = f"{source}: group {name!r}"
        g = groups_raw[name]
        if not isinstance(g, dict):
            raise WeightsError(f"{where}: not a JSON object")
        fams = g.get("families")
        if not isinstance(fams, list) or not fams or not all(isinstance(f, str) for f in fams):
            raise WeightsError(f"{where}: 'families' must be a non-empty list of names")
        for f in fams:
            if f not in FAMILY_EXTENSIONS:
                raise WeightsError(
                    f"{where}: unknown family {f!r} (known: {sorted(FAMILY_EXTENSIONS)})"
                )
            if f in members:
                raise WeightsError(f"{where}: family {f!r} is also in group {members[f]!r}")
            members[f] = name
        groups[name] = _parse_set(g, where)
    return LanguageWeights(default, MappingProxyType(groups), MappingProxyType(members))


def named_weights(
    raw: Mapping[str, object],
    names: Sequence[str],
    source: str,
    what: str,
    error: type[ValueError],
) -> dict[str, float]:
    """The ``weights`` object of a weights document: exactly ``names``, each a finite number
    >= 0; ``error`` (with ``source`` and ``what`` the names are) says what is wrong."""
    w = raw.get("weights")
    if not isinstance(w, dict):
        raise error(f"{source}: no 'weights' object")
    missing = [n for n in names if n not in w]
    extra = sorted(set(w) - set(names))
    if missing or extra:
        raise error(
            f"{source}: weights must name exactly {what}{list(names)}"
            + (f"; missing {missing}" if missing else "")
            + (f"; unknown {extra}" if extra else "")
        )
    out: dict[str, float] = {}
    for name in names:
        v = w[name]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise error(f"{source}: weight {name!r} must be a finite number >= 0, not {v!r}")
        out[name] = float(v)
    return out


def _parse_set(raw: dict[str, object], source: str) -> RankingWeights:
    """One weight set (``weights`` and ``role_factor``) of a weights document."""
    out = named_weights(raw, FEATURES, source, "the features ", WeightsError)
    if not any(out.values()):
        raise WeightsError(f"{source}: every weight is 0")
    rf = raw.get("role_factor")
    if isinstance(rf, bool) or not isinstance(rf, int | float) or not 0 < rf <= 1:
        raise WeightsError(f"{source}: 'role_factor' must be a number in (0, 1], not {rf!r}")
    return RankingWeights(MappingProxyType(out), float(rf))


def read_document(path: Path, what: str, error: type[ValueError]) -> object:
    """The JSON document of a weights file; ``error`` says why it cannot be read (``what``:
    which weights)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise error(f"{path}: cannot read the {what}: {exc}") from exc
    except ValueError as exc:
        raise error(f"{path}: not valid JSON: {exc}") from exc


def load_weights_file(path: Path) -> LanguageWeights:
    return parse_weights(read_document(path, "ranking weights", WeightsError), str(path))


@functools.cache
def shipped_weights() -> LanguageWeights:
    """The package's fitted weights, read and validated once per process."""
    return load_weights_file(WEIGHTS_FILE)
