"""Hook calls through pluggy's hook caller, restricted to the backends routing chose.

The core decides which backend answers for a file (routing, then validation of each answer,
then the next backend), so a routed call is one pluggy hook call over a subset of the hook's
implementations: the routed backend's own, plus the wrappers (``wrapper=True`` and old-style
``hookwrapper=True``) every other plugin registered for the hook. The subset is pluggy's
documented :meth:`pluggy.PluginManager.subset_hook_caller` (every other plugin that implements
the hook without wrapping it is removed), so ordering, wrappers and first-result semantics are
pluggy's own. Subset callers are built once per (hook, backends, plugins left out) and rebuilt
when a plugin is registered or unregistered.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Collection
from typing import Any

import pluggy

#: One routed call: the backend, the subset caller, and whether the hook is first-result.
Routed = tuple[str, pluggy.HookCaller, bool]


def is_wrapper(impl: pluggy.HookImpl) -> bool:
    """Whether an implementation wraps the hook call (new- or old-style) instead of answering."""
    return bool(impl.wrapper or impl.hookwrapper)


class CountingPluginManager(pluggy.PluginManager):
    """pluggy's manager, counting changes to its registrations so that what was derived from
    them (the subset callers) is rebuilt after a plugin is registered or unregistered (the
    conformance helpers register the plugin under test into an existing set)."""

    def __init__(self, project_name: str) -> None:
        super().__init__(project_name)
        self.generation = 0

    def register(self, plugin: object, name: str | None = None) -> str | None:
        try:
            hash(plugin)
        except TypeError:
            plugin = PluginStandIn(plugin)
        try:
            return super().register(plugin, name)
        finally:
            self.generation += 1

    def unregister(self, plugin: object | None = None, name: str | None = None) -> Any:
        try:
            return super().unregister(plugin, name)
        finally:
            self.generation += 1


class PluginStandIn:
    """What is registered for a plugin object that cannot be hashed (a ``SimpleNamespace``, a
    dataclass instance): pluggy's subset callers keep plugins in sets. It holds the object's
    attributes, its hook implementations among them, as they were when it was registered, and
    reads any other from the object (``get_plugin`` returns it)."""

    def __init__(self, plugin: object) -> None:
        for name in dir(plugin):
            if not name.startswith("__"):
                try:
                    self.__dict__[name] = getattr(plugin, name)
                except Exception:  # a property that fails is not a hook; read it when asked
                    continue
        self.__dict__["__plugin__"] = plugin

    def __getattr__(self, name: str) -> Any:
        if "__plugin__" not in self.__dict__:  # (not yet filled in)
            raise AttributeError(name)
        return getattr(self.__dict__["__plugin__"], name)

    def __repr__(self) -> str:
        return f"<stand-in for {self.__dict__['__plugin__']!r}>"


class HookCalls:
    """The subset callers of one plugin manager, and what is known of its wrappers."""

    def __init__(self, pm: CountingPluginManager) -> None:
        self.pm = pm
        self._generation = -1
        self._routed: dict[tuple[str, tuple[str, ...], frozenset[str]], tuple[Routed, ...]] = {}
        self._wrappers: dict[tuple[str, frozenset[str]], tuple[str, ...]] = {}
        self._codes: dict[str, dict[Any, tuple[str, ...]]] = {}
        self._keys: dict[tuple[str, ...], str] = {}

    def _fresh(self) -> None:
        if self.pm.generation != self._generation:
            self._routed.clear()
            self._wrappers.clear()
            self._codes.clear()
            self._keys.clear()
            self._generation = self.pm.generation

    def routed(
        self, hook_name: str, names: tuple[str, ...], skip: frozenset[str]
    ) -> tuple[Routed, ...]:
        """One subset caller per backend of ``names`` that implements the hook (not only wraps
        it), in pluggy's call order (``tryfirst``/``trylast`` and registration order), each
        calling that backend's implementation inside every wrapper of a plugin not in
        ``skip``."""
        self._fresh()
        key = (hook_name, names, skip)
        found = self._routed.get(key)
        if found is None:
            found = self._routed[key] = self._build(hook_name, names, skip)
        return found

    def _build(
        self, hook_name: str, names: tuple[str, ...], skip: frozenset[str]
    ) -> tuple[Routed, ...]:
        hook = getattr(self.pm.hook, hook_name)
        impls = hook.get_hookimpls()  # pluggy calls the last first
        order: list[str] = []
        for impl in reversed(impls):
            name = impl.plugin_name
            if not is_wrapper(impl) and name in names and name not in skip and name not in order:
                order.append(name)
        first = bool(hook.spec and hook.spec.opts.get("firstresult"))
        out: list[Routed] = []
        for name in order:
            remove = {
                i.plugin
                for i in impls
                if i.plugin_name in skip or (i.plugin_name != name and not is_wrapper(i))
            }
            out.append((name, self.pm.subset_hook_caller(hook_name, remove), first))
        return tuple(out)

    def wrappers(self, hook_name: str, skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
        """The plugins (not in ``skip``) with a wrapper of the hook, in pluggy's call order."""
        self._fresh()
        key = (hook_name, skip)
        found = self._wrappers.get(key)
        if found is None:
            impls = reversed(getattr(self.pm.hook, hook_name).get_hookimpls())
            names = [i.plugin_name for i in impls if is_wrapper(i) and i.plugin_name not in skip]
            found = self._wrappers[key] = tuple(dict.fromkeys(names))
        return found

    def culprit(self, exc: BaseException, hook_name: str, routed: str) -> str:
        """The plugin whose implementation of the hook (answer or wrapper) raised ``exc``: the
        innermost frame of its traceback that runs one of them. ``routed`` when none does (the
        exception came from pluggy itself, say a wrapper that did not yield)."""
        self._fresh()
        codes = self._codes.get(hook_name)
        if codes is None:
            codes = {}
            for i in getattr(self.pm.hook, hook_name).get_hookimpls():
                code = getattr(i.function, "__code__", None)
                codes[code] = (*codes.get(code, ()), i.plugin_name)
            self._codes[hook_name] = codes
        found = routed
        tb = exc.__traceback__
        while tb is not None:
            owners = codes.get(tb.tb_frame.f_code)
            if owners:  # (two instances of one plugin class share its code: the routed first)
                found = routed if routed in owners else owners[0]
            tb = tb.tb_next
        return found

    def wrapper_key(self, hook_names: Collection[str]) -> str:
        """Identifies the wrappers of these hooks (the plugin, the hook and a digest of the
        source of the module that defines the wrapper): a result a wrapper may have changed
        is cached under it. Empty without wrappers."""
        self._fresh()
        hooks = tuple(sorted(hook_names))
        found = self._keys.get(hooks)
        if found is None:
            parts = [
                f"{impl.plugin_name}.{hook_name}@{_code_digest(impl.function)}"
                for hook_name in hooks
                for impl in getattr(self.pm.hook, hook_name).get_hookimpls()
                if is_wrapper(impl)
            ]
            found = self._keys[hooks] = f"+wrapped:{','.join(sorted(parts))}" if parts else ""
        return found


def _code_digest(function: Any) -> str:
    """A digest of the source of the module defining ``function`` (its helpers included), of
    the function alone when the module's is not available, else of its qualified name."""
    try:
        module = inspect.getmodule(function)
        text = inspect.getsource(module if module is not None else function)
    except (OSError, TypeError):
        try:
            text = inspect.getsource(function)
        except (OSError, TypeError):
            text = f"{getattr(function, '__module__', '')}.{getattr(function, '__qualname__', '')}"
    return hashlib.blake2b(text.encode("utf-8", "surrogateescape"), digest_size=8).hexdigest()
