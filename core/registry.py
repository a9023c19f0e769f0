"""The plugin registry: built-in backends, entry-point plugins, blocking, routing order."""

from __future__ import annotations

import functools
import importlib
import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from . import hookspecs
from .hookcall import CountingPluginManager, HookCalls, is_wrapper
from .isolation.limits import Limits
from .model import BackendInfo, Diagnostic, split_name

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "repomapper"
#: Set to 1/true/yes to skip loading plugins from the ``repomapper`` entry-point group.
ENV_NO_ENTRY_POINTS = "REPOMAPPER_NO_ENTRY_POINTS"
#: Comma-separated plugin names never to register.
ENV_BLOCK = "REPOMAPPER_BLOCK_PLUGINS"
#: Comma-separated ``name=module`` plugins to load besides entry points (a plugin author's
#: plugin under development, before it has an entry point).
ENV_PLUGINS = "REPOMAPPER_PLUGINS"

#: Built-in backends, registered by name exactly as an entry-point plugin would be. Registration
#: order matters: pluggy calls the last registered first, so entry-point plugins (registered after
#: these) take precedence over every built-in.
BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("python_ast", "repomapper.plugins.python.ast_backend"),
    ("python_libcst", "repomapper.plugins.python.libcst_backend"),
    ("treesitter", "repomapper.plugins.treesitter"),
    ("templates", "repomapper.plugins.templates"),
    ("ctags", "repomapper.plugins.ctags.backend"),
)

#: The hooks a plugin may implement, by name.
_HOOKS = tuple(
    sorted(n for n in dir(hookspecs) if hasattr(getattr(hookspecs, n), "repomapper_spec"))
)

#: Python backends selectable with ``--python-backend``; the others are blocked.
PYTHON_BACKENDS = {"ast": "python_ast", "libcst": "python_libcst"}


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def _env_modules() -> tuple[tuple[str, str], ...]:
    out = []
    for item in os.environ.get(ENV_PLUGINS, "").split(","):
        name, sep, module = item.strip().partition("=")
        if sep and name.strip() and module.strip():
            out.append((name.strip(), module.strip()))
        elif item.strip():
            log.warning("%s: %r is not name=module; ignored", ENV_PLUGINS, item.strip())
    return tuple(out)


def _given(obj: Any) -> Any:
    """A plugin object given as it is (what loading it gives)."""
    return obj


def _describe_failure(exc: BaseException) -> str:
    if isinstance(exc, SystemExit):
        return f"raised SystemExit({exc.code!r}) while loading"
    return f"{type(exc).__name__}: {exc}"


@dataclass(frozen=True)
class PluginConfig:
    """How to assemble the plugin manager. Defaults come from the environment."""

    load_entry_points: bool = field(default_factory=lambda: not _env_flag(ENV_NO_ENTRY_POINTS))
    blocked: tuple[str, ...] = field(
        default_factory=lambda: tuple(
            n.strip() for n in os.environ.get(ENV_BLOCK, "").split(",") if n.strip()
        )
    )
    python_backend: str = "ast"
    #: Extra plugin objects to register (after built-ins and entry points), name -> object.
    extra: tuple[tuple[str, Any], ...] = ()
    #: Extra plugin modules to import and register, (name, module), checked as entry points are.
    modules: tuple[tuple[str, str], ...] = field(default_factory=lambda: _env_modules())
    #: What a plugin may cost (time per hook call, tags per file, failures in a row).
    limits: Limits = field(default_factory=Limits.from_env)

    def all_blocked(self) -> frozenset[str]:
        if self.python_backend not in PYTHON_BACKENDS:
            raise ValueError(
                f"unknown Python backend {self.python_backend!r}; choose one of "
                f"{', '.join(sorted(PYTHON_BACKENDS))}"
            )
        unused = {n for k, n in PYTHON_BACKENDS.items() if k != self.python_backend}
        return frozenset(self.blocked) | unused


def _names_type(info: BackendInfo, name: str, suffix: str) -> bool:
    """Whether a backend claims this file by its type (its extensions and file names, or the
    languages of a ``"*"`` backend such as ctags), rather than only through ``"*"``."""
    if "*" not in info.extensions or name in info.filenames:
        return True
    return bool(suffix) and any(suffix in exts for _, exts in info.language_extensions)


def backend_info_problem(info: Any) -> str | None:
    """What is wrong with a ``backend_info`` answer, or None."""
    if not isinstance(info, BackendInfo):
        return f"returned {type(info).__name__}, not a BackendInfo"
    if not isinstance(info.name, str) or not isinstance(info.version, str):
        return "has a name or version that is not a string"
    for field_name in ("languages", "extensions", "filenames", "capabilities"):
        value = getattr(info, field_name)
        if not _strings(value):
            return f"has {field_name} that is not a tuple of strings: {value!r}"[:200]
    pairs = info.language_extensions
    if not isinstance(pairs, tuple | list) or not all(
        isinstance(p, tuple | list) and len(p) == 2 and isinstance(p[0], str) and _strings(p[1])
        for p in pairs
    ):
        return f"has language_extensions that are not (language, extensions) pairs: {pairs!r}"[:200]
    rows = info.installable
    if not isinstance(rows, tuple | list) or not all(
        isinstance(r, tuple | list)
        and len(r) == 3
        and isinstance(r[0], str)
        and _strings(r[1])
        and isinstance(r[2], str)
        for r in rows
    ):
        return (
            f"has installable that is not (language, extensions, how to install) rows: {rows!r}"
        )[:200]
    return None


def _strings(value: Any) -> bool:
    return isinstance(value, tuple | list) and all(isinstance(v, str) for v in value)


class PluginSet:
    """A configured pluggy manager plus what the core derives from it for routing."""

    def __init__(self, config: PluginConfig | None = None):
        self.config = config or PluginConfig()
        self.pm = CountingPluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.calls = HookCalls(self.pm)
        self.load_errors: list[tuple[str, str]] = []
        blocked = self.config.all_blocked()
        for name in blocked:
            self.pm.set_blocked(name)
        for name, module in BUILTIN_PLUGINS:
            if name not in blocked:
                self._register(
                    name, functools.partial(importlib.import_module, module), "built-in plugin"
                )
        if self.config.load_entry_points:
            self._load_entry_points(blocked)
        for name, module in self.config.modules:
            if name not in blocked and self.pm.get_plugin(name) is None:
                self._register(
                    name,
                    functools.partial(importlib.import_module, module),
                    f"plugin module {module}",
                )
        for name, obj in self.config.extra:
            if name not in blocked:
                self._register(name, functools.partial(_given, obj), "plugin")
        self._check_hook_names()
        self._infos: dict[str, BackendInfo] | None = None
        self._route_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self._filenames: frozenset[str] | None = None
        self._fingerprints: dict[tuple[str, ...], str] = {}
        self._route_fingerprints: dict[tuple[str, str], str] = {}

    def _load_entry_points(self, blocked: frozenset[str]) -> None:
        from importlib.metadata import entry_points

        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if ep.name in blocked or self.pm.get_plugin(ep.name) is not None:
                continue
            self._register(ep.name, ep.load, f"entry point {ep.value}")

    def _register(self, name: str, load: Callable[[], Any], what: str) -> None:
        """Import and register one plugin; any failure (``SystemExit`` included) leaves it out
        with a load error, and the others carry on."""
        try:
            self.pm.register(load(), name=name)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:
            self._left_out(name, f"{what} failed to load: {_describe_failure(exc)}")

    def _left_out(self, name: str, reason: str) -> None:
        log.warning("plugin %s left out: %s", name, reason)
        self.load_errors.append((name, reason))
        plugin = self.pm.get_plugin(name)
        if plugin is not None:
            self.pm.unregister(plugin, name=name)

    def _check_hook_names(self) -> None:
        """What pluggy's ``check_pending`` checks, per plugin: an implementation of a hook that
        does not exist (a misspelled name) would never be called; the plugin is left out."""
        unknown: dict[str, list[str]] = {}
        for hook_name, caller in sorted(vars(self.pm.hook).items()):
            if (
                hook_name.startswith("_")
                or not hasattr(caller, "get_hookimpls")
                or caller.has_spec()
            ):
                continue
            for impl in caller.get_hookimpls():
                if not impl.opts.get("optionalhook"):
                    unknown.setdefault(impl.plugin_name, []).append(hook_name)
        known = ", ".join(_HOOKS)
        for name, hooks in sorted(unknown.items()):
            self._left_out(
                name,
                f"implements unknown hook(s) {', '.join(hooks)} (misspelled? the hooks are: {known})",
            )

    def load_diagnostics(self) -> list[Diagnostic]:
        """One diagnostic per plugin that was left out (import failure, unknown hook, a wrong
        ``backend_info``)."""
        _ = self.infos  # a wrong backend_info is found here
        return [
            Diagnostic("plugin_load_error", f"plugin {name} left out: {reason}", None, "warning")
            for name, reason in self.load_errors
        ]

    # -- declarations ---------------------------------------------------------------------
    def call_order(self) -> list[str]:
        """The backends' names in the order pluggy calls ``extract_tags`` (first asked first):
        the plugins that implement an extraction hook. A wrapper is not a backend."""
        names: list[str] = []
        for hook_name in ("extract_tags", "extract_imports"):
            for impl in reversed(getattr(self.pm.hook, hook_name).get_hookimpls()):
                if not is_wrapper(impl) and impl.plugin_name not in names:
                    names.append(impl.plugin_name)
        return names

    def implements(self, name: str, hook_name: str) -> bool:
        """Whether the named plugin answers the hook (a wrapper of it does not count)."""
        impls = getattr(self.pm.hook, hook_name).get_hookimpls()
        return any(i.plugin_name == name and not is_wrapper(i) for i in impls)

    def wrapper_plugins(self) -> frozenset[str]:
        """The plugins that wrap any hook."""
        return frozenset(w for h in _HOOKS for w in self.calls.wrappers(h))

    @property
    def infos(self) -> dict[str, BackendInfo]:
        """name -> declaration, for every registered backend, in call order."""
        if self._infos is None:
            infos: dict[str, BackendInfo] = {}
            for name in self.call_order():
                info = None
                if self.implements(name, "backend_info"):
                    try:
                        info = self.call_first("backend_info", [name])[1]
                    except KeyboardInterrupt:
                        raise
                    except BaseException as exc:
                        log.warning("plugin %s: backend_info failed: %s", name, exc)
                        info = BackendInfo(
                            name, "?", (), (), (), available=False, detail=_describe_failure(exc)
                        )
                if info is None:
                    info = BackendInfo(name, "?", (), ("*",), ())
                problem = backend_info_problem(info)
                if problem is not None:
                    self._left_out(name, f"backend_info {problem}")
                    continue
                infos[name] = info
            self._infos = infos
        return self._infos

    def _route(self, rel_path: str) -> tuple[str, str]:
        """What routing a file depends on: its suffix, and its name when a backend claims that
        name (every file with the same route has the same candidates)."""
        name, suffix = split_name(rel_path)
        if self._filenames is None:
            self._filenames = frozenset(f for i in self.infos.values() for f in i.filenames)
        return suffix, name if name in self._filenames else ""

    def candidates(self, rel_path: str) -> tuple[str, ...]:
        """Backends that claim ``rel_path``, in the order they are asked."""
        key = self._route(rel_path)
        found = self._route_cache.get(key)
        if found is None:
            name, suffix = split_name(rel_path)
            claims = [
                (n, _names_type(i, name, suffix))
                for n, i in self.infos.items()
                if i.claims(rel_path)
            ]
            # "*" is a fallback: a backend that names the file's type is asked before it
            found = tuple(n for n, named in claims if named) + tuple(
                n for n, named in claims if not named
            )
            self._route_cache[key] = found
        return found

    def routing_key(self) -> str:
        """What :meth:`fingerprint` depends on besides a file's path: every backend in call
        order with what it declares, and the hooks' wrappers. Plugin sets with equal keys give
        every path the same fingerprint."""
        infos = [info.to_dict() for info in self.infos.values()]
        wrappers = self.calls.wrapper_key(_HOOKS)
        return json.dumps({"backends": infos, "wrappers": wrappers}, sort_keys=True, default=str)

    def fingerprint(self, rel_path: str) -> str:
        """Identifies the backends that would answer for ``rel_path`` (the tag cache key);
        remembered per route (asked for every file of every map)."""
        key = self._route(rel_path)
        fp = self._route_fingerprints.get(key)
        if fp is None:
            names = self.candidates(rel_path)
            fp = self._fingerprints.get(names)
            if fp is None:
                fp = ";".join(f"{n}@{self.infos[n].version}" for n in names)
                if names:  # what a wrapper does to a backend's answer is part of the answer
                    fp += self.calls.wrapper_key(_HOOKS)
                self._fingerprints[names] = fp
            self._route_fingerprints[key] = fp
        return fp

    # -- calling ---------------------------------------------------------------------------
    def call_first(
        self,
        hook_name: str,
        names: Sequence[str],
        *,
        skip: frozenset[str] = frozenset(),
        **kwargs: Any,
    ) -> tuple[str | None, Any]:
        """Ask the named backends in turn, through pluggy's hook caller, and return the first
        that answers (not ``None``) with its answer: ``(name, result)``, ``(None, None)`` when
        none does.

        Each backend is asked by one pluggy call restricted to its own implementation plus the
        wrappers (``wrapper=True``, old-style ``hookwrapper=True``) of every plugin not in
        ``skip``, so a wrapper sees, and may replace or change, each routed backend's answer;
        what the call returns, wrappers included, is that backend's answer (a wrapper that
        turns a backend's ``None`` into a value answers for it). A wrapper is not a backend:
        it never claims a file, is never asked without a backend, and runs once per backend
        asked. ``names`` picks the backends, pluggy's order asks them: the last registered
        first, ``tryfirst``/``trylast`` respected (extraction asks one backend per call, in
        :meth:`candidates` order). A named plugin that does not implement the hook is skipped
        (it is not called with only the wrappers). Implementations get the hook's arguments
        they declare, as pluggy passes them. For a hook
        that is not first-result, the first non-``None`` item of pluggy's list is the answer.
        (A plugin that both answers a hook and wraps it, through pluggy's ``specname``, is left
        out of other backends' calls whole: its wrapper wraps its own answers only.)

        Exceptions propagate to the caller, which turns them into diagnostics;
        :meth:`culprit` tells whose implementation raised.
        """
        for name, caller, first in self.calls.routed(hook_name, tuple(names), skip):
            result = caller(**kwargs)
            if not first:
                result = _first_item(result)
            if result is not None:
                return name, result
        return None, None

    def call_each(
        self,
        hook_name: str,
        names: Iterable[str],
        *,
        skip: frozenset[str] = frozenset(),
        **kwargs: Any,
    ) -> None:
        """Call each named backend's implementation of the hook, each inside the wrappers as
        :meth:`call_first` does, in pluggy's order."""
        for _, caller, _ in self.calls.routed(hook_name, tuple(names), skip):
            caller(**kwargs)

    def culprit(self, exc: BaseException, hook_name: str, routed: str) -> str:
        """Whose implementation of ``hook_name`` raised ``exc`` in a call routed to
        ``routed``: that backend, or the plugin of a wrapper around it."""
        return self.calls.culprit(exc, hook_name, routed)

    def wrappers(self, hook_name: str, skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """The plugins not in ``skip`` with a wrapper of the hook, in pluggy's call order."""
        return self.calls.wrappers(hook_name, skip)


def _first_item(result: Any) -> Any:
    """A non-first-result hook's answer: the first non-``None`` item of pluggy's list (a
    wrapper may have replaced the list; then what it returned)."""
    if isinstance(result, list):
        return next((r for r in result if r is not None), None)
    return result
