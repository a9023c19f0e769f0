"""Explicit references of a task to the repository: paths, traceback frames, module names,
qualified names, quoted names and error classes, and identifiers matched against definitions.

Every match is weighted by how specific it is: a name that one file defines points at that file;
a word that is the stem of 300 files (``models``, ``tests``, ``__init__``) points at none of
them, and its weight is spread over all (1/n each), so it cannot lift hundreds of files at once.
Nothing here knows a language: module names are matched as path suffixes.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ..graph import is_well_named
from ..model import Tag
from .query import TaskQuery
from .symbols import innermost

#: Strength of each kind of explicit reference (before the 1/n spread over candidates).
PATH_WEIGHT = 1.0
TRACEBACK_WEIGHT = 0.8
MODULE_WEIGHT = 0.8
BASENAME_WEIGHT = 0.8
STEM_WEIGHT = 0.6
QUALIFIED_WEIGHT = 0.8
IDENT_WEIGHT = 0.5
#: A plain lower-case word that happens to be a defined name (``run``, ``value``) is weaker
#: evidence than a compound or CamelCase name, a quoted one, or an error class.
PLAIN_WORD_FACTOR = 0.4
#: A file's explicit score is capped: many weak matches must not outweigh one strong one by far.
MAX_EXPLICIT = 2.0
INDEX_NAMES = ("__init__", "index", "mod", "main")


@dataclass
class Findings:
    """Per file and per (file, symbol): the signals and their weights."""

    files: dict[str, list[tuple[str, str, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    symbols: dict[tuple[str, str], list[tuple[str, str, float]]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: files the task names by path, module or traceback frame
    named: set[str] = field(default_factory=set)

    def add_file(self, path: str, signal: str, detail: str, weight: float) -> None:
        self.files[path].append((signal, detail, weight))

    def add_symbol(self, path: str, name: str, signal: str, detail: str, weight: float) -> None:
        self.symbols[(path, name)].append((signal, detail, weight))

    def file_score(self, path: str) -> float:
        """Each kind of evidence counts once, by its strongest instance (three frames of one
        traceback in a file are one piece of evidence, not three); the kinds add up, capped."""
        best: dict[str, float] = {}
        for signal, _, w in self.files.get(path, ()):
            best[signal] = max(w, best.get(signal, 0.0))
        return min(MAX_EXPLICIT, sum(best.values()))


class PathIndex:
    """Lookups from the ways a task writes a file to the repository's files."""

    def __init__(self, files: Iterable[str]):
        self.files = sorted(set(files))
        self.by_base: dict[str, list[str]] = defaultdict(list)
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        self.by_module: dict[str, list[str]] = defaultdict(list)
        for f in self.files:
            base = posixpath.basename(f)
            self.by_base[base].append(f)
            stem = base.rsplit(".", 1)[0] if "." in base[1:] else base
            self.by_stem[stem.lower()].append(f)
            noext = f.rsplit(".", 1)[0] if "." in base[1:] else f
            parts = noext.split("/")
            if parts[-1] in INDEX_NAMES and len(parts) > 1:
                parts = parts[:-1]
            for i in range(len(parts)):
                self.by_module["/".join(parts[i:])].append(f)

    def path_matches(self, text: str) -> list[tuple[str, int]]:
        """Files a written path may be, with how many trailing components match (most first)."""
        parts = [p for p in text.split("/") if p and p != "."]
        if not parts:
            return []
        out = []
        for f in self.by_base.get(parts[-1], ()):
            fparts = f.split("/")
            k = 0
            while k < min(len(parts), len(fparts)) and parts[-1 - k] == fparts[-1 - k]:
                k += 1
            out.append((f, k))
        out.sort(key=lambda x: (-x[1], x[0]))
        return out

    def module_matches(self, dotted: Sequence[str]) -> tuple[list[str], int]:
        """Files a dotted name's longest module prefix names, and how many parts it used."""
        for cut in range(len(dotted), 0, -1):
            found = self.by_module.get("/".join(dotted[:cut]))
            if found:
                return sorted(found), cut
        return [], 0


def distinctive(word: str) -> bool:
    """A word that reads as a name rather than English: compound (snake or camel case, 8+
    characters), mixed case, or letters with digits (``L031``, ``utf8``)."""
    return (
        is_well_named(word)
        or (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word))
        or (any(c.isdigit() for c in word) and any(c.isalpha() for c in word))
    )


def find_explicit(
    query: TaskQuery,
    paths: PathIndex,
    defines: Mapping[str, Collection[str]],
    file_defs: Mapping[str, Sequence[Tag]],
) -> Findings:
    ev = Findings()
    _paths(query, paths, file_defs, ev)
    _modules(query, paths, defines, ev)
    _identifiers(query, paths, defines, ev)
    return ev


def _paths(
    query: TaskQuery, paths: PathIndex, file_defs: Mapping[str, Sequence[Tag]], ev: Findings
) -> None:
    for ref in query.paths:
        matches = paths.path_matches(ref.text)
        if not matches:
            continue
        top = matches[0][1]
        n_parts = len([p for p in ref.text.split("/") if p])
        if top >= 2 or (top == 1 and n_parts == 1):
            chosen = [f for f, k in matches if k == top]
        else:  # only the base name agrees (``/site-packages/x/util.py`` against ``lib/util.py``)
            chosen = [f for f, k in matches if k >= 1]
        if not chosen:
            continue
        short = n_parts == 1 and len(posixpath.basename(ref.text)) < 5  # "a.py" names little
        if ref.kind == "traceback":  # the frame that raised says most; the callers above it less
            base = TRACEBACK_WEIGHT if ref.innermost else TRACEBACK_WEIGHT / 2
        else:
            base = PATH_WEIGHT if top >= 2 else BASENAME_WEIGHT
        if short:
            base *= 0.5
        weight = base / len(chosen)
        for f in chosen:
            where = f"{ref.text}:{ref.line}" if ref.line else ref.text
            ev.add_file(f, ref.kind, where, weight)
            if len(chosen) == 1 and not short and (top >= 2 or n_parts == 1):
                ev.named.add(f)
            if ref.line:
                t = innermost(file_defs.get(f, ()), ref.line)
                if t is not None:
                    ev.add_symbol(f, t.name, ref.kind, f"line {ref.line}", weight)


def _modules(
    query: TaskQuery, paths: PathIndex, defines: Mapping[str, Collection[str]], ev: Findings
) -> None:
    for dotted in query.dotted:
        parts = dotted.split(".")
        files, cut = paths.module_matches(parts)
        if files and cut >= 2:
            w = MODULE_WEIGHT / len(files)
            for f in files:
                ev.add_file(f, "module", dotted, w)
                if len(files) == 1:
                    ev.named.add(f)
                for name in parts[cut:][:1]:
                    if f in defines.get(name, ()):
                        ev.add_symbol(f, name, "module", dotted, w)
            continue
        # Class.method / obj.attr: the last part defined where the one before it is defined too
        if len(parts) >= 2:
            owner, name = parts[-2], parts[-1]
            both = sorted(set(defines.get(owner, ())) & set(defines.get(name, ())))
            if both:
                w = QUALIFIED_WEIGHT / len(both)
                for f in both:
                    ev.add_file(f, "qualified_name", dotted, w)
                    ev.add_symbol(f, name, "qualified_name", dotted, w)
                    ev.add_symbol(f, owner, "qualified_name", dotted, w)


def _identifiers(
    query: TaskQuery, paths: PathIndex, defines: Mapping[str, Collection[str]], ev: Findings
) -> None:
    for word in sorted(query.words):
        definers = defines.get(word)
        strong = word in query.quoted or word in query.errors or distinctive(word)
        factor = 1.0 if strong else PLAIN_WORD_FACTOR
        if definers:
            w = IDENT_WEIGHT * factor / len(definers)
            signal = (
                "error_class"
                if word in query.errors
                else ("quoted_name" if word in query.quoted else "identifier")
            )
            for f in sorted(definers):
                ev.add_file(f, signal, word, w)
                ev.add_symbol(f, word, signal, word, IDENT_WEIGHT * factor)
        stems = paths.by_stem.get(word.lower())
        if stems:
            w = STEM_WEIGHT * (1.0 if strong or len(word) >= 5 else 0.5) / len(stems)
            for f in stems:
                ev.add_file(f, "file_stem", word, w)
