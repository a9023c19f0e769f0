"""The tools' behaviour, independent of MCP: a :class:`Service` answers tool calls from live
indexes (one per repository root), and is what the MCP server wraps."""

from __future__ import annotations

import difflib
import logging
import math
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..contract.envelope import Envelope
from ..contract.request import ContractError, parse_request
from ..contract.run import map_with
from ..discover import stat_entry
from ..graph import identifier_multiplier
from ..listing import WatchedListing
from ..model import REF, Tag
from ..registry import PluginConfig, PluginSet
from .index import LiveIndex
from .paths import ToolError, resolve_root, safe_relative
from .tools import ToolSpec, check_arguments, tool_specs, unknown_tool

log = logging.getLogger(__name__)

MAX_INDEXES = 4
MAX_REPOMAPS = 8
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


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool answered: structured data, and whether it is an error (MCP ``isError``)."""

    data: dict[str, Any]
    is_error: bool = False


class Service:
    """Answers tool calls. Calls are serialised (one lock): the indexes are not thread-safe."""

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
        self._indexes: OrderedDict[Path, LiveIndex] = OrderedDict()
        self._watchers: dict[Path, Any] = {}
        self._repomaps: OrderedDict[tuple, Any] = OrderedDict()
        self._packers: OrderedDict[Path, Any] = OrderedDict()
        self._lock = threading.Lock()
        self._warming: set[int] = set()
        #: called after background work (the warm-up, storing maps) as after a call; the MCP
        #: server sets it to freeze what that work left alive (see repomapper.gcpolicy)
        self.settle: Callable[[], None] | None = None

    # -- plumbing --------------------------------------------------------------------------------
    def _repomap(self, root: Path, include: tuple[str, ...] = ()):
        from ..repomap import RepoMap

        key = (root, include)
        rm = self._repomaps.get(key)
        if rm is None:
            rm = RepoMap(
                root,
                cache_dir=self.options.cache_dir,
                use_cache=self.options.use_cache,
                plugins=self.plugins,
                include=include,
                jobs=self.options.jobs,
            )
            self._repomaps[key] = rm
            rm.memo_later = True  # stored after the answer (see _save_later)
            listing = WatchedListing(rm.root)
            if self._subscribe(root, listing.note, listing.arm):
                rm.listing = listing
            while len(self._repomaps) > MAX_REPOMAPS:
                (old_root, _), old = self._repomaps.popitem(last=False)
                if old.listing is not None:
                    self._unsubscribe(old_root, old.listing.note)
                old.close()
        self._repomaps.move_to_end(key)
        return rm

    def index(self, root: Path) -> LiveIndex:
        """The live index of ``root``, created (and watched) on first use, refreshed on each call."""
        idx = self._indexes.get(root)
        if idx is None:
            idx = LiveIndex(self._repomap(root))
            self._indexes[root] = idx
            idx.watching = self._subscribe(root, idx.mark_dirty)
            while len(self._indexes) > MAX_INDEXES:
                old_root, old_idx = self._indexes.popitem(last=False)
                self._unsubscribe(old_root, old_idx.mark_dirty)
        self._indexes.move_to_end(root)
        watcher = self._watchers.get(root)
        if watcher is not None and not watcher.running:
            idx.watching = False  # the watcher died: every call re-lists the tree
        idx.refresh()
        return idx

    def _subscribe(self, root: Path, fn, on_ready=None) -> bool:
        """Tell ``fn`` what changes under ``root`` (one watcher per root, started on first
        use); False when nothing can watch (watching is off, or watchfiles is missing)."""
        if not self.options.watch:
            return False
        from ..watch import Watcher

        watcher = self._watchers.get(root)
        if watcher is None:
            watcher = Watcher.start(root)
            if watcher is None:
                return False
            self._watchers[root] = watcher
        watcher.subscribe(fn, on_ready)
        return watcher.running

    def _unsubscribe(self, root: Path, fn) -> None:
        watcher = self._watchers.get(root)
        if watcher is not None and watcher.unsubscribe(fn) == 0:
            del self._watchers[root]
            watcher.stop()

    def close(self) -> None:
        for root in list(self._watchers):
            self._watchers.pop(root).stop()
        for rm in self._repomaps.values():
            rm.close()
        self._repomaps.clear()
        self._indexes.clear()

    # -- dispatch --------------------------------------------------------------------------------
    def call(self, name: str, arguments: Mapping[str, Any] | None) -> ToolResult:
        """Answer one tool call; bad input and failures become error results, never exceptions."""
        try:
            spec = self.specs.get(name)
            if spec is None:
                raise unknown_tool(name)
            args = check_arguments(spec, arguments)
            with self._lock:
                if name == "repo_map":
                    env = self.repo_map(args)
                    self._warm_later()
                    self._save_later()
                    return ToolResult(env.to_dict(), env.is_error)
                root = resolve_root(args.pop("clone_path"), self.root)
                if name == "context_pack":
                    return ToolResult(self.context_pack(root, **args))
                handler = getattr(self, name)
                return ToolResult(handler(self.index(root), **args))
        except ToolError as exc:
            return ToolResult({"error": exc.to_dict()}, True)
        except Exception as exc:
            log.exception("tool %s failed", name)
            return ToolResult(
                {"error": {"code": "internal", "message": f"{type(exc).__name__}: {exc}"}}, True
            )

    def _warm_later(self) -> None:
        """After a map replayed from the cache nothing is extracted or ranked yet, so the first
        call after an edit would build everything. A background thread builds the state of each
        map's RepoMap now (holding the lock, as a call would), while the agent reads the answer."""
        cold = [rm for rm in self._repomaps.values() if not rm.warm and id(rm) not in self._warming]
        if not cold or not self.options.warm_up:
            return
        self._warming.update(id(rm) for rm in cold)

        def warm() -> None:
            for rm in cold:
                with self._lock:
                    try:
                        if rm in self._repomaps.values():
                            rm.warm_up()
                    except Exception as exc:  # a later call reports real problems
                        log.debug("warming %s failed: %s", rm.root, exc)
                    finally:
                        self._warming.discard(id(rm))
            self._settled()

        threading.Thread(target=warm, name="repomapper-warm-up", daemon=True).start()

    def _settled(self) -> None:
        if self.settle is not None:
            try:
                self.settle()
            except Exception as exc:
                log.debug("settling after background work failed: %s", exc)

    def _save_later(self) -> None:
        """Store the maps just answered in the cache from a background thread (holding the
        lock, as a call would), so that writing them is not part of the answer's time."""
        pending = [rm for rm in self._repomaps.values() if rm._unsaved]
        if not pending:
            return

        def save() -> None:
            with self._lock:
                for rm in pending:
                    try:
                        rm.save_maps()
                    except Exception as exc:  # the cache reports its own problems
                        log.debug("storing the maps of %s failed: %s", rm.root, exc)
            self._settled()

        threading.Thread(target=save, name="repomapper-save-maps", daemon=True).start()

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
        return map_with(self._repomap(root, req.include_globs), req)

    def find_symbol(
        self, idx: LiveIndex, name: str, kind: str | None, limit: int, offset: int
    ) -> dict[str, Any]:
        base = name.rsplit(".", 1)[-1]
        scope = name.rsplit(".", 1)[0] if "." in name else None
        match = "exact"
        tags = _defs(idx, base, scope, kind)
        if not tags:
            lowered = base.lower()
            names = [n for n in idx.defs if n.lower() == lowered]
            tags = [t for n in names for t in _defs(idx, n, scope, kind)]
            match = "case_insensitive"
        suggestions: list[str] = []
        if not tags:
            match = "fuzzy"
            candidates = _fuzzy(base, idx.defs)
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
                f"no definition named {name!r} among {len(idx.defs)} defined names in "
                f"{len(idx.mapped)} mapped files; nothing close either"
            )
        elif match == "fuzzy":
            out["message"] = (
                f"no definition named {name!r}; the closest names: {', '.join(suggestions)}"
            )
        return out

    def find_references(
        self, idx: LiveIndex, name: str, max_lines_per_file: int, limit: int, offset: int
    ) -> dict[str, Any]:
        base = name.rsplit(".", 1)[-1]
        refs = idx.refs.get(base, {})
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
            "defined_in": sorted(idx.defs.get(base, {})),
            "results": results,
            **_more(len(ranked), offset, len(page)),
        }
        if not ranked:
            near = _fuzzy(base, idx.refs)
            out["message"] = f"no file uses {base!r}" + (
                f"; names close to it: {', '.join(near)}" if near else ""
            )
        return out

    def file_outline(self, idx: LiveIndex, path: str, limit: int, offset: int) -> dict[str, Any]:
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

    def related_files(self, idx: LiveIndex, path: str, limit: int) -> dict[str, Any]:
        rel = self._known_file(idx, path)
        forward, backward = idx.import_edges()
        fs = idx.files[rel]
        uses: dict[str, dict[str, float]] = {}
        for ident, count in fs.references:  # files defining the names this file uses
            definers = idx.defs.get(ident)
            if not definers or rel in definers:
                continue
            w = identifier_multiplier(ident, len(definers), frozenset()) * math.sqrt(count)
            for d in definers:
                uses.setdefault(d, {})[ident] = w
        used_by: dict[str, dict[str, float]] = {}
        for ident in {t.name for t in fs.definitions}:  # files using the names this file defines
            definers = idx.defs.get(ident, {})
            for r, count in idx.refs.get(ident, {}).items():
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

        def counted(rows) -> list[dict[str, Any]]:
            return [
                {"path": p, "count": n}
                for p, n in sorted(rows.items(), key=lambda x: (-x[1], x[0]))[:limit]
            ]

        neighbours: dict[str, float] = {}
        for rows in (uses, used_by):
            for p, names in rows.items():
                neighbours[p] = neighbours.get(p, 0.0) + sum(names.values())
        for rows in (forward.get(rel, {}), backward.get(rel, {})):
            for p, n in rows.items():
                neighbours[p] = neighbours.get(p, 0.0) + math.sqrt(n)
        totals = {
            "imports": len(forward.get(rel, {})),
            "imported_by": len(backward.get(rel, {})),
            "uses_names_from": len(uses),
            "names_used_by": len(used_by),
            "neighbours": len(neighbours),
        }
        out = {
            "path": rel,
            "imports": counted(forward.get(rel, {})),
            "imported_by": counted(backward.get(rel, {})),
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
        self, root: Path, task_id: str, task: str, targets: list, role: str, budget: int
    ) -> dict[str, Any]:
        """The context pack of a task (not written to a file: the answer is the pack)."""
        from ..pack import PackError, RepoMapper

        mapper = self._packers.get(root)
        if mapper is None:
            mapper = RepoMapper(
                root,
                write=False,
                cache_dir=self.options.cache_dir,
                use_cache=self.options.use_cache,
                plugins=self.plugins,
            )
            self._packers[root] = mapper
            while len(self._packers) > MAX_INDEXES:
                self._packers.popitem(last=False)
        self._packers.move_to_end(root)
        rel = [safe_relative(root, t, "targets") for t in targets]
        try:
            pack = mapper.generate_context_pack_sync(task_id, task, rel, role, budget)
        except PackError as exc:
            raise ToolError("invalid_input", str(exc)) from None
        return pack.to_dict()

    def _known_file(self, idx: LiveIndex, path: str) -> str:
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
        found = stat_entry(idx.root, rel, idx.rm.max_file_size)
        why = (
            found.message
            if hasattr(found, "message")
            else "not listed by discovery (ignored by .gitignore?)"
        )
        if rel in idx.entries:
            why = "no backend could map it (see repomapper plugins)"
        raise ToolError(
            "not_mapped", f"{rel!r} is not in the index: {why}", field="path", value=path
        )


def _defs(idx: LiveIndex, name: str, scope: str | None, kind: str | None) -> list[Tag]:
    rows = idx.defs.get(name, {})
    tags = [t for path in sorted(rows) for t in rows[path]]
    if scope is not None:
        tags = [t for t in tags if t.scope == scope or t.scope.endswith("." + scope)]
    if kind:
        tags = [t for t in tags if str(t.symbol_kind) == kind]
    return tags


def _fuzzy(name: str, names: Mapping[str, Any]) -> list[str]:
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


def _symbol(t: Tag, idx: LiveIndex) -> dict[str, Any]:
    doc = t.docstring
    truncated = doc is not None and len(doc) > DOCSTRING_CHARS
    return {
        "path": t.file_path,
        "line": t.start_line,
        "end_line": t.end_line,
        "name": t.name,
        "qualified_name": t.qualified_name,
        "kind": str(t.symbol_kind),
        "scope": t.scope,
        "signature": t.signature,
        "docstring": (doc[:DOCSTRING_CHARS] + "…") if truncated else doc,
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
