"""Which definitions a definition's body refers to, read from the repository state.

Nothing here is a graph of its own: the definitions are the state's summaries, who defines and
who refers to a name is its symbol table, which files a file imports are its import edges; the
line of each reference (which the summaries count but do not place) is read from the state's
full extraction for the files a walk reaches, and kept only for the pack being made.

A reference at line ``L`` of file ``F`` belongs to the innermost definition of ``F`` whose span
holds ``L`` (or to the module, ``F::``), and links to the definitions of its name, chosen through
what ``F`` imports, in this order:

1. ``from m import name``: the module-level definitions of ``name`` in the files ``m`` resolves to;
2. a member of a class ``F`` imports by name (``store.save`` where ``MemoryStore`` was imported
   from ``m``), or a module-level function or class of a module ``F`` imports whole;
3. ``F``'s own definitions of the name;
4. every module-level function or class (not a variable, and not in a test file unless ``F`` is
   one) in the same language when there are at most :data:`MAX_AMBIGUOUS` of them (never for an
   attribute reference such as ``x.name``, whose owner is unknown; never a class member, which a
   bare name cannot reach from another file).

A name none of these choose is left out rather than guessed.

Kinds: ``import`` (the reference is on an import line, or a file imports a file), ``inheritance``
(a reference on a class's own first line: its bases), ``test`` (the referring file is a test),
``call`` (the backend says the name is called) and ``reference``.
"""

from __future__ import annotations

import functools
from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import dataclass

from ..model import Tag
from ..relevance.roles import TEST, file_role
from .models import DependencyInfo, split_symbol_id, symbol_id
from .view import ResolvedImport, StateView

MAX_AMBIGUOUS = 3
DATA_KINDS = frozenset({"variable", "constant", "field"})
CLASS_KINDS = frozenset({"class", "interface", "type", "enum", "struct", "trait", "protocol"})


@dataclass(frozen=True, slots=True)
class _Edge:
    to: str
    kind: str
    file_path: str
    line: int


class SymbolLinks:
    """Dependencies between the definitions of a :class:`StateView`'s files, computed per file
    when a walk first reaches it (for one pack: nothing outlives the view)."""

    def __init__(self, view: StateView):
        self.view = view
        self._edges: dict[str, dict[str, list[_Edge]]] = {}  # file -> from id -> edges
        self._rev: dict[str, list[tuple[str, _Edge]]] = defaultdict(list)  # to id -> (from, edge)
        self._by_name: dict[str, list[tuple[str, Tag]]] = {}

    # -- symbols -------------------------------------------------------------------------------
    def resolve(self, symbol: str) -> list[str]:
        """Symbol ids for ``symbol``: an id (``path::Qual.name``), a file's module (``path::``
        or a path), or a bare or qualified name (every definition of it)."""
        view = self.view
        if "::" in symbol:
            path, qual = split_symbol_id(symbol)
            if path not in view.mapped:
                return []
            if not qual or view.definition(path, qual) is not None:
                return [symbol]
            return []
        if symbol in view.mapped:
            return [symbol_id(symbol, "")]
        last = symbol.rsplit(".", 1)[-1]
        found = {
            symbol_id(path, t.qualified_name)
            for path, t in self._named(last)
            if symbol == last
            or t.qualified_name == symbol
            or t.qualified_name.endswith("." + symbol)
        }
        return sorted(found)

    def _named(self, name: str) -> list[tuple[str, Tag]]:
        """(file, definition) of every definition of ``name``, by file (the symbol table's
        definers), each qualified name once (its first definition in the file)."""
        found = self._by_name.get(name)
        if found is None:
            found = self._by_name[name] = []
            for path in self.view.definers(name):
                seen: set[str] = set()
                for t in self.view.named(path, name):
                    if t.qualified_name not in seen:
                        seen.add(t.qualified_name)
                        found.append((path, t))
        return found

    # -- edges ---------------------------------------------------------------------------------
    def _file_edges(self, path: str) -> dict[str, list[_Edge]]:
        done = self._edges.get(path)
        if done is not None:
            return done
        view = self.view
        imports = view.imports(path)
        refs = view.references(path)
        owner = _owners(view.definitions(path), max((line for _, line, _ in refs), default=0))
        import_lines = {ri.imp.line_number for ri in imports}
        imported = _Imports(imports)
        own = {t.name for t in view.definitions(path)}
        from_test = is_test(path)
        edges: dict[str, list[_Edge]] = defaultdict(list)
        seen: set[tuple[str, str]] = set()
        module = symbol_id(path, "")
        for ri in imports:
            for target in ri.files:
                key = (module, symbol_id(target, ""))
                if target != path and key not in seen:
                    seen.add(key)
                    edges[module].append(_Edge(key[1], "import", path, ri.imp.line_number))
        memo: dict[tuple[str, str], list[str]] = {}
        for name, line, ref_kind in refs:
            src = owner.get(line)
            src_id = symbol_id(path, src.qualified_name) if src is not None else module
            chosen = memo.get((name, ref_kind))
            if chosen is None:
                chosen = memo[(name, ref_kind)] = self._choose(name, ref_kind, path, imported, own)
            for to in chosen:
                if to == src_id or (src_id, to) in seen:
                    continue
                seen.add((src_id, to))
                kind = _kind(line, ref_kind, src, import_lines, from_test)
                edges[src_id].append(_Edge(to, kind, path, line))
        self._edges[path] = dict(edges)
        for origin in sorted(edges):
            for e in edges[origin]:
                self._rev[e.to].append((origin, e))
        return self._edges[path]

    def _choose(
        self, name: str, ref_kind: str, path: str, imported: _Imports, own: set[str]
    ) -> list[str]:
        """The definitions a reference to ``name`` in ``path`` links to (the module's rules)."""
        candidates = self._named(name)
        if not candidates:
            return []
        named = imported.names.get(name)
        chosen: list[str] = []
        if named:  # from x import name
            chosen = [sid(p, t) for p, t in candidates if p in named and not t.scope]
        if not chosen:  # a member of an imported class, or a function of an imported module
            for p, t in candidates:
                if t.scope:
                    if t.scope.split(".")[0] in imported.from_file.get(p, ()):
                        chosen.append(sid(p, t))
                elif p in imported.modules and str(t.symbol_kind) not in DATA_KINDS:
                    chosen.append(sid(p, t))
        if not chosen and name in own:
            chosen = [sid(p, t) for p, t in candidates if p == path]
        if not chosen and ref_kind != "attribute":
            same = self._fallback(candidates, path)
            if len({p for p, _ in same}) <= MAX_AMBIGUOUS:
                chosen = [sid(p, t) for p, t in same]
        return sorted(chosen)

    def _fallback(self, candidates: list[tuple[str, Tag]], path: str) -> list[tuple[str, Tag]]:
        """Rule 4's candidates for a reference in ``path``: module-level functions and classes
        of the same language, not in a test file unless ``path`` is one."""
        return self._fallback_for(candidates, self.view.language(path), is_test(path))

    def _fallback_for(
        self, candidates: list[tuple[str, Tag]], language: str, from_test: bool
    ) -> list[tuple[str, Tag]]:
        return [
            (p, t)
            for p, t in candidates
            if not t.scope
            and str(t.symbol_kind) not in DATA_KINDS
            and self.view.language(p) == language
            and (from_test or not is_test(p))
        ]

    def _out(self, sid: str) -> list[_Edge]:
        path = split_symbol_id(sid)[0]
        if path not in self.view.mapped:
            return []
        return self._file_edges(path).get(sid, [])

    def _in(self, sid: str) -> list[tuple[str, _Edge]]:
        """(from id, edge) into ``sid``: only the files that could link to it are read (those
        that import its file, its own file, and for a name rule 4 may reach, its referrers)."""
        path, qual = split_symbol_id(sid)
        could = self._could_refer(path, qual) if qual else self.view.importers(path)
        files = [f for f in could if f not in self._edges]
        self.view.read_references(files)
        for f in files:
            self._file_edges(f)
        return sorted(self._rev.get(sid, ()), key=lambda x: (x[0], x[1].line, x[1].kind))

    def _could_refer(self, path: str, qual: str) -> list[str]:
        """The files whose references to ``qual``'s name may link to it: by rules 1 to 3 only
        files importing ``path`` and ``path`` itself; by rule 4 a referrer of the language and
        kind (test or not) for which ``path`` is among at most ``MAX_AMBIGUOUS`` candidates."""
        view = self.view
        name = qual.rsplit(".", 1)[-1]
        importers = set(view.importers(path)) | {path}
        tag = view.definition(path, qual)
        fallback = tag is not None and not tag.scope and str(tag.symbol_kind) not in DATA_KINDS
        candidates = self._named(name) if fallback else []
        reach: dict[tuple[str, bool], bool] = {}

        def by_rule_4(f: str) -> bool:
            key = (view.language(f), is_test(f))
            found = reach.get(key)
            if found is None:
                same = {p for p, _ in self._fallback_for(candidates, *key)}
                found = reach[key] = path in same and len(same) <= MAX_AMBIGUOUS
            return found

        return [f for f in view.referrers(name) if f in importers or (fallback and by_rule_4(f))]

    # -- queries -------------------------------------------------------------------------------
    def get_dependencies(self, symbol: str, max_depth: int = 3) -> list[DependencyInfo]:
        """What ``symbol`` depends on, breadth first up to ``max_depth`` steps (each dependency
        once, at its smallest depth)."""
        return self._walk(self.resolve(symbol), max_depth, forward=True)

    def get_dependents(self, symbol: str, max_depth: int = 2) -> list[DependencyInfo]:
        """The definitions that depend on ``symbol``, up to ``max_depth`` steps."""
        return self._walk(self.resolve(symbol), max_depth, forward=False)

    def _walk(self, start: list[str], max_depth: int, forward: bool) -> list[DependencyInfo]:
        out: list[DependencyInfo] = []
        visited = set(start)
        queue = deque((s, 0) for s in sorted(start))
        while queue:
            at, depth = queue.popleft()
            if depth >= max_depth:
                continue
            if forward:
                steps = [(at, e.to, e) for e in self._out(at)]
            else:
                steps = [(src, src, e) for src, e in self._in(at)]
            for a, nxt, e in steps:
                if nxt in visited:
                    continue
                visited.add(nxt)
                frm, to = (at, e.to) if forward else (a, at)
                out.append(DependencyInfo(frm, to, e.kind, depth + 1, e.file_path, e.line))
                queue.append((nxt, depth + 1))
        return out


@functools.lru_cache(maxsize=65536)
def is_test(path: str) -> bool:
    """Whether ``path`` is a test file (by its name and folders; asked once per path)."""
    return file_role(path) == TEST


def sid(path: str, t: Tag) -> str:
    return symbol_id(path, t.qualified_name)


def _kind(line: int, ref_kind: str, src: Tag | None, import_lines: set[int], is_test: bool) -> str:
    if line in import_lines:
        return "import"
    if src is not None and str(src.symbol_kind) in CLASS_KINDS and line == src.start_line:
        return "inheritance"
    if is_test:
        return "test"
    return "call" if ref_kind == "call" else "reference"


class _Imports:
    """What a file imports: name -> files (``from x import name``), file -> names imported from
    it, and the files imported whole (``import x``)."""

    def __init__(self, imports: Sequence[ResolvedImport]):
        self.names: dict[str, set[str]] = defaultdict(set)
        self.from_file: dict[str, set[str]] = defaultdict(set)
        self.modules: set[str] = set()
        for ri in imports:
            imp = ri.imp
            for target in ri.files:
                if imp.names:
                    self.from_file[target].update(imp.names)
                    for n in imp.names:
                        self.names[n].add(target)
                else:
                    self.modules.add(target)


def _owners(definitions: Sequence[Tag], last: int) -> dict[int, Tag]:
    """line -> innermost definition holding it, for lines up to ``last`` (the last line a
    reference is on: a backend's end line past the end of the file costs nothing)."""
    owner: dict[int, Tag] = {}
    for t in sorted(definitions, key=lambda t: (t.start_line, -max(t.end_line, t.start_line))):
        for line in range(max(t.start_line, 1), min(max(t.end_line, t.start_line), last) + 1):
            owner[line] = t
    return owner
