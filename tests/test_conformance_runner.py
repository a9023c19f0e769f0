"""The suite run through its library API: verdicts, messages, and the faults it must catch."""

from __future__ import annotations

import json

import pytest
from conformance_broken_plugin import FAULTS, NAME, BrokenPythonPlugin

from repomapper.conformance import run_conformance
from repomapper.conformance.corpus import builtin_corpus
from repomapper.conformance.render import render_json, render_text
from repomapper.conformance.report import FAIL, NOT_CLAIMED, PASS, WAIVED
from repomapper.conformance.runner import handles
from repomapper.conformance.testing import isolated_plugin_set
from repomapper.conformance.thresholds import Override, Threshold, threshold_for
from repomapper.hookspecs import hookimpl
from repomapper.model import BackendInfo
from repomapper.registry import PluginConfig, PluginSet

EXAMPLES = 8


def broken_report(*faults: str, examples: int = EXAMPLES):
    plugin_set = isolated_plugin_set(NAME, BrokenPythonPlugin(faults))
    return run_conformance(plugin_set, plugin=NAME, examples=examples)


@pytest.fixture(scope="module")
def healthy_report():
    return broken_report()


def test_python_ast_passes_the_python_fixtures():
    report = run_conformance(
        PluginSet(PluginConfig(load_entry_points=False)), "python_ast", examples=EXAMPLES
    )
    assert report.ok, "\n".join(report.failures())
    [result] = report.results
    assert result.language == "python"
    assert set(result.files) == {"imports.py", "shapes.py"}
    assert all(p.passed for p in result.properties)
    assert {c.check: c.status for c in result.checks}["definitions"] == PASS


def test_the_broken_plugin_without_faults_passes(healthy_report):
    # the control for the fault tests below: the faults alone make them fail
    assert healthy_report.ok, "\n".join(healthy_report.failures())


def test_off_by_one_lines_are_caught():
    report = broken_report("off_by_one")
    assert not report.ok
    [result] = report.results
    assert result.check("definitions").status == FAIL
    failures = "\n".join(report.failures())
    assert (
        "python_broken/python:   shapes.py: definition 'Shape' expected at line 27, "
        "found at line 28 (off by one?)" in failures
    )
    assert "missing definitions are reported one line below the expected line" in failures
    props = {p.name: p for p in result.properties}
    assert not props["names_on_lines"].passed
    assert "which does not contain the name" in props["names_on_lines"].message


def test_missing_imports_are_caught():
    report = broken_report("missing_imports")
    assert not report.ok
    [result] = report.results
    imports = result.check("imports")
    assert imports.status == FAIL
    assert imports.summary == (
        "imports: claims imports but found 0 of 16 expected (reported nothing)"
    )
    assert "python_broken/python:   imports.py: import of 'os' at line 2 not found" in (
        report.failures()
    )
    assert result.check("definitions").status == PASS  # only the faulty capability fails


def test_crash_on_empty_input_is_caught():
    report = broken_report("crash_on_empty")
    assert not report.ok
    [result] = report.results
    no_crash = next(p for p in result.properties if p.name == "no_crash")
    assert not no_crash.passed
    assert no_crash.message.startswith(
        "extract_tags crashed on empty input: ZeroDivisionError: division by zero"
    )
    assert "conformance_broken_plugin.py" in no_crash.message  # points at the faulty line
    # the crash does not hide the other properties: they are still checked and pass
    assert all(p.passed for p in result.properties if p.name != "no_crash")


@pytest.mark.parametrize("fault", FAULTS)
def test_every_fault_fails_the_text_report(fault):
    report = broken_report(fault, examples=0)
    text = render_text(report)
    assert "FAIL" in text and "conformance FAILED" in text
    assert json.loads(render_json(report))["ok"] is False


def test_unclaimed_capabilities_are_skipped_and_reported():
    class ImportsOnly(BrokenPythonPlugin):
        @hookimpl
        def backend_info(self):
            info = super().backend_info()
            return BackendInfo(
                info.name, info.version, info.languages, info.extensions, ("imports",)
            )

    plugin_set = isolated_plugin_set(NAME, ImportsOnly(["off_by_one"]))
    report = run_conformance(plugin_set, plugin=NAME, examples=0)
    [result] = report.results
    statuses = {c.check: c.status for c in result.checks}
    assert statuses["definitions"] == NOT_CLAIMED
    assert statuses["references"] == NOT_CLAIMED
    assert statuses["imports"] == PASS
    assert "python_broken/python: not claimed: definitions" in "\n".join(report.notes())
    # the off-by-one definitions still break a property every plugin must have
    assert not report.ok
    assert [p.name for p in result.properties if not p.passed] == ["names_on_lines"]


def test_overrides_relax_or_waive_and_are_reported(healthy_report):
    overrides = (
        Override(NAME, "python", "imports", None, "this plugin cannot see imports"),
        Override(NAME, "*", "definitions", Threshold(precision=0.5, recall=0.5), "generous"),
    )
    assert threshold_for(NAME, "python", "definitions", overrides)[0].recall == 0.5
    plugin_set = isolated_plugin_set(NAME, BrokenPythonPlugin(["missing_imports"]))
    report = run_conformance(plugin_set, plugin=NAME, examples=0, overrides=overrides)
    assert report.ok, report.failures()
    [result] = report.results
    assert result.check("imports").status == WAIVED
    notes = "\n".join(report.notes())
    assert "imports override: this plugin cannot see imports" in notes


def test_unknown_plugin_is_a_clear_failure():
    report = run_conformance(PluginSet(PluginConfig(load_entry_points=False)), "nope")
    assert not report.ok
    assert report.failures()[0].startswith("nope: no such plugin; registered: ")


def _cobol(faults=()):
    class Cobol(BrokenPythonPlugin):
        @hookimpl
        def backend_info(self):
            return BackendInfo("cobol", "1", ("cobol",), (".cbl",), ("definitions",))

    return isolated_plugin_set("cobol", Cobol(faults))


def test_plugin_without_fixtures_is_fuzzed_not_refused():
    report = run_conformance(_cobol(), "cobol", examples=4)
    [result] = report.results
    assert result.files == () and result.language == "cobol (properties only)"
    assert {p.name for p in result.properties} >= {"no_crash", "well_formed", "lines_in_file"}
    assert report.ok, report.failures()
    notes = "\n".join(report.notes())
    assert "no conformance fixtures cover its languages (cobol)" in notes
    assert "only the properties were checked" in notes


def test_plugin_without_fixtures_still_fails_its_properties():
    report = run_conformance(_cobol(["crash_on_empty"]), "cobol", examples=0)
    assert not report.ok
    [result] = report.results
    assert not next(p for p in result.properties if p.name == "no_crash").passed


def test_fixture_selection_follows_claims():
    corpus = builtin_corpus()
    c_files = corpus.files("c")
    only_c = BackendInfo("x", "1", ("c",), (".c",), ())
    assert [f.rel_path for f in handles(only_c, "c", c_files)] == ["shapes.c"]
    wildcard = BackendInfo("w", "1", ("C", "Go"), ("*",), ())
    assert len(handles(wildcard, "c", c_files)) == 2
    assert handles(wildcard, "ruby", corpus.files("ruby")) == []


def test_json_report_has_everything(healthy_report):
    data = json.loads(render_json(healthy_report))
    assert data["ok"] is True
    [result] = data["results"]
    assert {c["check"] for c in result["checks"]} >= {"definitions", "references", "imports"}
    assert {p["name"] for p in result["properties"]} == {
        "no_crash",
        "well_formed",
        "lines_in_file",
        "names_on_lines",
        "deterministic",
        "no_duplicates",
        "batch_independent",
        "linear_time",
    }
    defs = next(c for c in result["checks"] if c["check"] == "definitions")
    assert defs["precision"] == 1.0 and defs["threshold"] == {"precision": 0.9, "recall": 0.9}


def test_malformed_output_fails_without_breaking_the_suite():
    class Garbage(BrokenPythonPlugin):
        @hookimpl
        def extract_tags(self, source):
            return ["not a tag", *super().extract_tags(source)]

    report = run_conformance(isolated_plugin_set(NAME, Garbage()), NAME, examples=0)
    assert not report.ok
    [result] = report.results
    assert result.check("definitions").status == PASS  # the well-formed part is still scored
    failed = {p.name: p.message for p in result.properties if not p.passed}
    assert failed == {"well_formed": "extract_tags returned a str, not a Tag"}


# Each step of run_conformance, through the problems it reports and their order.


def _alone(name, plugin):
    """A plugin set holding ``plugin`` as ``name`` and no built-in (so that checking "every"
    plugin is quick)."""
    builtins = tuple(PluginSet(PluginConfig(load_entry_points=False)).infos)
    plugin_set = PluginSet(PluginConfig(load_entry_points=False, blocked=(*builtins, name)))
    plugin_set.pm.unblock(name)
    plugin_set.pm.register(plugin, name=name)
    return plugin_set


def _cobol_plugin(available=True, **attributes):
    class Cobol(BrokenPythonPlugin):
        @hookimpl
        def backend_info(self):
            return BackendInfo(
                "cobol",
                "1",
                ("cobol",),
                (".cbl",),
                ("definitions",),
                available=available,
                detail="" if available else "no cobc found",
            )

    plugin = Cobol(())
    for key, value in attributes.items():
        setattr(plugin, key, value)
    return plugin


def _problems(report):
    return [(p.plugin, p.message, p.fatal) for p in report.problems]


def test_a_plugin_that_failed_to_load_is_a_failure_asked_for_or_not():
    plugin_set = _alone("cobol", _cobol_plugin())
    plugin_set.load_errors.append(("ghost", "ImportError: no module named ghost"))
    asked = run_conformance(plugin_set, "ghost")
    assert _problems(asked) == [
        ("ghost", "failed to load: ImportError: no module named ghost", True)
    ]
    assert asked.results == () and not asked.ok
    every = run_conformance(plugin_set, examples=0, properties=False)
    assert _problems(every)[0] == (
        "ghost",
        "failed to load: ImportError: no module named ghost",
        True,
    )
    assert [r.plugin for r in every.results] == ["cobol"]  # the others are still checked


def test_an_unavailable_plugin_is_not_checked_and_fails_only_when_explicit():
    plugin_set = _alone("cobol", _cobol_plugin(available=False))
    message = "unavailable: no cobc found; not checked"
    assert _problems(run_conformance(plugin_set, "cobol")) == [("cobol", message, True)]
    quiet = run_conformance(plugin_set, "cobol", explicit=False)
    assert _problems(quiet) == [("cobol", message, False)] and quiet.results == ()


def test_an_unusable_shipped_corpus_is_a_problem_and_the_shared_corpora_still_run(tmp_path):
    plugin_set = _alone("cobol", _cobol_plugin(conformance_fixtures=str(tmp_path / "none")))
    report = run_conformance(plugin_set, "cobol", examples=0)
    [(plugin, message, fatal), note] = _problems(report)
    assert plugin == "cobol" and fatal
    assert message.startswith("its conformance_fixtures is unusable: ")
    assert "not a fixture corpus" in message
    assert note[1].startswith("no conformance fixtures cover its languages (cobol)")
    assert [r.language for r in report.results] == ["cobol (properties only)"]
    assert str(tmp_path) not in "".join(report.corpora)  # not recorded as a corpus run


def test_no_fixtures_for_the_language_asked_for_fails_only_when_explicit():
    plugin_set = _alone("cobol", _cobol_plugin())
    explicit = run_conformance(plugin_set, "cobol", language="python", examples=0)
    assert _problems(explicit) == [
        ("cobol", "no fixtures for language 'python' that it claims", True)
    ]
    assert explicit.results == ()
    quiet = run_conformance(plugin_set, "cobol", language="python", explicit=False)
    assert _problems(quiet) == [] and quiet.results == ()


def test_nothing_checked_is_a_failure_after_the_uncovered_languages():
    report = run_conformance(_alone("cobol", _cobol_plugin()), language="python", examples=0)
    assert _problems(report) == [
        (
            "*",
            "skipped (no installed backend claims their fixtures; install the grammar, "
            "see `repomapper plugins`): python",
            False,
        ),
        ("*", "nothing was checked (no plugin and fixture matched)", True),
    ]
    assert not report.ok


def test_a_fallback_held_back_from_a_language_is_a_note():
    plugin_set = PluginSet(PluginConfig(load_entry_points=False))
    if not plugin_set.infos["ctags"].available:
        pytest.skip("Universal Ctags is not installed")
    report = run_conformance(plugin_set, "ctags", language="java", explicit=False, examples=0)
    assert _problems(report) == [
        (
            "ctags",
            "fallback not checked on java (a dedicated backend serves them; see "
            "FALLBACK_LANGUAGES)",
            False,
        )
    ]
    assert report.results == ()


def test_a_fallback_asked_for_on_a_language_it_is_held_from_says_why():
    """``repomapper conformance --plugin ctags --language java``: one failure that says why
    nothing is checked, not a bare "nothing was checked"."""
    plugin_set = PluginSet(PluginConfig(load_entry_points=False))
    if not plugin_set.infos["ctags"].available:
        pytest.skip("Universal Ctags is not installed")
    report = run_conformance(plugin_set, "ctags", language="java", properties=False)
    [(plugin, message, fatal)] = _problems(report)
    assert plugin == "ctags" and fatal and not report.ok
    assert message.startswith("not checked on java: ctags is a fallback backend, held to ")
    assert "c, elisp, go" in message and "--language java" in message
    assert report.failures() == [f"ctags: {message}"]
