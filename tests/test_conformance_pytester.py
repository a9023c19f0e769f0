"""A plugin author's own pytest run, reproduced with pytester: the documented path works."""

from __future__ import annotations

import json
import textwrap

import pytest

pytest_plugins = ["pytester"]

PLUGIN = '''
"""A backend for 'toy' files: 'def NAME' defines, 'use NAME' references, 'load PATH' imports."""
from pathlib import Path

from repomapper import hookimpl
from repomapper.model import DEF, REF, BackendInfo, Import, Tag

SHIFT = {shift}
conformance_fixtures = Path(__file__).parent / "toy_corpus"


@hookimpl
def backend_info():
    return BackendInfo("toy", "1.0", ("toy",), (".toy",),
                       ("definitions", "references", "imports"))


def _words(source):
    for number, text in enumerate(source.data.decode("utf-8", "replace").split("\\n"), 1):
        words = text.split()
        if len(words) == 2:
            yield number, words[0], words[1]


@hookimpl
def extract_tags(source):
    return [
        Tag(source.path, n + SHIFT, n + SHIFT, name, DEF if word == "def" else REF, "function")
        for n, word, name in _words(source) if word in ("def", "use")
    ]


@hookimpl
def extract_imports(source):
    return [Import(source.path, name, (), True, n) for n, word, name in _words(source)
            if word == "load"]
'''

TEST = """
import toy_plugin
from repomapper.conformance.testing import assert_conformant


def test_toy_is_conformant():
    assert_conformant(toy_plugin, examples=15)
"""

FIXTURE = "load other.toy\ndef alpha\n# use ghost\ndef beta\nuse alpha\n"
GOLDEN = {
    "definitions": [
        {"name": "alpha", "symbol_kind": "function", "start_line": 2},
        {"name": "beta", "symbol_kind": "function", "start_line": 4},
    ],
    "references": [["alpha", 5]],
    "decoys": [["ghost", 3]],
    "imports": [{"source": "other.toy", "names": [], "line": 1}],
}


@pytest.fixture
def author_project(pytester):
    """What a plugin author has: their module, its fixtures and goldens, a test using ours."""
    corpus = pytester.path / "toy_corpus"
    (corpus / "fixtures" / "toy").mkdir(parents=True)
    (corpus / "goldens" / "toy").mkdir(parents=True)
    (corpus / "fixtures" / "toy" / "sample.toy").write_text(FIXTURE)
    (corpus / "goldens" / "toy" / "sample.toy.json").write_text(json.dumps(GOLDEN))
    pytester.makepyfile(test_toy=textwrap.dedent(TEST))
    return pytester


def test_a_conformant_plugin_passes_in_its_authors_test_suite(author_project):
    author_project.makepyfile(toy_plugin=PLUGIN.format(shift=0))
    result = author_project.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)


def test_a_broken_plugin_fails_with_the_reason(author_project):
    author_project.makepyfile(toy_plugin=PLUGIN.format(shift=1))
    result = author_project.runpytest("-q", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*ConformanceError: plugin is not conformant:*",
            "*toy/toy: definitions: claims definitions but found 0 of 2 expected (matched none)*",
            "*sample.toy: definition 'alpha' expected at line 2, found at line 3 (off by one?)*",
            "*property names_on_lines failed*",
        ]
    )
