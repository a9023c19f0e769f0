"""The tools' behaviour, independent of MCP: a :class:`Service` answers tool calls from live
indexes (one per repository root), and is what the MCP server wraps."""

from __future__ import annotations

import difflib
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contract.envelope import Envelope
from ..contract.request import ContractError, parse_request
from ..contract.run import map_with
from ..discover import stat_entry
from ..graph import identifier_multiplier
from ..model import REF, Diagnostic, Tag
from ..registry import PluginConfig, PluginSet
from ..stages import RepositoryTables, current_tables, warm_up
from ..state import RepositoryState, StateOptions
from .paths import ToolError, resolve_root, safe_relative
from .quiet import WhenQuiet
from .tools import ToolSpec, check_arguments, tool_specs, unknown_tool

log = logging.getLogger(__name__)

#: repository states kept open at once (the least recently used is closed)
MAX_STATES = 8
#: seconds without a call before the answered maps are stored (see Service._save_later)
SAVE_DELAY = 0.2
DOCSTRING_CHARS = 400
FUZZY_CANDIDATES = 10


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    cache_dir: str | None = None
    use_cache: bool = True
    python_backend: str = "ast"
    watch: bool = True
    jobs: int | None = None
    #: build the ranking state in the background after a map replayed from the cache
    warm_up: bool = True
    #: honour .gitignore files: None as git does (in a work tree only), True, False
    gitignore: bool | None = None


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool answered: structured data, and whether it is an error (MCP ``isError``)."""

    data: dict[str, Any]
    is_error: bool = False


class Service:
    """Answers tool calls from one repository state per root (see :mod:`repomapper.state`).
    Calls are serialised (one lock): a state is not thread-safe."""

    def __init__(
        self,
        root: str | os.PathLike[str] | None = None,
        options: ServiceOptions | None = None,
        plugins: PluginSet | None = None,
    ):
        self.options = options or ServiceOptions()
        self.root: Path | None = None
        if root is not None:
            self.root = resolve_root(os.path.abspath(str(root)), None)
        self.plugins = plugins or PluginSet(
            PluginConfig(python_backend=self.options.python_backend)
        )
        self.specs: dict[str, ToolSpec] = {s.name: s for s in tool_specs(self.root is not None)}
        self._states: OrderedDict[Path, RepositoryState] = OrderedDict()
        self._packers: dict[Path, Any] = {}
        self._lock = threading.Lock()
        self._warming: set[Path] = set()
        self._saver = WhenQuiet(self._lock, self._save)
        #: called after background work (the warm-up, storing maps) as after a call; the MCP
        #: server sets it to freeze what that work left alive (see repomapper.gcpolicy)
        self.settle: Callable[[], None] | None = None

    # -- plumbing --------------------------------------------------------------------------------
    def state(self, root: Path) -> RepositoryState:
        """The repository state of ``root``, made (and watched) on first use; the least recently
        used one is closed when more than ``MAX_STATES`` are open."""
        st = self._states.get(root)
        if st is None:
            st = RepositoryState(
                root,
                StateOptions(
                    cache_dir=self.options.cache_dir,
                    use_cache=self.options.use_cache,
                    plugins=self.plugins,
                    jobs=self.options.jobs,
                    gitignore=self.options.gitignore,
                ),
            )
            st.memo_later = True  # stored after the answer (see _save_later)
            if self.options.watch:
                st.watch()
            self._states[root] = st
            while len(self._states) > MAX_STATES:
                old_root, old = self._states.popitem(last=False)
                self._close_state(old_root, old)
        self._states.move_to_end(root)
        return st

    def tables(self, root: Path) -> RepositoryTables:
        """The lookup tables of ``root`` as the tree is now."""
        return current_tables(self.state(root))

    def _close_state(self, root: Path, state: RepositoryState) -> None:
        packer = self._packers.pop(root, None)
        if packer is not None:
            packer.close()
        state.close()

    def close(self) -> None:
        """Close every state (its watcher, worker and cache; storing what it kept) and every
        packer."""
        self._saver.close()
        with self._lock:
            while self._states:
                root, state = self._states.popitem(last=False)
                self._close_state(root, state)
            for packer in self._packers.values():
                packer.close()
            self._packers.clear()

    # -- dispatch --------------------------------------------------------------------------------
    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        """Answer one tool call; bad input and failures become error results, never exceptions."""
        try:
            spec = self.specs.get(name)
            if spec is None:
                raise unknown_tool(name)
            args = check_arguments(spec, arguments)
            with self._lock:
                try:
                    return self._answer(name, args)
                finally:
                    self._saver.call_ended()
        except ToolError as exc:
            return ToolResult({"error": exc.to_dict()}, True)
        except Exception as exc:
            log.exception("tool %s failed", name)
            return ToolResult(
                {"error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}, True
            )

    def _answer(self, name: str, args: dict[str, Any]) -> ToolResult:
        if name == "repo_map":
            env = self.repo_map(args)
            self._warm_later()
            self._save_later()
            return ToolResult(env.to_dict(), env.is_error)
        root = resolve_root(args.pop("clone_path"), self.root)
        if name == "context_pack":
            return ToolResult(self.context_pack(root, **args))
        handler = getattr(self, name)
        return ToolResult(handler(self.tables(root), **args))

    def _warm_later(self) -> None:
        """After a map replayed from the cache nothing is extracted or ranked yet, so the first
        call after an edit would build everything. A background thread builds each cold
        state's ranking now (holding the lock, as a call would), while the agent reads the
        answer."""
        cold = [r for r, st in self._states.items() if not st.warm and r not in self._warming]
        if not cold or not self.options.warm_up:
            return
        self._warming.update(cold)

        def warm() -> None:
            for root in cold:
                with self._lock:
                    try:
                        state = self._states.get(root)
                        if state is not None and not state.closed:
                            warm_up(state)
                    except Exception as exc:  # a later call reports real problems
                        log.debug("warming %s failed: %s", root, exc)
                    finally:
                        self._warming.discard(root)
            self._settled()

        threading.Thread(target=warm, name="repomapper-warm-up", daemon=True).start()

    def _settled(self) -> None:
        if self.settle is not None:
            try:
                self.settle()
            except Exception as exc:
                log.debug("settling after background work failed: %s", exc)

    def _save_later(self) -> None:
        """Store the maps just answered in the cache from a background thread once calls
        pause (:data:`SAVE_DELAY` seconds after the last one ended; see
        :class:`~repomapper.serve.quiet.WhenQuiet`), so that writing them is part of no
        answer's time."""
        if any(st.unsaved_maps for st in self._states.values()):
            self._saver.ask(SAVE_DELAY)

    def _save(self) -> None:
        for st in list(self._states.values()):
            try:
                if st.unsaved_maps and not st.closed:
                    st.save()
            except Exception as exc:  # the cache reports its own problems
                log.debug("storing the maps of %s failed: %s", st.root, exc)
        self._settled()

    # -- tools -----------------------------------------------------------------------------------
    def repo_map(self, args: dict[str, Any]) -> Envelope:
        from ..contract import envelope
        from ..contract.run import _reason

        try:
            root = resolve_root(args.get("clone_path"), self.root)
            req = parse_request({**args, "clone_path": str(root)})
        except ToolError as exc:
            return envelope.error(
                envelope.Reason(
                    exc.code,
                    exc.message,
                    exc.detail.get("field"),
                    exc.detail.get("value"),
                    exc.detail.get("suggestion"),
                )
            )
        except ContractError as exc:
            return envelope.error(_reason(exc))
        return map_with(self.state(root), req)

    def find_symbol(
        self, idx: RepositoryTables, name: str, kind: str | None, limit: int, offset: int
    ) -> dict[str, Any]:
        base = name.rsplit(".", 1)[-1]
        scope = name.rsplit(".", 1)[0] if "." in name else None
        match = "exact"
        tags = _defs(idx, base, scope, kind)
        if not tags:
            lowered = base.lower()
            names = sorted(n for n in idx.defined_names() if n.lower() == lowered)
            tags = [t for n in names for t in _defs(idx, n, scope, kind)]
            match = "case_insensitive"
        suggestions: list[str] = []
        if not tags:
            match = "fuzzy"
            candidates = _fuzzy(base, idx.defined_names())
            tags = [t for n in candidates for t in _defs(idx, n, None, kind)]
            suggestions = candidates
        tags.sort(
            key=lambda t: (
                0
                if match == "exact"
                else suggestions.index(t.name)
                if t.name in suggestions
                else 0,
                t.file_path.count("/"),
                t.file_path,
                t.start_line,
            )
        )
        page = tags[offset : offset + limit]
        out = {
            "name": name,
            "match": match if tags else "none",
            "total": len(tags),
            "results": [_symbol(t, idx) for t in page],
            **_more(len(tags), offset, len(page)),
        }
        if not tags:
            out["message"] = (
                f"no definition named {name!r} among {len(idx.table.defines)} defined names in "
                f"{len(idx.mapped)} mapped files; nothing close either"
            )
        elif match == "fuzzy":
            out["message"] = (
                f"no definition named {name!r}; the closest names: {', '.join(suggestions)}"
            )
        return out

    def find_references(
        self, idx: RepositoryTables, name: str, max_lines_per_file: int, limit: int, offset: int
    ) -> dict[str, Any]:
        base = name.rsplit(".", 1)[-1]
        refs = idx.references(base)
        ranked = sorted(refs.items(), key=lambda x: (-x[1], x[0]))
        page = ranked[offset : offset + limit]
        lines: dict[str, list[int]] = {}
        if max_lines_per_file and page:
            full = idx.full_extraction([p for p, _ in page])
            for path, ex in full.items():
                found = sorted(
                    {
                        t.start_line
                        for t in ex.tags
                        if t.kind == REF and t.name == base and t.start_line
                    }
                )
                lines[path] = found
        results = []
        for path, count in page:
            entry: dict[str, Any] = {"path": path, "count": count}
            if max_lines_per_file:
                found = lines.get(path, [])
                entry["lines"] = found[:max_lines_per_file]
                if len(found) > max_lines_per_file:
                    entry["lines_truncated"] = True
            results.append(entry)
        out = {
            "name": name,
            "total_files": len(ranked),
            "total_uses": sum(refs.values()),
            "defined_in": idx.definers(base),
            "results": results,
            **_more(len(ranked), offset, len(page)),
        }
        if not ranked:
            near = _fuzzy(base, idx.table.references.keys())
            out["message"] = f"no file uses {base!r}" + (
                f"; names close to it: {', '.join(near)}" if near else ""
            )
        return out

    def file_outline(
        self, idx: RepositoryTables, path: str, limit: int, offset: int
    ) -> dict[str, Any]:
        rel = self._known_file(idx, path)
        fs = idx.files[rel]
        defs = sorted(fs.definitions, key=lambda t: (t.start_line, t.end_line, t.name))
        page = defs[offset : offset + limit]
        out = {
            "path": rel,
            "language": fs.language,
            "backend": fs.plugin,
            "total": len(defs),
            "definitions": [
                {
                    "name": t.name,
                    "qualified_name": t.qualified_name,
                    "kind": str(t.symbol_kind),
                    "line": t.start_line,
                    "end_line": t.end_line,
                    "scope": t.scope,
                    "signature": t.signature,
                }
                for t in page
            ],
            "imports": [
                {
                    "source": ("." * i.level) + i.source,
                    "names": list(i.names),
                    "line": i.line_number,
                }
                for i in fs.imports[:100]
            ],
            "diagnostics": [d.to_dict() for d in fs.diagnostics],
            **_more(len(defs), offset, len(page)),
        }
        if not defs:
            why = (
                "; ".join(f"[{d.code}] {d.message}" for d in fs.diagnostics)
                or "the backend found none"
            )
            out["message"] = f"no definitions in {rel}: {why}"
        return out

    def related_files(self, idx: RepositoryTables, path: str, limit: int) -> dict[str, Any]:
        rel = self._known_file(idx, path)
        forward, backward = idx.imports, idx.importers_of(rel)
        fs = idx.files[rel]
        uses: dict[str, dict[str, float]] = {}
        for ident, count in fs.references:  # files defining the names this file uses
            definers = idx.definers(ident)
            if not definers or rel in definers:
                continue
            w = identifier_multiplier(ident, len(definers), frozenset()) * math.sqrt(count)
            for d in definers:
                uses.setdefault(d, {})[ident] = w
        used_by: dict[str, dict[str, float]] = {}
        for ident in {t.name for t in fs.definitions}:  # files using the names this file defines
            definers = idx.definers(ident)
            for r, count in idx.references(ident).items():
                if r == rel or r in definers:
                    continue
                w = identifier_multiplier(ident, len(definers), frozenset()) * math.sqrt(count)
                used_by.setdefault(r, {})[ident] = w

        def ranked(rows: dict[str, dict[str, float]]) -> list[dict[str, Any]]:
            items = sorted(rows.items(), key=lambda x: (-sum(x[1].values()), x[0]))
            return [
                {
                    "path": p,
                    "weight": round(sum(names.values()), 6),
                    "names": [n for n, _ in sorted(names.items(), key=lambda x: (-x[1], x[0]))[:5]],
                }
                for p, names in items[:limit]
            ]

        def counted(rows: Mapping[str, int]) -> list[dict[str, Any]]:
            return [
                {"path": p, "count": n}
                for p, n in sorted(rows.items(), key=lambda x: (-x[1], x[0]))[:limit]
            ]

        neighbours: dict[str, float] = {}
        for rows in (uses, used_by):
            for p, names in rows.items():
                neighbours[p] = neighbours.get(p, 0.0) + sum(names.values())
        for counts in (forward.get(rel, {}), backward):
            for p, n in counts.items():
                neighbours[p] = neighbours.get(p, 0.0) + math.sqrt(n)
        totals = {
            "imports": len(forward.get(rel, {})),
            "imported_by": len(backward),
            "uses_names_from": len(uses),
            "names_used_by": len(used_by),
            "neighbours": len(neighbours),
        }
        out = {
            "path": rel,
            "imports": counted(forward.get(rel, {})),
            "imported_by": counted(backward),
            "uses_names_from": ranked(uses),
            "names_used_by": ranked(used_by),
            "neighbours": [
                {"path": p, "weight": round(w, 6)}
                for p, w in sorted(neighbours.items(), key=lambda x: (-x[1], x[0]))[:limit]
            ],
            "totals": totals,
        }
        if any(n > limit for n in totals.values()):
            out["next"] = f"lists are cut at limit={limit}; raise limit (up to 100) for more"
        return out

    def context_pack(
        self, root: Path, task_id: str, task: str, targets: list[str], role: str, budget: int
    ) -> dict[str, Any]:
        """The context pack of a task (not written to a file: the answer is the pack)."""
        from ..pack import PackError, RepoMapper

        mapper = self._packers.get(root)
        if mapper is None:  # reads the root's state (no second one); closed with it
            from ..repomap import RepoMap

            mapper = RepoMapper(root, repomap=RepoMap(root, state=self.state(root)), write=False)
            self._packers[root] = mapper
        else:
            self.state(root)  # the packer's state is the most recently used
        rel = [safe_relative(root, t, "targets") for t in targets]
        try:
            pack = mapper.generate_context_pack_sync(task_id, task, rel, role, budget)
        except PackError as exc:
            raise ToolError("invalid_input", str(exc)) from None
        return pack.to_dict()

    def _known_file(self, idx: RepositoryTables, path: str) -> str:
        rel = safe_relative(idx.root, path)
        if rel in idx.files:
            return rel
        full = idx.root / rel
        if full.is_dir():
            raise ToolError(
                "invalid_input",
                f"path {rel!r} is a directory; give a file",
                field="path",
                value=path,
            )
        if not os.path.lexists(full):
            near = difflib.get_close_matches(rel, list(idx.files), n=3, cutoff=0.6)
            hint = f"; did you mean {', '.join(map(repr, near))}?" if near else ""
            raise ToolError(
                "not_found",
                f"no file {rel!r} in {idx.root}{hint}",
                field="path",
                value=path,
                suggestion=near[0] if near else None,
            )
        found = stat_entry(idx.root, rel, idx.max_file_size)
        why = (
            found.message
            if isinstance(found, Diagnostic)
            else "not listed by discovery (ignored by .gitignore?)"
        )
        if rel in idx.entries:
            why = "no backend could map it (see repomapper plugins)"
        raise ToolError(
            "not_mapped", f"{rel!r} is not in the index: {why}", field="path", value=path
        )


def _defs(idx: RepositoryTables, name: str, scope: str | None, kind: str | None) -> list[Tag]:
    tags = idx.definitions(name)
    if scope is not None:
        tags = [t for t in tags if t.scope == scope or t.scope.endswith("." + scope)]
    if kind:
        tags = [t for t in tags if str(t.symbol_kind) == kind]
    return tags


def _fuzzy(name: str, names: Iterable[str]) -> list[str]:
    """Close names, ignoring case: difflib's ratio first, then names containing the query
    (shortest first)."""
    by_lower: dict[str, list[str]] = {}
    for n in names:
        by_lower.setdefault(n.lower(), []).append(n)
    low = name.lower()
    close = difflib.get_close_matches(low, list(by_lower), n=FUZZY_CANDIDATES, cutoff=0.75)
    if len(close) < FUZZY_CANDIDATES and len(low) >= 3:
        contains = sorted(
            (n for n in by_lower if low in n and n not in close), key=lambda n: (len(n), n)
        )
        close += contains[: FUZZY_CANDIDATES - len(close)]
    return [n for lower in close for n in sorted(by_lower[lower])][:FUZZY_CANDIDATES]


def _symbol(t: Tag, idx: RepositoryTables) -> dict[str, Any]:
    doc = t.docstring
    if doc is not None and len(doc) > DOCSTRING_CHARS:
        doc = doc[:DOCSTRING_CHARS] + "…"
    return {
        "path": t.file_path,
        "line": t.start_line,
        "end_line": t.end_line,
        "name": t.name,
        "qualified_name": t.qualified_name,
        "kind": str(t.symbol_kind),
        "scope": t.scope,
        "signature": t.signature,
        "docstring": doc,
        "language": idx.files[t.file_path].language if t.file_path in idx.files else None,
    }


def _more(total: int, offset: int, returned: int) -> dict[str, Any]:
    nxt = offset + returned
    if nxt < total:
        return {
            "truncated": True,
            "next_offset": nxt,
            "next": f"{total - nxt} more: call again with offset={nxt}",
        }
    return {"truncated": False}
