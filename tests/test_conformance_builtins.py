"""Every built-in backend against the conformance suite, one test per plugin and language.

``KNOWN_FAILURES`` lists the pairs that fail today with what the suite reports; they are strict
xfails, so fixing a backend makes its entry fail until it is removed here. Goldens are not
edited to make a backend pass: a golden is changed only when it is wrong about the fixture.
"""

from __future__ import annotations

import pytest

from repomapper.conformance import run_conformance
from repomapper.conformance.corpus import builtin_corpus
from repomapper.conformance.runner import plan_for
from repomapper.registry import BUILTIN_PLUGINS, PYTHON_BACKENDS, PluginConfig, PluginSet

EXAMPLES = 5
#: Languages whose generated-input properties run here too; for the other (extra-grammar)
#: languages the test checks fixtures and goldens only, to keep the suite fast, and CI's
#: ``repomapper conformance`` runs every property over every installed language.
PROPERTIES_HERE = frozenset(
    {"python", "typescript", "tsx", "javascript", "go", "c", "rust", "ruby"}
)

#: Plugins whose properties only CI's ``repomapper conformance`` step runs: the libcst backend
#: is 25-30x slower than ast, and its properties alone took a sixteenth of the suite's minute.
PROPERTIES_ELSEWHERE = frozenset({"python_libcst"})

#: (plugin, language) -> what the suite reports, for pairs that fail today. Empty: every
#: built-in passes. Add an entry only with the suite's message and an issue to fix the backend.
KNOWN_FAILURES: dict[tuple[str, str], str] = {}


def _plugin_set(name: str) -> PluginSet:
    backend = {n: k for k, n in PYTHON_BACKENDS.items()}.get(name, "ast")
    return PluginSet(PluginConfig(load_entry_points=False, python_backend=backend))


def _pairs():
    corpus = builtin_corpus()
    for name, _ in BUILTIN_PLUGINS:
        plugin_set = _plugin_set(name)
        info = plugin_set.infos.get(name)
        if info is None or not info.available:
            yield pytest.param(name, None, marks=pytest.mark.skip(reason=f"{name} unavailable"))
            continue
        for plan in plan_for(name, info, [corpus]):
            marks = []
            if (name, plan.language) in KNOWN_FAILURES:
                reason = KNOWN_FAILURES[(name, plan.language)]
                marks.append(pytest.mark.xfail(strict=True, reason=reason))
            yield pytest.param(name, plan.language, marks=marks, id=f"{name}-{plan.language}")


@pytest.mark.parametrize(("plugin", "language"), list(_pairs()))
def test_builtin_backend_is_conformant(plugin, language):
    report = run_conformance(
        _plugin_set(plugin),
        plugin,
        language=language,
        examples=EXAMPLES,
        properties=plugin not in PROPERTIES_ELSEWHERE
        and (plugin != "treesitter" or language in PROPERTIES_HERE),
    )
    assert report.ok, "\n".join(report.failures())


def test_every_shipped_language_has_a_builtin_backend():
    covered = set()
    for name, _ in BUILTIN_PLUGINS:
        plugin_set = _plugin_set(name)
        info = plugin_set.infos.get(name)
        if info is not None and info.available:
            covered |= {p.language for p in plan_for(name, info, [builtin_corpus()])}
    assert covered >= {"python", "typescript", "tsx", "javascript", "go", "rust", "ruby", "c"}
