"""The dependency graph over files: name-based reference edges plus resolved import edges.

Weights follow Aider's RepoMap: an identifier the user mentioned x10; a well-named identifier
(snake, kebab or camel case, 8+ characters) x10; a leading underscore x0.1; defined in more than
five files x0.1; referenced from a chat file x50; times the square root of the reference count.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import (
    Callable,
    Collection,
    Iterable,
    Iterator,
    Mapping,
    MutableMapping,
)
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .layered import Layered, Members, copied_mapping, copied_set
from .model import DATA_KINDS, FileSymbols, NameFacts, Tag, name_facts, tag_facts

if TYPE_CHECKING:
    import networkx as nx

    from .tablearrays import TableArrays

#: Edges into data definitions (variables, constants, fields) weigh this much: backends report
#: them for completeness, but a map should be led by the classes and functions an API is made of.
DATA_DEFINITION_FACTOR = 0.1
IMPORT_EDGE_WEIGHT = 1.0
CHAT_MULTIPLIER = 50.0
REFS_KEY = "refs"
#: (referencing file, qualified target) -> the files the target names; the core knows no
#: language's naming rules, so this is the owning backend's ``resolve_target`` hook.
TargetResolver = Callable[[FileSymbols, str], Iterable[str]]
IMPORTS_KEY = "imports"


#: a name with at most this many definers keeps them as a tuple (more: a set)
FEW_DEFINERS = 4


@dataclass
class SymbolTable:
    """Who defines and who references each identifier.

    Built from files, the fields are dicts and sets; loaded from a stored state (see
    :mod:`repomapper.snapshot`) or updated from one, they are :class:`~repomapper.layered.Layered`
    mappings and sets that make a row when it is first read: read them as mappings and sets."""

    #: identifier -> the files defining it (a tuple while they are at most FEW_DEFINERS, else a
    #: set; a frozenset in a stored state: read it as a collection)
    defines: MutableMapping[str, Collection[str]] = field(default_factory=lambda: defaultdict(set))
    #: identifier -> {referencing file: count}, for every name referenced (only names defined
    #: somewhere make edges; the others are kept so that a new definition finds its references)
    references: MutableMapping[str, dict[str, int]] = field(default_factory=dict)
    definitions: MutableMapping[tuple[str, str], list[Tag]] = field(
        default_factory=lambda: defaultdict(list)
    )
    #: (referencing file, identifier) -> files the backend resolved the reference to
    targets: MutableMapping[tuple[str, str], AbstractSet[str]] = field(
        default_factory=lambda: defaultdict(set)
    )
    #: (file, identifier) definitions no other file references
    unreferenced: Members[tuple[str, str]] = field(default_factory=set)
    #: (file, identifier) whose every definition there is data (variable, constant, field)
    data_only: Members[tuple[str, str]] = field(default_factory=set)
    #: file -> its identifiers with a top-level class or function (not data), sorted
    top_level: MutableMapping[str, tuple[str, ...]] = field(default_factory=dict)
    _external: MutableMapping[str, dict[str, int]] = field(default_factory=dict, repr=False)
    #: the arrays the table answers from, while it is the table they make (an update makes
    #: a table of its own, without them): see :mod:`repomapper.tablearrays`
    arrays: TableArrays | None = field(default=None, repr=False, compare=False)

    def kind_factor(self, definer: str, ident: str) -> float:
        return DATA_DEFINITION_FACTOR if (definer, ident) in self.data_only else 1.0

    @classmethod
    def build(
        cls, files: Mapping[str, FileSymbols], resolve: TargetResolver | None = None
    ) -> SymbolTable:
        """The table of ``files``; with ``resolve``, each reference's qualified targets are
        resolved to files (by the backend that extracted the referencing file, see
        :meth:`repomapper.RepoMap.target_resolver`), so its edges go only to those definers."""
        table = cls()
        paths = sorted(files)
        defines: MutableMapping[str, Any] = table.defines
        for path in paths:
            # what the table needs of a file's definitions, read without keeping a Tag per
            # definition (a cached or extracted file keeps its definitions as their row until
            # a map shows it: the repository's tags as objects were most of a cold run's memory)
            all_data: dict[str, bool] = {}
            top: set[str] = set()
            for name, kind, scope in definition_facts(files[path].definitions):
                data = kind in DATA_KINDS
                all_data[name] = all_data.get(name, True) and data
                if not scope and not data:
                    top.add(name)
            for name, data in all_data.items():
                # most names have one definer or a few: a tuple (a small tuple is a fraction
                # of a set's size, and there is one per name); a set once there are more
                found = defines.get(name)
                if found is None:
                    defines[name] = (path,)
                elif len(found) < FEW_DEFINERS:
                    defines[name] = (*found, path)
                else:
                    if type(found) is tuple:
                        found = defines[name] = set(found)
                    found.add(path)
                if data:
                    table.data_only.add((path, name))
            if top:
                table.top_level[path] = tuple(sorted(top))
        table.definitions = Layered(DefinitionsByName(files, table.defines))
        references = table.references
        targets: defaultdict[tuple[str, str], set[str]] = defaultdict(set)
        for path in paths:  # every name, so that a name defined later finds its references
            fs = files[path]
            for name, count in fs.references:
                refs = references.get(name)
                if refs is None:
                    refs = references[name] = {}
                refs[path] = refs.get(path, 0) + count
            if resolve is not None:
                for name, target in fs.targets:
                    found = resolve(fs, target)
                    if found:
                        targets[(path, name)].update(found)
        table.targets.update(targets)
        for ident, definers in table.defines.items():
            if not table.external_refs(ident):
                table.unreferenced.update((d, ident) for d in definers)
        return table

    def updated(
        self,
        old_files: Mapping[str, FileSymbols],
        new_files: Mapping[str, FileSymbols],
        changed: Iterable[str],
        resolve: TargetResolver | None = None,
    ) -> tuple[SymbolTable, frozenset[str]]:
        """The table of ``new_files``, made from this one (the table of ``old_files``) by
        replacing the rows of the ``changed`` paths, and the identifiers whose rows changed.

        Equal to :meth:`build` on ``new_files`` when the two file sets are the same and only the
        changed paths differ (qualified targets are resolved per file, and the resolver answers
        by file set). This table is not modified: rows are copied before they change, so a
        ranking that still holds it keeps reading what it was computed on.
        """
        changed = sorted(set(changed))
        table = SymbolTable(  # a loaded table's fields are layered: copied in O(changes)
            defines=copied_mapping(self.defines, set),
            references=copied_mapping(self.references),
            definitions=copied_mapping(self.definitions, list),
            targets=copied_mapping(self.targets, set),
            unreferenced=copied_set(self.unreferenced),
            data_only=copied_set(self.data_only),
            top_level=copied_mapping(self.top_level),
        )
        touched: set[str] = set()
        referenced_by_changed: dict[str, dict[str, int]] = defaultdict(dict)
        for path in changed:
            old = old_files.get(path)
            touched |= changed_names(old, new_files.get(path))
            if old is not None:
                for name in {t.name for t in old.definitions}:
                    rest = {d for d in table.defines.get(name, ()) if d != path}
                    if rest:
                        table.defines[name] = rest
                    else:
                        table.defines.pop(name, None)
                    table.definitions.pop((path, name), None)
                    table.data_only.discard((path, name))
                for name, _ in old.targets:
                    table.targets.pop((path, name), None)
        for path in changed:
            new = new_files.get(path)
            table.top_level.pop(path, None)
            if new is None:
                continue
            top = top_level_names(new.definitions)
            if top:
                table.top_level[path] = top
            added: dict[str, list[Tag]] = defaultdict(list)
            for tag in new.definitions:
                added[tag.name].append(tag)
            for name, tags in added.items():
                table.defines[name] = {*table.defines.get(name, ()), path}
                table.definitions[(path, name)] = tags
                if data_only(tags):
                    table.data_only.add((path, name))
            for name, count in new.references:
                referenced_by_changed[name][path] = count
            if resolve is not None:
                for name, target in new.targets:
                    found = resolve(new, target)
                    if found:
                        table.targets[(path, name)] = table.targets.get((path, name), set()) | set(
                            found
                        )
        gone = set(changed)
        for name in touched:
            refs = self.references.get(name)
            if refs is None and name not in referenced_by_changed:
                continue
            refs = dict(refs or {})  # a copy of the row (in C), the changed files out and back in
            for path in gone:
                refs.pop(path, None)
            refs.update(referenced_by_changed.get(name, {}))
            if refs:
                table.references[name] = refs
            else:
                table.references.pop(name, None)
        table._external = copied_mapping(self._external)
        for name in touched:
            table._external.pop(name, None)
        for name in touched:
            for definer in self.defines.get(name, ()):
                table.unreferenced.discard((definer, name))
            if name in table.defines and not table.external_refs(name):
                table.unreferenced.update((d, name) for d in table.defines[name])
        return table, frozenset(touched)

    def external_refs(self, ident: str) -> dict[str, int]:
        """Referencing file -> count (in no particular order: callers sort), leaving out the
        files that define ``ident`` themselves: a file's use of its own names says nothing about
        its importance to others. Read only: when no definer references the name, this is the
        table's own row (rows are replaced, never changed in place, once the table is built)."""
        found = self._external.get(ident)
        if found is None:
            defined_in = self.defines.get(ident, ())
            refs = self.references.get(ident, {})
            found = {r: c for r, c in refs.items() if r not in defined_in}
            if len(found) == len(refs):  # one dict less per name no definer references
                found = refs
            self._external[ident] = found
        return found

    def chosen_definers(self, referencer: str, ident: str) -> list[str]:
        """The definers a reference links to: all of them, or those its resolved target names."""
        definers = tuple(sorted(self.defines[ident]))
        return list(pick_definers(definers, self.targets.get((referencer, ident))))


def changed_names(old: FileSymbols | None, new: FileSymbols | None) -> set[str]:
    """The names whose rows in the table an edit of one file from ``old`` to ``new`` changes:
    those it starts or stops defining, or defines as data where it did not (or the reverse),
    those it references a different number of times or with other qualified targets; and when
    the set of names it defines changes, all of them (their positions among the file's
    definitions, which the factored graph's layout holds, move). An edit inside a function's
    body changes none: its update recomputes nothing of the table."""

    def defined(fs: FileSymbols | None) -> dict[str, bool]:
        groups: dict[str, list[Tag]] = defaultdict(list)
        for tag in fs.definitions if fs is not None else ():
            groups[tag.name].append(tag)
        return {name: data_only(tags) for name, tags in groups.items()}

    def targets(fs: FileSymbols | None) -> dict[str, set[str]]:
        found: dict[str, set[str]] = defaultdict(set)
        for name, target in fs.targets if fs is not None else ():
            found[name].add(target)
        return found

    was, now = defined(old), defined(new)
    if was.keys() != now.keys():
        names = set(was) | set(now)
    else:
        names = {n for n in was if was[n] != now[n]}
    refs_was = dict(old.references) if old is not None else {}
    refs_now = dict(new.references) if new is not None else {}
    names.update(n for n in refs_was.keys() | refs_now.keys() if refs_was.get(n) != refs_now.get(n))
    t_was, t_now = targets(old), targets(new)
    names.update(n for n in t_was.keys() | t_now.keys() if t_was.get(n) != t_now.get(n))
    return names


def data_only(tags: Iterable[Tag]) -> bool:
    """Whether every one of a name's definitions in a file is data (variable, constant, field)."""
    return all(str(t.symbol_kind) in DATA_KINDS for t in tags)


def definitions_by_name(definitions: Iterable[Tag]) -> NameFacts:
    """The :class:`~repomapper.model.NameFacts` of a file's definitions (kept by a cached or
    extracted file's row once read: see :class:`repomapper.rowtext.RowTags`)."""
    found = getattr(definitions, "name_facts", None)
    return found() if callable(found) else name_facts(definition_facts(definitions))


def definition_facts(definitions: Iterable[Tag]) -> Iterable[tuple[str, str, str]]:
    """(name, symbol kind, scope) of each of a file's definitions, in order; a file whose
    definitions are still their cached row (:class:`repomapper.rowtext.RowTags`) stays so."""
    facts = getattr(definitions, "facts", None)
    return facts() if callable(facts) else tag_facts(definitions)


class DefinitionsByName(Mapping[tuple[str, str], list[Tag]]):
    """(file, name) -> that file's definitions of the name, in file order, grouped per file on
    first use (a file's definitions are parsed when first read)."""

    def __init__(self, files: Mapping[str, FileSymbols], defines: Mapping[str, Collection[str]]):
        self._files, self._defines = files, defines
        self._grouped: dict[str, dict[str, list[Tag]]] = {}
        #: the keys found in ``defines`` once: asking again does not read a name's definers
        #: again (a table held as arrays makes them as a tuple per read; a map's repeat
        #: pricing reads the same pairs on every call)
        self._found: set[tuple[str, str]] = set()

    def __getitem__(self, key: tuple[str, str]) -> list[Tag]:
        if key not in self._found:
            if key not in self:
                raise KeyError(key)
            self._found.add(key)
        path, name = key
        groups = self._grouped.get(path)
        if groups is None:
            groups = self._grouped[path] = defaultdict(list)
            for tag in self._files[path].definitions:
                groups[tag.name].append(tag)
        return groups[name]

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, tuple) or len(key) != 2:
            return False
        path, name = key
        return name in self._defines and path in self._defines[name]

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return iter(sorted((p, n) for n in self._defines for p in self._defines[n]))

    def __len__(self) -> int:
        return sum(len(self._defines[n]) for n in self._defines)


def top_level_names(definitions: Iterable[Tag]) -> tuple[str, ...]:
    """The names of a file's top-level classes and functions (not data), sorted."""
    return tuple(
        sorted(
            {t.name for t in definitions if not t.scope and str(t.symbol_kind) not in DATA_KINDS}
        )
    )


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
) -> nx.MultiDiGraph[str]:
    """One node per file (sorted, so the graph is the same on every run), weighted edges.

    Edges are aggregated: at most one reference edge (key ``"refs"``) and one import edge (key
    ``"imports"``) per ordered pair of files. A reference edge's ``weight`` is the sum of its
    identifiers' weights and its ``idents`` attribute maps each identifier to its own weight, so
    rank can be distributed per identifier (what Aider keeps as parallel edges, one per name).

    Unlike Aider, no self-loops: a file that only references its own names would trap the random
    walk and outrank everything it depends on. Unreferenced definitions are ranked from their
    file's rank instead (see :mod:`repomapper.rank`).

    This is the explicit graph, for inspection and for embedders; ranking computes the same
    PageRank without materialising one edge per pair of files (see :mod:`repomapper.rank`).
    """
    import networkx as nx

    graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
    graph.add_nodes_from(sorted(set(files)))
    pairs = reference_pairs(table, chat_files, mentioned_idents)
    for src, dst in sorted(pairs):
        idents = pairs[(src, dst)]
        graph.add_edge(
            src, dst, key=REFS_KEY, weight=sum(idents[i] for i in sorted(idents)), idents=idents
        )
    for importer, target, weight in import_weights(import_edges, chat_files):
        if target in graph:
            graph.add_edge(importer, target, key=IMPORTS_KEY, weight=weight)
    return graph


def reference_weights(
    table: SymbolTable,
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> Iterator[tuple[str, str, tuple[str, ...], float]]:
    """Every reference edge's weight before the definer's kind factor, in a fixed order:
    (identifier, referencing file, the files it links to, weight). The explicit graph
    (:func:`build_graph`) and the factored one (:mod:`repomapper.rank`) both read it."""
    for ident in sorted(table.defines):
        for referencer, definers, weight in ident_weights(
            table, ident, chat_files, mentioned_idents
        ):
            yield ident, referencer, definers, weight


def ident_weights(
    table: SymbolTable,
    ident: str,
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> Iterator[tuple[str, tuple[str, ...], float]]:
    """One identifier's reference edges, referencing files in order: (referencing file, the
    files it links to, weight). The one place Aider's multipliers meet the chat boost and the
    reference count. References the backend did not resolve all link to the same tuple of every
    definer (one object, not one copy per reference: a name defined in many files is common)."""
    refs = table.external_refs(ident)
    if not refs:
        return
    definers = tuple(sorted(table.defines[ident]))
    mul = identifier_multiplier(ident, len(definers), mentioned_idents)
    targets = table.targets
    for referencer in sorted(refs):
        weight = (
            mul
            * (CHAT_MULTIPLIER if referencer in chat_files else 1.0)
            * math.sqrt(refs[referencer])
        )
        yield referencer, pick_definers(definers, targets.get((referencer, ident))), weight


def pick_definers(definers: tuple[str, ...], resolved: AbstractSet[str] | None) -> tuple[str, ...]:
    """Of a name's definers (sorted), those a reference's resolved targets name; all of them
    when it was not resolved or names none of them (``definers`` itself, not a copy)."""
    if resolved:
        return tuple(d for d in definers if d in resolved) or definers
    return definers


def import_weights(
    import_edges: Mapping[str, Mapping[str, int]], chat_files: frozenset[str] = frozenset()
) -> Iterator[tuple[str, str, float]]:
    """(importer, target, weight) for every import edge but self-imports, in a fixed order."""
    for importer in sorted(import_edges):
        chat = CHAT_MULTIPLIER if importer in chat_files else 1.0
        for target, count in sorted(import_edges[importer].items()):
            if target != importer:
                yield importer, target, IMPORT_EDGE_WEIGHT * math.sqrt(count) * chat


def reference_pairs(
    table: SymbolTable,
    chat_files: frozenset[str] = frozenset(),
    mentioned_idents: frozenset[str] = frozenset(),
) -> dict[tuple[str, str], dict[str, float]]:
    """(referencing file, defining file) -> {identifier: weight}: the reference edges of the
    explicit graph, without building it."""
    pairs: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for ident, referencer, definers, weight in reference_weights(
        table, chat_files, mentioned_idents
    ):
        for definer in definers:
            pairs[(referencer, definer)][ident] = weight * table.kind_factor(definer, ident)
    return dict(pairs)
