"""Declaration/implementation pairs: a header and the file that implements it are one unit.

A declaration file (a C or C++ header, a TypeScript ``.d.ts``, a Python ``.pyi`` stub, an OCaml
``.mli`` interface, an Ada ``.ads`` specification) names what its implementation defines, so the
task's evidence for it is evidence for the implementation, which is where a change usually lands.
And a declaration file that everything includes is near everything in the reference graph: the
graph signal ("near the files the task points at") lifts it whatever the task, which is not
evidence that it is the file to change.

:func:`unite_pairs` applies both after the relevance model has scored every file:

* the graph part of a declaration file's score counts :data:`HUB_GRAPH_SHARE` of its weight
  (its own evidence, explicit, lexical and tests, counts whole);
* an implementation scores at least its declaration file's own evidence (reason ``pair``);
* a declaration file with an implementation ranks right after it, never above it.

Pairs (:func:`declaration_pairs`) are found from paths alone: the same stem with an
implementation's extension (for a header, also its inline-definitions header: ``x-inl.h``,
``x.inl``, ``x.ipp``, ``x.tcc``) in the same folder, or in a sibling folder where a project keeps
its sources apart from its public headers (``include/foo.h`` and ``src/foo.c``,
``include/lib/foo.hpp`` and ``src/lib/foo.cpp``, ``types/foo.d.ts`` and ``src/foo.js``).
"""

from __future__ import annotations

import functools
import posixpath
from collections import defaultdict
from collections.abc import Iterable, Mapping

from ..model import Reason

#: How much of a declaration file's graph evidence counts.
HUB_GRAPH_SHARE = 0.5
#: A declaration file ranked after its implementation scores this much less, relatively (small
#: enough to change no other order, large enough to survive the model's 12-digit rounding).
_AFTER = 1e-9

_HEADERS = (".h", ".hh", ".hpp", ".hxx", ".h++")
#: headers that hold a header's inline and template definitions (``document-inl.h`` implements
#: ``document.h``): implementations, not declarations
_INLINE_IMPLEMENTATIONS = (
    "-inl.h",
    "_inl.h",
    "-inl.hpp",
    "_inl.hpp",
    ".inl",
    ".ipp",
    ".tcc",
    ".tpp",
)
_C_IMPLEMENTATIONS = (
    ".c",
    ".cc",
    ".cpp",
    ".cxx",
    ".c++",
    ".m",
    ".mm",
    ".cu",
    *_INLINE_IMPLEMENTATIONS,
)
_TYPE_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
_ECMA_IMPLEMENTATIONS = (".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx", ".mts", ".cts")
#: declaration suffix -> the suffixes of the files that implement it
_IMPLEMENTED_BY: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(_HEADERS, _C_IMPLEMENTATIONS),
    **dict.fromkeys(_TYPE_DECLARATIONS, _ECMA_IMPLEMENTATIONS),
    ".pyi": (".py",),
    ".mli": (".ml",),  # OCaml interfaces
    ".ads": (".adb",),  # Ada specifications
}
#: Folders that hold declarations apart from the sources, and where the sources are then kept.
_DECLARATION_DIRS = frozenset(
    {"include", "inc", "includes", "headers", "public", "types", "typings"}
)
_SOURCE_DIRS = ("src", "source", "sources", "lib", "private", "impl")


def declaration_suffix(path: str) -> str | None:
    """The declaration suffix of ``path`` (``.h``, ``.d.ts``, ...), or None for any other file."""
    name = posixpath.basename(path).lower()
    if name.endswith(_INLINE_IMPLEMENTATIONS):
        return None
    for suffix in (*_TYPE_DECLARATIONS, *_HEADERS, ".pyi", ".mli", ".ads"):
        if name.endswith(suffix) and len(name) > len(suffix):
            return suffix
    return None


def _split(path: str) -> tuple[str, str, str] | None:
    """(folder, stem, suffix) of an implementation file, or None."""
    folder, name = posixpath.split(path)
    lower = name.lower()
    if declaration_suffix(path) is not None:
        return None
    for suffix in (
        *_INLINE_IMPLEMENTATIONS,
        *_C_IMPLEMENTATIONS,
        *_ECMA_IMPLEMENTATIONS,
        ".py",
        ".ml",
        ".adb",
    ):
        if lower.endswith(suffix) and len(lower) > len(suffix):
            return folder, name[: -len(suffix)], suffix
    return None


def _sibling_folders(folder: str) -> list[str]:
    """Where the sources of the declarations in ``folder`` would be, nearest first."""
    parts = folder.split("/") if folder else []
    found: list[str] = []
    for i in range(len(parts) - 1, -1, -1):
        if parts[i].lower() not in _DECLARATION_DIRS:
            continue
        for source in _SOURCE_DIRS:
            found.append("/".join([*parts[:i], source, *parts[i + 1 :]]))
            found.append("/".join([*parts[:i], source]))
    return list(dict.fromkeys(found))


def declaration_pairs(paths: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Each declaration file among ``paths`` that has an implementation -> its implementations:
    those in its own folder, else those in the nearest sibling source folder."""
    return dict(_pairs_of(frozenset(paths)))


@functools.lru_cache(maxsize=4)
def _pairs_of(paths: frozenset[str]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """:func:`declaration_pairs` of one set of paths, made once: every task ranked over the same
    files asks for the same pairs."""
    return tuple(sorted(_find_pairs(sorted(paths)).items()))


def _find_pairs(paths: list[str]) -> dict[str, tuple[str, ...]]:
    implementations: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for p in paths:
        split = _split(p)
        if split is not None:
            folder, stem, suffix = split
            implementations[(folder, stem)].append((suffix, p))
    pairs: dict[str, tuple[str, ...]] = {}
    for p in paths:
        declared = declaration_suffix(p)
        if declared is None:
            continue
        folder, name = posixpath.split(p)
        stem = name[: -len(declared)]
        wanted = _IMPLEMENTED_BY[declared]
        for candidate in (folder, *_sibling_folders(folder)):
            found = [f for s, f in implementations.get((candidate, stem), ()) if s in wanted]
            if found:
                pairs[p] = tuple(found)
                break
    return pairs


def unite_pairs(
    scores: Mapping[str, float],
    graph: Mapping[str, float],
    evidence: Mapping[str, float],
    reasons: dict[str, list[Reason]],
) -> dict[str, float]:
    """``scores`` with declaration files and their implementations ranked as one unit (see the
    module's docstring). ``graph`` is each file's weighted graph evidence and ``evidence`` the
    rest of what its score was made of (both before the role factor); reasons are added to
    ``reasons``."""
    out = dict(scores)
    own: dict[str, float] = {}
    for path, score in scores.items():
        if declaration_suffix(path) is None or score <= 0:
            continue
        g, e = graph.get(path, 0.0), evidence.get(path, 0.0)
        if g + e <= 0:  # no evidence at all: ranked by the task-free tie-break, left alone
            continue
        graph_share = g / (g + e)
        own[path] = score * (1 - graph_share)
        if graph_share > 0:
            out[path] = own[path] + HUB_GRAPH_SHARE * score * graph_share
            reasons[path].append(
                Reason(
                    "demoted",
                    "declaration file: its graph evidence counts "
                    f"{HUB_GRAPH_SHARE:g} (everything that includes it is near it)",
                    HUB_GRAPH_SHARE,
                )
            )
    pairs = declaration_pairs(scores)
    for declaration, implementations in sorted(pairs.items()):
        carried = own.get(declaration, 0.0)
        for implementation in implementations:
            if carried > out.get(implementation, 0.0):
                out[implementation] = carried
                reasons[implementation].append(
                    Reason("pair", f"implements {declaration}", round(carried, 4))
                )
    for declaration, implementations in sorted(pairs.items()):
        if declaration not in own:
            continue
        first = max(out.get(i, 0.0) for i in implementations)
        if out.get(declaration, 0.0) >= first > 0:
            out[declaration] = first * (1 - _AFTER)
            reasons[declaration].append(
                Reason("pair", f"declares {implementations[0]}; ranked after it", 0.0)
            )
    return out
