"""The dependency graph over files: name-based reference edges plus resolved import edges.

Weights follow Aider's RepoMap: an identifier the user mentioned x10; a well-named identifier
(snake, kebab or camel case, 8+ characters) x10; a leading underscore x0.1; defined in more than
five files x0.1; referenced from a chat file x50; times the square root of the reference count.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import networkx as nx

from .index import RepoIndex
from .model import DEF, FileExtraction, Tag

#: Edges into data definitions (variables, constants, fields) weigh this much: backends report
#: them for completeness, but a map should be led by the classes and functions an API is made of.
DATA_DEFINITION_FACTOR = 0.1
DATA_KINDS = frozenset({"variable", "constant", "field"})
IMPORT_EDGE_WEIGHT = 1.0
CHAT_MULTIPLIER = 50.0
#: Edge attribute ``ident`` of an import edge (no single identifier carries it).
IMPORT_IDENT = ""


@dataclass
class SymbolTable:
    """Who defines and who references each identifier."""

    defines: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    references: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    definitions: dict[tuple[str, str], list[Tag]] = field(default_factory=lambda: defaultdict(list))
    #: (referencing file, identifier) -> files the backend resolved the reference to
    targets: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    #: (file, identifier) definitions no other file references
    unreferenced: set[tuple[str, str]] = field(default_factory=set)

    def kind_factor(self, definer: str, ident: str) -> float:
        tags = self.definitions.get((definer, ident), ())
        if tags and all(str(t.symbol_kind) in DATA_KINDS for t in tags):
            return DATA_DEFINITION_FACTOR
        return 1.0

    @classmethod
    def build(cls, extractions: Mapping[str, FileExtraction], index: RepoIndex | None = None) -> SymbolTable:
        table = cls()
        for path in sorted(extractions):
            for tag in extractions[path].tags:
                if tag.kind == DEF:
                    table.defines[tag.name].add(path)
                    table.definitions[(path, tag.name)].append(tag)
                else:
                    table.references[tag.name][path] += 1
                    if tag.target and index is not None:
                        found = resolve_target(tag.target, index)
                        if found:
                            table.targets[(path, tag.name)].update(found)
        return table


def resolve_target(target: str, index: RepoIndex) -> tuple[str, ...]:
    """Files that define a qualified name such as ``pkg.mod.Class.method``."""
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        found = index.resolve_python_module(".".join(parts[:cut]))
        if found:
            return found
    return ()


def is_well_named(ident: str) -> bool:
    if len(ident) < 8:
        return False
    has_alpha = any(c.isalpha() for c in ident)
    snake = "_" in ident and has_alpha
    kebab = "-" in ident and has_alpha
    camel = any(c.isupper() for c in ident) and any(c.islower() for c in ident)
    return snake or kebab or camel


def identifier_multiplier(ident: str, n_definers: int, mentioned_idents: frozenset[str]) -> float:
    mul = 1.0
    if ident in mentioned_idents:
        mul *= 10
    if is_well_named(ident):
        mul *= 10
    if ident.startswith("_"):
        mul *= 0.1
    if n_definers > 5:
        mul *= 0.1
    return mul


def build_graph(
    files: Iterable[str],
    table: SymbolTable,
    import_edges: Mapping[str, Mapping[str, int]],
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> nx.MultiDiGraph:
    """One node per file (sorted, so the graph is the same on every run), weighted edges.

    Unlike Aider, no self-loops: a file that only references its own names would trap the random
    walk and outrank everything it depends on. Unreferenced definitions are ranked from their
    file's rank instead (see :func:`repomapper.rank.rank_definitions`).
    """
    graph = nx.MultiDiGraph()
    graph.add_nodes_from(sorted(set(files)))
    for ident in sorted(table.defines):
        definers = sorted(table.defines[ident])
        # a file's use of its own names says nothing about its importance to others
        refs = {r: c for r, c in table.references.get(ident, {}).items() if r not in table.defines[ident]}
        if not refs:
            table.unreferenced.update((definer, ident) for definer in definers)
            continue
        mul = identifier_multiplier(ident, len(definers), mentioned_idents)
        for referencer in sorted(refs):
            count = refs[referencer]
            chosen = definers
            resolved = table.targets.get((referencer, ident))
            if resolved:
                narrowed = [d for d in definers if d in resolved]
                chosen = narrowed or definers
            weight = mul * (CHAT_MULTIPLIER if referencer in chat_files else 1.0) * math.sqrt(count)
            for definer in chosen:
                w = weight * table.kind_factor(definer, ident)
                graph.add_edge(referencer, definer, weight=w, ident=ident)
    for importer in sorted(import_edges):
        for target, count in sorted(import_edges[importer].items()):
            if target == importer or target not in graph:
                continue
            weight = IMPORT_EDGE_WEIGHT * math.sqrt(count)
            if importer in chat_files:
                weight *= CHAT_MULTIPLIER
            graph.add_edge(importer, target, weight=weight, ident=IMPORT_IDENT)
    return graph
