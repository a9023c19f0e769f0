"""The plugin registry: built-in backends, entry-point plugins, blocking, routing order."""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pluggy

from . import hookspecs
from .model import BackendInfo, split_name

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "repomapper"
#: Set to 1/true/yes to skip loading plugins from the ``repomapper`` entry-point group.
ENV_NO_ENTRY_POINTS = "REPOMAPPER_NO_ENTRY_POINTS"
#: Comma-separated plugin names never to register.
ENV_BLOCK = "REPOMAPPER_BLOCK_PLUGINS"

#: Built-in backends, registered by name exactly as an entry-point plugin would be. Registration
#: order matters: pluggy calls the last registered first, so entry-point plugins (registered after
#: these) take precedence over every built-in.
BUILTIN_PLUGINS: tuple[tuple[str, str], ...] = (
    ("python_ast", "repomapper.plugins.python_ast"),
    ("python_libcst", "repomapper.plugins.python_libcst"),
    ("treesitter", "repomapper.plugins.treesitter"),
    ("ctags", "repomapper.plugins.ctags"),
)

#: Python backends selectable with ``--python-backend``; the others are blocked.
PYTHON_BACKENDS = {"ast": "python_ast", "libcst": "python_libcst"}


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


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

    def all_blocked(self) -> frozenset[str]:
        if self.python_backend not in PYTHON_BACKENDS:
            raise ValueError(
                f"unknown Python backend {self.python_backend!r}; choose one of "
                f"{', '.join(sorted(PYTHON_BACKENDS))}"
            )
        unused = {n for k, n in PYTHON_BACKENDS.items() if k != self.python_backend}
        return frozenset(self.blocked) | unused


class PluginSet:
    """A configured pluggy manager plus what the core derives from it for routing."""

    def __init__(self, config: PluginConfig | None = None):
        self.config = config or PluginConfig()
        self.pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
        self.pm.add_hookspecs(hookspecs)
        self.load_errors: list[tuple[str, str]] = []
        blocked = self.config.all_blocked()
        for name in blocked:
            self.pm.set_blocked(name)
        for name, module in BUILTIN_PLUGINS:
            if name in blocked:
                continue
            try:
                self.pm.register(importlib.import_module(module), name=name)
            except Exception as exc:  # a broken built-in must not take the others down
                log.warning("built-in plugin %s failed to load: %s", name, exc)
                self.load_errors.append((name, str(exc)))
        if self.config.load_entry_points:
            self._load_entry_points(blocked)
        for name, obj in self.config.extra:
            if name not in blocked:
                self.pm.register(obj, name=name)
        self._infos: dict[str, BackendInfo] | None = None
        self._route_cache: dict[tuple[str, str], tuple[str, ...]] = {}
        self._filenames: frozenset[str] | None = None
        self._fingerprints: dict[tuple[str, ...], str] = {}

    def _load_entry_points(self, blocked: frozenset[str]) -> None:
        from importlib.metadata import entry_points

        for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
            if ep.name in blocked or self.pm.get_plugin(ep.name) is not None:
                continue
            try:
                self.pm.register(ep.load(), name=ep.name)
            except Exception as exc:
                log.warning("plugin %s (entry point %s) failed to load: %s", ep.name, ep.value, exc)
                self.load_errors.append((ep.name, str(exc)))

    # -- declarations ---------------------------------------------------------------------
    def call_order(self) -> list[str]:
        """Plugin names in the order pluggy calls ``extract_tags`` (first asked first)."""
        names: list[str] = []
        for hook_name in ("extract_tags", "extract_imports"):
            for impl in reversed(getattr(self.pm.hook, hook_name).get_hookimpls()):
                if impl.plugin_name not in names:
                    names.append(impl.plugin_name)
        return names

    @property
    def infos(self) -> dict[str, BackendInfo]:
        """name -> declaration, for every registered backend, in call order."""
        if self._infos is None:
            infos: dict[str, BackendInfo] = {}
            for name in self.call_order():
                info = None
                fn = self._impl(name, "backend_info")
                if fn is not None:
                    try:
                        info = fn()
                    except Exception as exc:
                        log.warning("plugin %s: backend_info failed: %s", name, exc)
                        info = BackendInfo(name, "?", (), (), (), available=False, detail=str(exc))
                if info is None:
                    info = BackendInfo(name, "?", (), ("*",), ())
                infos[name] = info
            self._infos = infos
        return self._infos

    def candidates(self, rel_path: str) -> tuple[str, ...]:
        """Backends that claim ``rel_path``, in the order they are asked."""
        name, suffix = split_name(rel_path)
        if self._filenames is None:
            self._filenames = frozenset(f for i in self.infos.values() for f in i.filenames)
        key = (suffix, name if name in self._filenames else "")
        found = self._route_cache.get(key)
        if found is None:
            found = tuple(n for n, i in self.infos.items() if i.claims(rel_path))
            self._route_cache[key] = found
        return found

    def fingerprint(self, rel_path: str) -> str:
        """Identifies the backends that would answer for ``rel_path`` (the tag cache key)."""
        names = self.candidates(rel_path)
        fp = self._fingerprints.get(names)
        if fp is None:
            fp = self._fingerprints[names] = ";".join(f"{n}@{self.infos[n].version}" for n in names)
        return fp

    # -- calling ---------------------------------------------------------------------------
    def call_first(
        self, hook_name: str, names: Sequence[str], **kwargs: Any
    ) -> tuple[str | None, Any]:
        """firstresult semantics over the named plugins, reporting which plugin answered.

        Exceptions propagate to the caller, which turns them into diagnostics.
        """
        for name in names:
            fn = self._impl(name, hook_name)
            if fn is None:
                continue
            result = fn(**kwargs)
            if result is not None:
                return name, result
        return None, None

    def _impl(self, name: str, hook_name: str) -> Any:
        """The named plugin's implementation of a hook, or None (looked up live: a plugin may be
        registered after construction, as the conformance helpers do)."""
        for impl in getattr(self.pm.hook, hook_name).get_hookimpls():
            if impl.plugin_name == name:
                return impl.function
        return None

    def call_each(self, hook_name: str, names: Iterable[str], **kwargs: Any) -> None:
        for name in names:
            fn = self._impl(name, hook_name)
            if fn is not None:
                fn(**kwargs)
