"""Answer a repo.map request: validate, map, classify the outcome, build the envelope."""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..discover import DEFAULT_MAX_FILE_SIZE, DiscoveryError, GlobError
from ..model import MapResult
from ..registry import PluginSet
from . import envelope
from .backends import has_suffix, install_hint, resolve_languages
from .envelope import Envelope, Reason
from .request import DEFAULT_TOKEN_BUDGET, ContractError, MapRequest, parse_request

if TYPE_CHECKING:
    from ..state import RepositoryState

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class MapOptions:
    """How to run maps (not part of the request an agent sends): cache, exclusions, plugins."""

    cache_dir: str | os.PathLike[str] | None = None
    use_cache: bool = True
    exclude: tuple[str, ...] = ()
    max_file_size: int = DEFAULT_MAX_FILE_SIZE
    jobs: int | None = None
    #: honour .gitignore files: None as git does (in a work tree only), True, False
    gitignore: bool | None = None
    plugins: PluginSet | None = None
    progress: Callable[..., Any] | None = None
    #: a :class:`~repomapper.timings.StageTimer` to record the stages in (``--timings``)
    timer: Any = None


def make_state(request: MapRequest, options: MapOptions | None = None) -> RepositoryState:
    """A repository state for ``request`` (imported lazily: building one loads the plugins)."""
    from ..state import RepositoryState, StateOptions

    o = options or MapOptions()
    return RepositoryState(
        request.clone_path,
        StateOptions(
            cache_dir=o.cache_dir,
            use_cache=o.use_cache,
            plugins=o.plugins,
            max_file_size=o.max_file_size,
            jobs=o.jobs,
            progress=o.progress,
            gitignore=o.gitignore,
        ),
        o.timer,
    )


def run_map(
    request: Mapping[str, Any] | MapRequest,
    options: MapOptions | None = None,
    *,
    default_root: str | None = None,
) -> Envelope:
    """The library entry point of the contract: a request (a JSON-like mapping or a
    :class:`MapRequest`) in, an :class:`Envelope` out. Never raises for bad input."""
    if isinstance(request, MapRequest):
        budget = request.token_budget
    else:
        raw = request.get("token_budget") if isinstance(request, Mapping) else None
        if raw is None:
            budget = DEFAULT_TOKEN_BUDGET
        elif isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw <= 10**9:
            budget = raw
        else:
            budget = 0
    try:
        req = parse_request(request, default_root=default_root)
    except ContractError as exc:
        return envelope.error(_reason(exc), token_budget=budget)
    try:
        state = make_state(req, options)
    except (DiscoveryError, GlobError, ValueError) as exc:
        return envelope.error(Reason("invalid_input", str(exc)), token_budget=req.token_budget)
    try:
        return map_with(state, req, (options or MapOptions()).exclude)
    finally:
        state.close()


#: the request field a glob option stands for
_GLOB_FIELDS = {"--include": "include_globs", "--exclude": "exclude_globs"}


def _reason(exc: ContractError) -> Reason:
    return Reason(exc.code, exc.message, exc.field, exc.value, exc.suggestion, exc.install)


def map_with(state: RepositoryState, req: MapRequest, exclude: tuple[str, ...] = ()) -> Envelope:
    """Answer ``req`` from a repository state of ``req.clone_path`` (the MCP server keeps them
    warm); ``exclude`` adds globs to the request's ``exclude_globs`` (from the options)."""
    from ..settings import MapSettings, Selection
    from ..stages import map_repository

    counter_name = getattr(state.counter, "name", "")
    exclude = tuple(req.exclude_globs) + tuple(g for g in exclude if g not in req.exclude_globs)
    try:
        selection = Selection(req.include_globs, exclude)
        if req.languages:
            suffixes = resolve_languages(req.languages, state.plugins)
            entries, _, seen = state.collect(selection)
            other_files = [e.path for e in entries if has_suffix(e.path, suffixes)]
            if not other_files:
                msg = (
                    f"no file under {req.clone_path} is in {list(req.languages)} "
                    f"({len(entries)} file(s) matched include_globs {list(req.include_globs)}; {seen} seen)"
                )
                return envelope.Envelope(
                    outcome="empty",
                    reason=Reason("no_files_matched", msg),
                    tokenizer=counter_name,
                    token_budget=req.token_budget,
                    counts={"files_seen": seen},
                    next="widen languages or include_globs",
                )
            selection = Selection(req.include_globs, exclude, tuple(other_files))
        settings = MapSettings(
            budget=req.token_budget,
            selection=selection,
            chat_files=tuple(req.chat_files),
            mentioned_files=tuple(req.mentioned_files),
            mentioned_idents=tuple(req.mentioned_idents),
            task=req.task,
        )
        result = map_repository(settings, state)
    except ContractError as exc:
        return envelope.error(_reason(exc), token_budget=req.token_budget, tokenizer=counter_name)
    except (DiscoveryError, GlobError) as exc:
        return envelope.error(
            Reason(
                "invalid_input",
                str(exc),
                _GLOB_FIELDS.get(exc.what, "include_globs")
                if isinstance(exc, GlobError)
                else "clone_path",
            ),
            token_budget=req.token_budget,
            tokenizer=counter_name,
        )
    except Exception as exc:  # an internal failure is an error outcome, never an empty success
        log.exception("repo.map failed for %s", req.clone_path)
        return envelope.error(
            Reason("internal", f"{type(exc).__name__}: {exc}"),
            token_budget=req.token_budget,
            tokenizer=counter_name,
        )
    reason = classify(result, req, state.plugins)
    if reason is not None and reason.code in envelope.ERROR_CODES:
        return envelope.error(
            reason,
            token_budget=result.budget,
            tokenizer=result.tokenizer,
            diagnostics=result.diagnostics,
        )
    return envelope.from_result(result, max_ranked=req.max_ranked, reason=reason)


def classify(result: MapResult, req: MapRequest, plugins: PluginSet) -> Reason | None:
    """None for a useful map; otherwise why it is empty (or an internal error)."""
    codes = {d.code for d in result.diagnostics}
    mapped = int(result.extra.get("files_mapped", 0))
    seen = int(result.extra.get("files_seen", result.files_total))
    if result.map:
        if not result.ranked_symbols and mapped and not result.chat_files:
            return Reason(
                "no_symbols",
                f"{mapped} file(s) were mapped but none defines a symbol; the map lists "
                "file names only",
            )
        return None
    if result.files_total == 0:
        where = (
            f"include_globs {list(req.include_globs)}" if req.include_globs else "no include_globs"
        )
        unlisted = sum(
            d.code == "unreadable" and (d.path or "").endswith("/") for d in result.diagnostics
        )
        return Reason(
            "no_files_matched",
            f"no file to map under {req.clone_path}: {seen} file(s) seen, {where}"
            + (f", languages {list(req.languages)}" if req.languages else "")
            + (
                f"; {unlisted} folder(s) could not be listed (see the diagnostics)"
                if unlisted
                else ""
            ),
        )
    if mapped == 0:
        unavailable = envelope.diagnostic_file_count(result.diagnostics, "backend_unavailable")
        no_backend = envelope.diagnostic_file_count(result.diagnostics, "no_backend")
        if unavailable:
            missing = [n for n, i in plugins.infos.items() if not i.available]
            details = "; ".join(f"{n}: {plugins.infos[n].detail or 'unavailable'}" for n in missing)
            return Reason(
                "all_backends_missing",
                f"{result.files_total} file(s) matched; {unavailable} need a backend that is unavailable "
                f"({details}) and {no_backend} have no backend for their type",
                install=install_hint(missing),
            )
        if no_backend >= result.files_total:
            return Reason(
                "no_backend",
                f"{result.files_total} file(s) matched but no backend handles their types "
                "(see the no_backend diagnostic for the extensions; `repomapper plugins` lists backends)",
            )
        return Reason(
            "extraction_failed",
            f"{result.files_total} file(s) matched but none could be extracted "
            "(see the diagnostics: parse errors, backend errors, unreadable files)",
        )
    if "budget_too_small" in codes:
        return Reason(
            "budget_too_small",
            f"a token_budget of {result.budget} cannot hold even the first entry; "
            "raise token_budget",
        )
    if "nothing_to_map" in codes and result.chat_files:
        return Reason(
            "all_in_chat", f"all {mapped} mapped file(s) are chat files, which the map leaves out"
        )
    return Reason(
        "internal",
        f"the map is empty without a known cause ({mapped} file(s) mapped); please report it",
    )
