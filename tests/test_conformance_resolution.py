"""The conformance suite's import-resolution check (conformance/resolution.py): the built-in
backend passes the shipped cases, a wrong resolver fails with the edges it got wrong, and a
plugin that declares no resolution is not failed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repomapper.conformance import run_conformance
from repomapper.conformance.report import FAIL, NOT_CLAIMED, PASS
from repomapper.conformance.resolution import CHECK
from repomapper.conformance.testing import isolated_plugin_set
from repomapper.hookspecs import hookimpl
from repomapper.model import BackendInfo, Import
from repomapper.registry import PluginConfig, PluginSet


@pytest.mark.parametrize("language", ["java", "csharp", "ruby", "php", "c", "go"])
def test_the_tree_sitter_backend_resolves_the_shipped_cases(language):
    plugin_set = PluginSet(PluginConfig(load_entry_points=False))
    if language not in {lang.lower() for lang in plugin_set.infos["treesitter"].languages}:
        pytest.skip(f"no {language} grammar installed")
    report = run_conformance(plugin_set, "treesitter", language=language, properties=False)
    assert report.ok, "\n".join(report.failures())
    [result] = report.results
    check = result.check(CHECK)
    assert check is not None and check.status == PASS
    assert check.expected > 0 and check.matched == check.expected


class ToyWithoutResolution:
    """A backend for ``.toy`` files, where ``use NAME`` lines are imports; it declares no
    import resolution (no ``resolve_import``)."""

    @hookimpl
    def backend_info(self) -> BackendInfo:
        return BackendInfo("toy", "1", ("toy",), (".toy",), ("imports",))

    @hookimpl
    def extract_tags(self, source):
        return []

    @hookimpl
    def extract_imports(self, source):
        return [
            Import(source.path, line.split()[1], (), False, n)
            for n, line in enumerate(source.data.decode().splitlines(), 1)
            if line.startswith("use ")
        ]


class Toy(ToyWithoutResolution):
    """The same with a resolver: ``a.b`` is ``a/b.toy``, or (``everything``) a wrong one that
    links each import to every file."""

    def __init__(self, mode: str):
        self.mode = mode

    @hookimpl
    def resolve_import(self, imp, index):
        if self.mode == "everything":
            return sorted(f for f in index.files if f != imp.file_path)
        target = f"{imp.source.replace('.', '/')}.toy"
        return [target] if target in index.files else []


def toy_corpus(root: Path) -> Path:
    files = {
        "fixtures/toy/a.toy": "use lib.b\n",
        "goldens/toy/a.toy.json": json.dumps(
            {"imports": [{"source": "lib.b", "names": [], "line": 1}]}
        ),
        "goldens/resolution/toy/repo/app/main.toy": "use lib.b\nuse std.io\n",
        "goldens/resolution/toy/repo/lib/b.toy": "",
        "goldens/resolution/toy/repo/app/std/io.toy": "",
        "goldens/resolution/toy/expected.json": json.dumps(
            {
                "imports": [
                    {"from": "app/main.toy", "source": "lib.b", "to": ["lib/b.toy"]},
                    {"from": "app/main.toy", "source": "std.io", "to": []},
                ]
            }
        ),
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def toy_report(tmp_path: Path, plugin: object):
    return run_conformance(
        isolated_plugin_set("toy", plugin),
        "toy",
        fixtures_dir=toy_corpus(tmp_path / "corpus"),
        properties=False,
    )


def test_a_correct_resolver_passes(tmp_path):
    report = toy_report(tmp_path, Toy("exact"))
    assert report.ok, "\n".join(report.failures())
    check = report.results[0].check(CHECK)
    assert check.status == PASS and (check.expected, check.matched) == (1, 1)


def test_a_resolver_that_links_everything_fails_with_the_wrong_edges(tmp_path):
    report = toy_report(tmp_path, Toy("everything"))
    assert not report.ok
    check = report.results[0].check(CHECK)
    assert check.status == FAIL and check.false_positives == 3
    failures = "\n".join(report.failures())
    assert "app/main.toy: 'std.io' resolved to app/std/io.toy, not expected" in failures


def test_a_plugin_without_resolve_import_is_not_failed(tmp_path):
    report = toy_report(tmp_path, ToyWithoutResolution())
    assert report.ok, "\n".join(report.failures())
    assert report.results[0].check(CHECK).status == NOT_CLAIMED
    assert "import resolution" in next(n for n in report.notes() if "not claimed" in n)


def test_an_unreadable_case_is_an_error_not_a_silent_pass(tmp_path):
    root = toy_corpus(tmp_path / "corpus")
    (root / "goldens/resolution/toy/expected.json").write_text("{not json")
    report = run_conformance(
        isolated_plugin_set("toy", Toy("exact")), "toy", fixtures_dir=root, properties=False
    )
    assert not report.ok
    assert any("unusable resolution case" in line for line in report.failures())
