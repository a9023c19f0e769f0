"""``RepoMapper``: context packs for agent tasks, on the ranking and extraction of ``RepoMap``."""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..cache import TagCache
from ..discover import FileEntry, check_root
from ..model import Diagnostic
from ..registry import PluginSet
from ..repomap import RepoMap, summarise
from ..tokens import TokenCounter, as_counter
from . import persist
from .budget import Filled, fill, order
from .context import build_ast_context
from .models import (
    AgentRole,
    ASTContext,
    ContextPack,
    DependencyInfo,
    SymbolInfo,
    split_symbol_id,
)
from .roles import RolePolicy, policy_for
from .select import Selection, select
from .settings import PackError, PackSettings
from .store import atomic_write, check_task_id, content_digest, dumps, file_set_digest, git_state

log = logging.getLogger(__name__)

#: most dependencies listed in a pack (the shallowest first)
MAX_PACK_DEPENDENCIES = 500


class RepoMapper:
    """Generate context packs for the repository at ``repo_path``.

    Settings are arguments, else the environment (``CONTEXT_PACK_DIR``, ``AST_CACHE_TTL``,
    ``DEFAULT_TOKEN_BUDGET``, ``MAX_DEPENDENCY_DEPTH``, ``MIN_RELEVANCE_SCORE``), else the
    design's defaults. Nothing is written into the repository unless asked: a pack is returned,
    and written to ``<pack_dir>/<task_id>.json`` only when a pack directory was given
    (``pack_dir`` or ``CONTEXT_PACK_DIR``; ``write`` defaults to whether one was). The AST
    context is kept in memory and in the tag cache (not with ``use_cache=False``), and in the
    file ``ast_context_path`` only when one is given. A pack directory or AST context file
    given under the root is left out of the files mapped.

    ``repomap``: an open :class:`RepoMap` of the same root to read from (its discovery,
    extraction, ranking and cache), which stays the caller's to close; the settings that belong
    to a RepoMap (``use_cache``, ``cache_dir``, ``plugins``, ``include``, ``exclude``) are then
    its own and may not be given. Without it the mapper makes one, which :meth:`close` (or the
    end of a ``with`` block) closes.
    """

    def __init__(
        self,
        repo_path: str | os.PathLike[str] = ".",
        *,
        pack_dir: str | os.PathLike[str] | None = None,
        ast_context_path: str | os.PathLike[str] | None = None,
        ast_cache_ttl: float | None = None,
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
            ast_context_path=ast_context_path,
            ast_cache_ttl=ast_cache_ttl,
            token_budget=token_budget,
            max_dependency_depth=max_dependency_depth,
            min_relevance_score=min_relevance_score,
            env=env,
        )
        for what, path in (
            ("the pack directory", self.settings.pack_dir),
            ("the AST context", self.settings.ast_context_path),
        ):
            if path is not None:
                _stay_inside(what, path, self.root)
        if write and self.settings.pack_dir is None:
            raise PackError("write=True needs a pack directory (pack_dir or CONTEXT_PACK_DIR)")
        self.write = self.settings.pack_dir is not None if write is None else write
        self._owns_repomap = repomap is None
        self._own = self._own_files()
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
        self._ctx: ASTContext | None = None
        #: where the last AST context came from: "memory", "cache", "file" or "built"
        self.last_ast_context: str = ""

    def close(self) -> None:
        """Close the RepoMap this mapper made (its cache connection and worker); one given to
        it is left open for its owner. The AST context kept in memory is dropped."""
        self._ctx = None
        if self._owns_repomap:
            self.repomap.close()

    def __enter__(self) -> RepoMapper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _own_files(self) -> list[str]:
        """Exclusion globs for the pack directory and AST context file the caller put under the
        root: our own output is not mapped, nor does writing it change the file set."""
        own = []
        s = self.settings
        for p, is_dir in ((s.pack_dir, True), (s.ast_context_path, False)):
            if p is None:
                continue
            try:
                rel = p.resolve().relative_to(self.root).as_posix()
            except (ValueError, OSError):
                continue
            own.append(f"/{rel}/" if is_dir else f"/{rel}")
            if not is_dir:
                own.append(f"/{posixpath_dir(rel)}.{p.name}.*.tmp")
        return own

    # -- the AST context -------------------------------------------------------------------------
    def _state(self) -> tuple[list[FileEntry], list[Diagnostic], str, str | None, str]:
        entries, diags, _ = self.repomap.collect(None)
        if not self._owns_repomap and self._own:
            # a RepoMap given to us maps our own output too: leave it out of the AST context
            # and its file set, or every pack written would make the next one rebuild it
            own = [g.strip("/") for g in self._own if "*" not in g]
            entries = [e for e in entries if not any(_under(e.path, o) for o in own)]
        sha, date = git_state(self.root)
        state = sha if sha else content_digest(self.root, entries)
        return entries, diags, state, date, file_set_digest(entries, state)

    def _ast_context(self, force: bool = False) -> tuple[ASTContext, list[Diagnostic], str | None]:
        entries, diags, state, date, file_set = self._state()
        ttl = self.settings.ast_cache_ttl
        ctx = self._ctx
        if (
            ctx is not None
            and ctx.git_sha == state
            and ctx.file_set == file_set
            and ttl > 0
            and not force
        ):
            self.last_ast_context = "memory"
            return ctx, diags, date
        fingerprint = self.repomap.plugins.fingerprint
        key = persist.cache_key(state, file_set, (fingerprint(e.path) for e in entries))
        cache = self.repomap.cache if self.repomap.use_cache else None
        if cache is not None and not persist.usable(cache):
            cache = None
        ctx = None
        if not force and cache is not None:
            ctx = persist.load_cached(cache, key, state, file_set, ttl)
            self.last_ast_context = "cache"
        path = self.settings.ast_context_path
        if ctx is None and not force and path is not None:
            ctx = persist.load_ast_context(path, state, file_set, ttl)
            self.last_ast_context = "file"
        if ctx is None:
            ctx = build_ast_context(self.repomap, entries, state, file_set)
            self.last_ast_context = "built"
            self._keep(ctx, cache, key, diags)
        self._ctx = ctx
        return ctx, diags, date

    def _keep(
        self, ctx: ASTContext, cache: TagCache | None, key: str, diags: list[Diagnostic]
    ) -> None:
        """Store a context just built in the tag cache, and in the file the caller named."""
        if cache is not None:
            persist.store_cached(cache, key, ctx)
        path = self.settings.ast_context_path
        if path is None:
            return
        try:
            persist.save_ast_context(path, ctx)
        except OSError as exc:
            diags.append(
                Diagnostic(
                    "ast_context_unwritable",
                    f"cannot write {path}: {exc}; the context is not kept there",
                )
            )

    def refresh_ast_context_sync(
        self, repo_path: str | os.PathLike[str] | None = None
    ) -> ASTContext:
        """Rebuild the AST context now (and store it again)."""
        self._check_repo(repo_path)
        return self._ast_context(force=True)[0]

    async def refresh_ast_context(
        self, repo_path: str | os.PathLike[str] | None = None
    ) -> ASTContext:
        return await asyncio.to_thread(self.refresh_ast_context_sync, repo_path)

    def _check_repo(self, repo_path: str | os.PathLike[str] | None) -> None:
        if repo_path is not None and Path(repo_path).resolve() != self.root:
            raise PackError(f"{repo_path} is not this mapper's repository ({self.root})")

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
        check_task_id(task_id)
        policy = policy_for(role)
        budget = self.settings.token_budget if token_budget is None else int(token_budget)
        if budget < 1:
            raise PackError(f"the token budget must be at least 1 (got {budget})")
        targets = self.check_targets(target_files)
        started = time.perf_counter()
        ctx, diags, date = self._ast_context()
        ranked = self.repomap.rank(task=task_description or None, mentioned_fnames=targets)
        diags.extend(ranked.diagnostics)
        s = self.settings
        selection = select(
            ctx, ranked, targets, policy, s.max_dependency_depth, s.min_relevance_score
        )
        filled = fill(self.root, ctx, selection.candidates, policy, budget, self.counter.count)
        diags.extend(_unmapped(ctx, targets))
        included = {f.path for f in filled.files}
        if not filled.files:
            diags.append(self._why_empty(ctx, selection, filled, budget))
        metadata = self._describe(task_description, targets, budget, date, ctx, policy)
        metadata.update(_left_out(ctx, selection, filled))
        pack = ContextPack(
            task_id,
            policy.role.value,
            ctx.git_sha,
            filled.files,
            _pack_symbols(ctx, selection, filled, included),
            _pack_dependencies(selection, included),
            metadata,
            filled.tokens,
            {p: c.score for p, c in sorted(selection.candidates.items())},
            summarise(diags),
        )
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

    def _describe(
        self,
        task: str,
        targets: list[str],
        budget: int,
        date: str | None,
        ctx: ASTContext,
        policy: RolePolicy,
    ) -> dict[str, Any]:
        """The pack's metadata: the task, and how the pack was made."""
        s = self.settings
        return {
            "task": task,
            "targets": targets,
            "budget": budget,
            "tokenizer": self.counter.name,
            "tokens_exact": self.counter.exact,
            "generated_at": date,
            "repository_state": "git"
            if not ctx.git_sha.startswith("digest:")
            else "content_digest",
            "file_set": ctx.file_set,
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
        self, ctx: ASTContext, selection: Selection, filled: Filled, budget: int
    ) -> Diagnostic:
        if not ctx.files and not selection.candidates:
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


def _unmapped(ctx: ASTContext, targets: Sequence[str]) -> list[Diagnostic]:
    """A target no backend extracted is in the pack as text only: say so."""
    return [
        Diagnostic(
            "target_not_mapped",
            "no backend extracted symbols from this target; included as text only",
            t,
            severity="info",
        )
        for t in targets
        if t not in ctx.files
    ]


def _left_out(ctx: ASTContext, selection: Selection, filled: Filled) -> dict[str, Any]:
    """The pack's metadata on what was considered and what was left out, and why."""
    omitted = list(filled.omitted) + [
        {"path": p, "score": sc, "reason": "below MIN_RELEVANCE_SCORE"} for p, sc in selection.cut
    ]
    return {
        "files_mapped": len(ctx.files),
        "files_considered": len(selection.candidates) + len(selection.cut),
        "omitted": omitted[:200],
        "omitted_total": len(omitted),
    }


def _pack_symbols(
    ctx: ASTContext, selection: Selection, filled: Filled, included: set[str]
) -> tuple[SymbolInfo, ...]:
    """The symbols that matter in the files the pack holds, in the pack's file order, each
    with its best score, its first reasons and how much of it the pack holds."""
    symbols: list[SymbolInfo] = []
    for c in order(selection.candidates):
        if c.path not in included:
            continue
        pf = ctx.files.get(c.path)
        for sym in pf.symbols if pf else ():
            reasons = c.matter.get(sym.id)
            if not reasons:
                continue
            ordered = sorted(dict.fromkeys(reasons), key=lambda x: (-x[0], x[1]))
            symbols.append(
                replace(
                    sym,
                    score=round(ordered[0][0], 6),
                    why=tuple(w for _, w in ordered[:4]),
                    included=filled.shown.get(sym.id, "listed"),
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


def posixpath_dir(rel: str) -> str:
    d = rel.rsplit("/", 1)[0] if "/" in rel else ""
    return f"{d}/" if d else ""
