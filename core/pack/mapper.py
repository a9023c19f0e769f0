"""``RepoMapper``: context packs for agent tasks, read from the repository state of a ``RepoMap``
(its ranking, summaries, symbol table and import edges; see :mod:`repomapper.pack.view`)."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..discover import check_root
from ..fileentry import FileEntry
from ..model import Diagnostic
from ..ranked import RankedRepository
from ..registry import PluginSet
from ..repomap import RepoMap, summarise
from ..stages.tables import current_tables
from ..tokens import TokenCounter, as_counter
from .budget import Filled, fill, order
from .links import SymbolLinks
from .models import AgentRole, ContextPack, DependencyInfo, PackSymbol, split_symbol_id, symbol_id
from .roles import RolePolicy, policy_for
from .select import BodyBudget, Selection, select
from .settings import PackError, PackSettings
from .store import atomic_write, check_task_id, content_digest, dumps, file_set_digest, git_state
from .view import StateView

log = logging.getLogger(__name__)

#: most dependencies listed in a pack (the shallowest first)
MAX_PACK_DEPENDENCIES = 500
#: files listed per symbol in a pack's ``symbols[].references`` (the first, in path order)
MAX_LISTED_REFERRERS = 20


@dataclass(frozen=True)
class _Request:
    """One pack's checked input."""

    task_id: str
    task: str
    targets: list[str]
    policy: RolePolicy
    budget: int


@dataclass(frozen=True)
class _Version:
    """What the pack says of the repository's version: git's HEAD (or a content digest), its
    commit date, and a digest of the file set."""

    state: str
    date: str | None
    file_set: str


class RepoMapper:
    """Generate context packs for the repository at ``repo_path``.

    Settings are arguments, else the environment (``CONTEXT_PACK_DIR``,
    ``DEFAULT_TOKEN_BUDGET``, ``MAX_DEPENDENCY_DEPTH``, ``MIN_RELEVANCE_SCORE``), else the
    design's defaults. Nothing is written into the repository unless asked: a pack is returned,
    and written to ``<pack_dir>/<task_id>.json`` only when a pack directory was given
    (``pack_dir`` or ``CONTEXT_PACK_DIR``; ``write`` defaults to whether one was). A pack is
    read from the RepoMap's repository state (its summaries, symbol table, import edges and
    ranking); between packs the mapper keeps only what the last one read of that state, while
    the state is the same, and stores nothing. A pack directory given under the root is left
    out of the files mapped.

    ``repomap``: an open :class:`RepoMap` of the same root to read from (its state), which
    stays the caller's to close; the settings that belong to a RepoMap (``use_cache``,
    ``cache_dir``, ``plugins``, ``include``, ``exclude``) are then its own and may not be given. Without it the mapper makes one, which :meth:`close` (or the
    end of a ``with`` block) closes.
    """

    def __init__(
        self,
        repo_path: str | os.PathLike[str] = ".",
        *,
        pack_dir: str | os.PathLike[str] | None = None,
        token_budget: int | None = None,
        max_dependency_depth: int | None = None,
        min_relevance_score: float | None = None,
        token_counter: TokenCounter | Callable[[str], int] | None = None,
        use_cache: bool | None = None,
        cache_dir: str | os.PathLike[str] | None = None,
        plugins: PluginSet | None = None,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        write: bool | None = None,
        env: Mapping[str, str] | None = None,
        repomap: RepoMap | None = None,
    ):
        self.root = check_root(Path(repo_path))
        self.settings = PackSettings.resolve(
            self.root,
            pack_dir=pack_dir,
            token_budget=token_budget,
            max_dependency_depth=max_dependency_depth,
            min_relevance_score=min_relevance_score,
            env=env,
        )
        if self.settings.pack_dir is not None:
            _stay_inside("the pack directory", self.settings.pack_dir, self.root)
        if write and self.settings.pack_dir is None:
            raise PackError("write=True needs a pack directory (pack_dir or CONTEXT_PACK_DIR)")
        self.write = self.settings.pack_dir is not None if write is None else write
        self._owns_repomap = repomap is None
        self._own = self._own_files()
        #: the links of the last pack, reused while the state is the same (see ``_links``)
        self._kept: SymbolLinks | None = None
        if repomap is not None:
            _check_shared(repomap, self.root, use_cache, cache_dir, plugins, include, exclude)
            self.repomap = repomap
            self.counter = repomap.counter if token_counter is None else as_counter(token_counter)
        else:
            self.counter = as_counter(token_counter)
            self.repomap = RepoMap(
                self.root,
                use_cache=True if use_cache is None else use_cache,
                cache_dir=cache_dir,
                token_counter=self.counter,
                plugins=plugins,
                include=include,
                exclude=(*exclude, *self._own),
            )

    def close(self) -> None:
        """Close the RepoMap this mapper made (its state: cache connection, worker); one given
        to it is left open for its owner. What the last pack read of the state is dropped."""
        self._kept = None
        if self._owns_repomap:
            self.repomap.close()

    def __enter__(self) -> RepoMapper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _own_files(self) -> list[str]:
        """Exclusion globs for the pack directory the caller put under the root: our own output
        is not mapped, nor does writing it change the file set."""
        p = self.settings.pack_dir
        if p is None:
            return []
        try:
            rel = p.resolve().relative_to(self.root).as_posix()
        except (ValueError, OSError):
            return []
        return [f"/{rel}/"]

    # -- what a pack reads -----------------------------------------------------------------------
    def _left_out(self, entries: Sequence[FileEntry]) -> set[str]:
        """The files of a RepoMap given to us that are our own output: left out of what a pack
        selects and of its file set, or every pack written would change the next one."""
        if self._owns_repomap or not self._own:
            return set()
        own = [g.strip("/") for g in self._own]
        return {e.path for e in entries if any(_under(e.path, o) for o in own)}

    def _version(self, entries: Sequence[FileEntry]) -> _Version:
        sha, date = git_state(self.root)
        state = sha if sha else content_digest(self.root, entries)
        return _Version(state, date, file_set_digest(entries, state))

    def _links(self, ranked: RankedRepository, left_out: set[str]) -> SymbolLinks:
        """The links of the state ``ranked`` was ranked on: those of the last pack while the
        state is the same (what they read of it, computed per file as walks reach it, holds
        while no summary changed), else new ones."""
        kept = self._kept
        if kept is not None and kept.view.reads_as(ranked, left_out):
            return kept
        graph = self.repomap.graph_state
        index = graph.index if graph is not None else None
        view = StateView.of_ranked(self.repomap.state, ranked, index, left_out)
        self._kept = SymbolLinks(view)
        return self._kept

    def links(self) -> SymbolLinks:
        """The dependencies between the repository's definitions as it is now, read from the
        state's current tables (``links().get_dependencies("a.py::f", max_depth=3)``)."""
        tables = current_tables(self.repomap.state, self.repomap.selection)
        left_out = self._left_out(list(tables.entries.values()))
        return SymbolLinks(StateView.of_tables(self.repomap.state, tables, left_out))

    # -- targets ---------------------------------------------------------------------------------
    def check_targets(self, targets: Sequence[str | os.PathLike[str]]) -> list[str]:
        """Targets as paths relative to the root; one outside the root, missing or not a regular
        file is a :class:`PackError` naming it."""
        out: list[str] = []
        for t in targets:
            raw = os.fspath(t)
            if not raw or "\0" in raw:
                raise PackError(f"target {raw!r} is not a path")
            p = Path(raw)
            if not p.is_absolute():
                p = self.root / p
            try:
                rel = p.resolve().relative_to(self.root)
            except ValueError:
                raise PackError(f"target {raw} is outside the repository {self.root}") from None
            except OSError as exc:
                raise PackError(f"target {raw}: {exc}") from None
            if not (self.root / rel).is_file():
                raise PackError(f"target {raw} does not exist or is not a regular file")
            if rel.as_posix() not in out:
                out.append(rel.as_posix())
        return out

    # -- packs -----------------------------------------------------------------------------------
    def generate_context_pack_sync(
        self,
        task_id: str,
        task_description: str,
        target_files: Sequence[str | os.PathLike[str]] = (),
        role: AgentRole | str = AgentRole.CODING,
        token_budget: int | None = None,
    ) -> ContextPack:
        """The pack for a task (see :mod:`repomapper.pack`); written to
        ``<pack_dir>/<task_id>.json`` only when the mapper writes (see the class).
        ``token_budget`` defaults to ``DEFAULT_TOKEN_BUDGET`` (100 000)."""
        request = self._request(task_id, task_description, target_files, role, token_budget)
        started = time.perf_counter()
        ranked = self.repomap.rank(task=task_description or None, mentioned_fnames=request.targets)
        left_out = self._left_out(ranked.entries)
        links = self._links(ranked, left_out)
        view = links.view
        s = self.settings
        # selection prices the targets shown in full, which filling counts again (the texts
        # are this pack's, let go with it)
        count = functools.lru_cache(maxsize=None)(self.counter.count)
        selection = select(
            links,
            ranked,
            request.targets,
            request.policy,
            s.max_dependency_depth,
            s.min_relevance_score,
            BodyBudget(request.budget, count),
        )
        filled = fill(view, selection.candidates, request.policy, request.budget, count)
        entries = [e for e in ranked.entries if e.path not in left_out]
        pack = self._pack(request, view, selection, filled, self._version(entries), ranked)
        log.info(
            "pack %s: %d files, %d tokens in %.2fs",
            task_id,
            len(filled.files),
            filled.tokens,
            time.perf_counter() - started,
        )
        if self.write:
            self.write_pack(pack)
        return pack

    def _request(
        self,
        task_id: str,
        task: str,
        target_files: Sequence[str | os.PathLike[str]],
        role: AgentRole | str,
        token_budget: int | None,
    ) -> _Request:
        """The request checked: a plain task id, a known role, a budget of at least 1, targets
        inside the root (each refusal a :class:`PackError` or ``ValueError`` naming it)."""
        check_task_id(task_id)
        policy = policy_for(role)
        budget = self.settings.token_budget if token_budget is None else int(token_budget)
        if budget < 1:
            raise PackError(f"the token budget must be at least 1 (got {budget})")
        return _Request(task_id, task, self.check_targets(target_files), policy, budget)

    def _pack(
        self,
        request: _Request,
        view: StateView,
        selection: Selection,
        filled: Filled,
        version: _Version,
        ranked: RankedRepository,
    ) -> ContextPack:
        """The pack of what was selected and filled, with its metadata and diagnostics."""
        diags = list(ranked.diagnostics)
        diags.extend(_unmapped(view, request.targets))
        included = {f.path for f in filled.files}
        if not filled.files:
            diags.append(self._why_empty(view, selection, filled, request.budget))
        metadata = self._describe(request, version)
        metadata.update(_left_out_of(view, selection, filled))
        return ContextPack(
            request.task_id,
            request.policy.role.value,
            version.state,
            filled.files,
            _pack_symbols(view, selection, filled, included),
            _pack_dependencies(selection, included),
            metadata,
            filled.tokens,
            {p: c.score for p, c in sorted(selection.candidates.items())},
            summarise(diags),
        )

    def _describe(self, request: _Request, version: _Version) -> dict[str, Any]:
        """The pack's metadata: the task, and how the pack was made."""
        s = self.settings
        policy = request.policy
        return {
            "task": request.task,
            "targets": request.targets,
            "budget": request.budget,
            "tokenizer": self.counter.name,
            "tokens_exact": self.counter.exact,
            "generated_at": version.date,
            "repository_state": "git"
            if not version.state.startswith("digest:")
            else "content_digest",
            "file_set": version.file_set,
            "relevance_threshold": s.min_relevance_score,
            "settings": s.to_dict(),
            "role_policy": {
                "target_mode": policy.target_mode,
                "other_mode": policy.other_mode,
                "dependency_bodies": policy.dependency_bodies,
                "dependent_depth": policy.dependent_depth,
                "relevance_files": policy.relevance_files,
            },
        }

    async def generate_context_pack(
        self,
        task_id: str,
        task_description: str,
        target_files: Sequence[str | os.PathLike[str]] = (),
        role: AgentRole | str = AgentRole.CODING,
        token_budget: int | None = None,
    ) -> ContextPack:
        """The async twin of :meth:`generate_context_pack_sync` (runs in a worker thread)."""
        return await asyncio.to_thread(
            self.generate_context_pack_sync,
            task_id,
            task_description,
            target_files,
            role,
            token_budget,
        )

    def pack_path(self, task_id: str) -> Path:
        if self.settings.pack_dir is None:
            raise PackError("no pack directory was given (pack_dir or CONTEXT_PACK_DIR)")
        return self.settings.pack_dir / f"{check_task_id(task_id)}.json"

    def write_pack(self, pack: ContextPack) -> Path:
        path = self.pack_path(pack.task_id)
        atomic_write(path, dumps(pack.to_dict()))
        return path

    def _why_empty(
        self, view: StateView, selection: Selection, filled: Filled, budget: int
    ) -> Diagnostic:
        if not view.mapped and not selection.candidates:
            return Diagnostic(
                "nothing_to_map", "no file of the repository could be mapped", severity="error"
            )
        if not selection.candidates:
            return Diagnostic(
                "nothing_selected",
                "no target was given and nothing in the repository matches the task"
                + (
                    f" above MIN_RELEVANCE_SCORE ({self.settings.min_relevance_score})"
                    if selection.cut
                    else ""
                ),
                severity="error",
            )
        if any(o["reason"] == "budget" for o in filled.omitted):
            return Diagnostic(
                "budget_too_small",
                f"a budget of {budget} tokens cannot hold even the signatures of the first file; raise the budget",
                severity="error",
            )
        return Diagnostic(
            "nothing_readable", "none of the files selected could be read", severity="error"
        )


def _stay_inside(what: str, path: Path, root: Path) -> None:
    """A path under the root (lexically) must stay there once symlinks are followed: a
    repository must not redirect our writes (``context -> ~/.ssh``)."""
    try:
        path.relative_to(root)
    except ValueError:
        return  # given outside the root on purpose
    try:
        path.resolve().relative_to(root)
    except (ValueError, OSError):
        raise PackError(
            f"{what} {path} leads outside the repository through a symlink; refusing to write there"
        ) from None


def _unmapped(view: StateView, targets: Sequence[str]) -> list[Diagnostic]:
    """A target no backend extracted is in the pack as text only: say so."""
    return [
        Diagnostic(
            "target_not_mapped",
            "no backend extracted symbols from this target; included as text only",
            t,
            severity="info",
        )
        for t in targets
        if t not in view.mapped
    ]


def _left_out_of(view: StateView, selection: Selection, filled: Filled) -> dict[str, Any]:
    """The pack's metadata on what was considered and what was left out, and why."""
    omitted = list(filled.omitted) + [
        {"path": p, "score": sc, "reason": "below MIN_RELEVANCE_SCORE"} for p, sc in selection.cut
    ]
    return {
        "files_mapped": len(view.mapped),
        "files_considered": len(selection.candidates) + len(selection.cut),
        "omitted": omitted[:200],
        "omitted_total": len(omitted),
    }


def _pack_symbols(
    view: StateView, selection: Selection, filled: Filled, included: set[str]
) -> tuple[PackSymbol, ...]:
    """The symbols that matter in the files the pack holds, in the pack's file order, each
    with its best score, its first reasons, how much of it the pack holds and the first files
    that refer to its name (the state's symbol table)."""
    symbols: list[PackSymbol] = []
    for c in order(selection.candidates):
        if c.path not in included:
            continue
        for tag in view.definitions(c.path):
            sid = symbol_id(c.path, tag.qualified_name)
            reasons = c.matter.get(sid)
            if not reasons:
                continue
            ordered = sorted(dict.fromkeys(reasons), key=lambda x: (-x[0], x[1]))
            referrers = [p for p in view.referrers(tag.name) if p != c.path]
            symbols.append(
                PackSymbol.of_tag(
                    tag,
                    tuple(referrers[:MAX_LISTED_REFERRERS]),
                    round(ordered[0][0], 6),
                    tuple(w for _, w in ordered[:4]),
                    filled.shown.get(sid, "listed"),
                )
            )
    return tuple(symbols)


def _pack_dependencies(selection: Selection, included: set[str]) -> tuple[DependencyInfo, ...]:
    """The edges between files the pack holds (the shallowest ``MAX_PACK_DEPENDENCIES``)."""
    return tuple(
        d
        for d in selection.dependencies
        if split_symbol_id(d.from_symbol)[0] in included
        and split_symbol_id(d.to_symbol)[0] in included
    )[:MAX_PACK_DEPENDENCIES]


def _check_shared(
    rm: RepoMap,
    root: Path,
    use_cache: bool | None,
    cache_dir: object,
    plugins: object,
    include: Sequence[str],
    exclude: Sequence[str],
) -> None:
    """A RepoMap given to the mapper must be of its root and comes with its own settings."""
    if rm.root != root:
        raise PackError(f"the RepoMap given maps {rm.root}, not this mapper's repository {root}")
    given = [
        name
        for name, value in (
            ("use_cache", use_cache is not None),
            ("cache_dir", cache_dir is not None),
            ("plugins", plugins is not None),
            ("include", bool(include)),
            ("exclude", bool(exclude)),
        )
        if value
    ]
    if given:
        raise PackError(
            f"{', '.join(given)}: settings of the RepoMap given; set them on that RepoMap"
        )


def _under(path: str, prefix: str) -> bool:
    return path == prefix or path.startswith(prefix + "/")
