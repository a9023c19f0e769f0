"""Symbol-level dependencies: which definitions a definition's body refers to.

Built from our extraction (``ParsedFile`` made from the backends' tags), not from a parser of its
own: a reference at line ``L`` of file ``F`` belongs to the innermost definition of ``F`` whose
span holds ``L`` (or to the module, ``F::``), and links to the definitions of its name, chosen
through what ``F`` imports (resolved by the backends' ``resolve_import``), in this order:

1. ``from m import name``: the module-level definitions of ``name`` in the files ``m`` resolves to;
2. a member of a class ``F`` imports by name (``store.save`` where ``MemoryStore`` was imported
   from ``m``), or a module-level function or class of a module ``F`` imports whole;
3. ``F``'s own definitions of the name;
4. every module-level function or class (not a variable, and not in a test file unless ``F`` is
   one) in the same language when there are at most :data:`MAX_AMBIGUOUS` of them (never for an attribute reference such as ``x.name``, whose
   owner is unknown; never a class member, which a bare name cannot reach from another file).

A name none of these choose is left out rather than guessed.

Kinds: ``import`` (the reference is on an import line, or a file imports a file), ``inheritance``
(a reference on a class's own first line: its bases), ``test`` (the referring file is a test),
``call`` (the backend says the name is called) and ``reference``.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass

from ..relevance.roles import TEST, file_role
from .models import DependencyInfo, ParsedFile, SymbolInfo, split_symbol_id, symbol_id

MAX_AMBIGUOUS = 3
DATA_KINDS = frozenset({"variable", "constant", "field"})
CLASS_KINDS = frozenset({"class", "interface", "type", "enum", "struct", "trait", "protocol"})


@dataclass(frozen=True, slots=True)
class _Edge:
    to: str
    kind: str
    file_path: str
    line: int


class DependencyGraph:
    """Dependencies between the definitions of the files added; edges are computed per file on
    first use (so adding the whole repository is cheap and a query reads only what it needs)."""

    def __init__(self) -> None:
        self.files: dict[str, ParsedFile] = {}
        self.symbols: dict[str, SymbolInfo] = {}
        self._by_name: dict[str, list[str]] = defaultdict(list)
        self._path_of: dict[str, str] = {}
        self._referrers: dict[str, set[str]] = defaultdict(set)  # name -> files referring to it
        self._edges: dict[str, dict[str, list[_Edge]]] = {}  # file -> from id -> edges
        self._rev: dict[str, list[tuple[str, _Edge]]] = defaultdict(list)  # to id -> (from, edge)

    # -- building ------------------------------------------------------------------------------
    def add_file(self, parsed: ParsedFile) -> None:
        """Add (or replace) a parsed file."""
        if parsed.path in self.files:
            self._remove(parsed.path)
        self.files[parsed.path] = parsed
        for s in parsed.symbols:
            sid = s.id
            if sid not in self.symbols:
                self.symbols[sid] = s
                self._path_of[sid] = parsed.path
                self._by_name[s.name].append(sid)
        for name, _, _ in parsed.references:
            self._referrers[name].add(parsed.path)
        self._edges.clear()
        self._rev.clear()

    def _remove(self, path: str) -> None:
        old = self.files.pop(path)
        for s in old.symbols:
            sid = s.id
            self.symbols.pop(sid, None)
            self._path_of.pop(sid, None)
            ids = self._by_name.get(s.name, [])
            if sid in ids:
                ids.remove(sid)
        for name, _, _ in old.references:
            self._referrers[name].discard(path)

    def resolve(self, symbol: str) -> list[str]:
        """Symbol ids for ``symbol``: an id (``path::Qual.name``), a file's module (``path::``
        or a path), or a bare or qualified name (every definition of it)."""
        if symbol in self.symbols:
            return [symbol]
        if "::" in symbol:
            path, name = split_symbol_id(symbol)
            if path in self.files and not name:
                return [symbol_id(path, "")]
            return []
        if symbol in self.files:
            return [symbol_id(symbol, "")]
        last = symbol.rsplit(".", 1)[-1]
        found = [
            sid
            for sid in self._by_name.get(last, [])
            if self.symbols[sid].qualified_name == symbol
            or self.symbols[sid].qualified_name.endswith("." + symbol)
            or symbol == last
        ]
        return sorted(found)

    # -- edges ---------------------------------------------------------------------------------
    def _file_edges(self, path: str) -> dict[str, list[_Edge]]:
        done = self._edges.get(path)
        if done is not None:
            return done
        parsed = self.files[path]
        owner = _owners(parsed)
        import_lines = {i.line_number for i in parsed.imports}
        imported = _Imports(parsed)
        own = {s.name for s in parsed.symbols}
        is_test = file_role(path) == TEST
        edges: dict[str, list[_Edge]] = defaultdict(list)
        seen: set[tuple[str, str]] = set()
        module = symbol_id(path, "")
        for imp in parsed.imports:
            for target in imp.resolved:
                if target in self.files and target != path:
                    key = (module, symbol_id(target, ""))
                    if key not in seen:
                        seen.add(key)
                        edges[module].append(
                            _Edge(symbol_id(target, ""), "import", path, imp.line_number)
                        )
        memo: dict[tuple[str, str], list[str]] = {}
        for name, line, ref_kind in sorted(
            set(parsed.references), key=lambda r: (r[1], r[0], r[2])
        ):
            candidates = self._by_name.get(name)
            if not candidates:
                continue
            src = owner.get(line)
            src_id = src.id if src is not None else module
            chosen = memo.get((name, ref_kind))
            if chosen is None:
                chosen = self._choose(candidates, name, ref_kind, parsed, imported, own)
                memo[(name, ref_kind)] = chosen
            for to in chosen:
                if to == src_id:
                    continue
                if line in import_lines:
                    kind = "import"
                elif src is not None and src.kind in CLASS_KINDS and line == src.start_line:
                    kind = "inheritance"
                elif is_test:
                    kind = "test"
                elif ref_kind == "call":
                    kind = "call"
                else:
                    kind = "reference"
                key = (src_id, to)
                if key in seen:
                    continue
                seen.add(key)
                edges[src_id].append(_Edge(to, kind, path, line))
        self._edges[path] = dict(edges)
        for origin in sorted(edges):
            for e in edges[origin]:
                self._rev[e.to].append((origin, e))
        return self._edges[path]

    def _choose(
        self,
        candidates: list[str],
        name: str,
        ref_kind: str,
        parsed: ParsedFile,
        imported: _Imports,
        own: set[str],
    ) -> list[str]:
        paths, symbols = self._path_of, self.symbols
        named = imported.names.get(name)
        chosen = []
        if named:  # from x import name
            chosen = [c for c in candidates if paths[c] in named and not symbols[c].scope]
        if not chosen:  # a member of an imported class, or a function of an imported module
            for c in candidates:
                sym, path = symbols[c], paths[c]
                if sym.scope:
                    if sym.scope.split(".")[0] in imported.from_file.get(path, ()):
                        chosen.append(c)
                elif path in imported.modules and sym.kind not in DATA_KINDS:
                    chosen.append(c)
        if not chosen and name in own:
            chosen = [c for c in candidates if paths[c] == parsed.path]
        if not chosen:
            language = parsed.language
            from_test = file_role(parsed.path) == TEST
            same = [
                c
                for c in candidates
                if not symbols[c].scope
                and symbols[c].kind not in DATA_KINDS
                and self.files[paths[c]].language == language
                and (from_test or file_role(paths[c]) != TEST)
            ]
            limit = 0 if ref_kind == "attribute" else MAX_AMBIGUOUS
            if len({paths[c] for c in same}) <= limit:
                chosen = same
        return sorted(chosen)

    def _out(self, sid: str) -> list[_Edge]:
        path = split_symbol_id(sid)[0]
        if path not in self.files:
            return []
        return self._file_edges(path).get(sid, [])

    def _in(self, sid: str) -> list[tuple[str, _Edge]]:
        """(from id, edge) into ``sid``: only the files that refer to its name (or import its
        file) are read."""
        path, qual = split_symbol_id(sid)
        name = qual.rsplit(".", 1)[-1] if qual else None
        files = set(self._referrers.get(name, ())) if name else set()
        if not qual:
            files = {p for p, f in self.files.items() if any(path in i.resolved for i in f.imports)}
        for f in sorted(files):
            if f in self.files:
                self._file_edges(f)
        return sorted(self._rev.get(sid, ()), key=lambda x: (x[0], x[1].line, x[1].kind))

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
            sid, depth = queue.popleft()
            if depth >= max_depth:
                continue
            if forward:
                steps = [(sid, e.to, e) for e in self._out(sid)]
            else:
                steps = [(src, src, e) for src, e in self._in(sid)]
            for a, nxt, e in steps:
                if nxt in visited:
                    continue
                visited.add(nxt)
                frm, to = (sid, e.to) if forward else (a, sid)
                out.append(DependencyInfo(frm, to, e.kind, depth + 1, e.file_path, e.line))
                queue.append((nxt, depth + 1))
        return out


class _Imports:
    """What a file imports: name -> files (``from x import name``), file -> names imported from
    it, and the files imported whole (``import x``)."""

    def __init__(self, parsed: ParsedFile):
        self.names: dict[str, set[str]] = defaultdict(set)
        self.from_file: dict[str, set[str]] = defaultdict(set)
        self.modules: set[str] = set()
        for imp in parsed.imports:
            for target in imp.resolved:
                if imp.names:
                    self.from_file[target].update(imp.names)
                    for n in imp.names:
                        self.names[n].add(target)
                else:
                    self.modules.add(target)


def _owners(parsed: ParsedFile) -> dict[int, SymbolInfo]:
    """line -> innermost definition holding it."""
    owner: dict[int, SymbolInfo] = {}
    last = parsed.line_count or max((s.start_line for s in parsed.symbols), default=0)
    for s in sorted(parsed.symbols, key=lambda s: (s.start_line, -s.end_line)):
        # a backend's end line past the end of the file (a faulty plugin) costs nothing
        for line in range(max(s.start_line, 1), min(s.end_line, last) + 1):
            owner[line] = s
    return owner
