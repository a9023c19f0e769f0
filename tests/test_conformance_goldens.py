"""The conformance goldens themselves, and how output is scored against them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from repomapper.conformance.corpus import builtin_corpus, corpus_from_dir
from repomapper.conformance.goldens import (
    Golden,
    GoldenDef,
    GoldenError,
    GoldenImport,
    golden_from_output,
    load_golden,
    unified_diff,
)
from repomapper.conformance.scoring import score_file
from repomapper.model import DEF, REF, Import, Tag

EXAMPLE_CORPUS = (
    Path(__file__).resolve().parents[1]
    / "docs/examples/repomapper-graphql/src/repomapper_graphql/conformance"
)
REQUIRED_LANGUAGES = {"python", "typescript", "tsx", "javascript", "go", "rust", "ruby", "c"}


def all_fixtures():
    for corpus in (builtin_corpus(), corpus_from_dir(EXAMPLE_CORPUS)):
        for language in corpus.languages():
            for f in corpus.files(language):
                yield pytest.param(f, id=f"{language}/{f.rel_path}")


def test_builtin_corpus_covers_every_shipped_language():
    assert set(builtin_corpus().languages()) >= REQUIRED_LANGUAGES


@pytest.mark.parametrize("fixture", list(all_fixtures()))
def test_golden_is_consistent_with_its_fixture(fixture):
    """Every name a golden places on a line is on that line; spans are inside the file."""
    golden = load_golden(fixture.golden_path)
    lines = fixture.path.read_text(encoding="utf-8").split("\n")

    def on_line(name: str, line: int) -> bool:
        return 1 <= line <= len(lines) and name in lines[line - 1]

    assert golden.definitions, "a golden without definitions checks nothing"
    for d in golden.definitions:
        assert on_line(d.name, d.start_line), f"definition {d.name!r} not on line {d.start_line}"
        if d.end_line is not None:
            assert d.start_line <= d.end_line <= len(lines), d
    for name, line in golden.references:
        assert on_line(name, line), f"reference {name!r} not on line {line}"
    for name, line in golden.decoys:
        assert on_line(name, line), f"decoy {name!r} not on line {line}"
        assert (name, line) not in {d.key for d in golden.definitions}
        assert (name, line) not in set(golden.references)
    for imp in golden.imports:
        if imp.source:
            assert on_line(imp.source, imp.line), f"import {imp.source!r} not on line {imp.line}"
    keys = [d.key for d in golden.definitions]
    assert len(keys) == len(set(keys)), "two definitions share a name and line"


@pytest.mark.parametrize("fixture", list(all_fixtures()))
def test_golden_file_is_in_canonical_form(fixture):
    """Goldens are stored exactly as the suite writes them, so regenerated diffs stay small."""
    text = fixture.golden_path.read_text(encoding="utf-8")
    assert load_golden(fixture.golden_path).dumps() == text


def test_malformed_golden_names_the_file(tmp_path):
    bad = tmp_path / "x.py.json"
    bad.write_text(json.dumps({"definitions": [{"name": "f"}]}))
    with pytest.raises(GoldenError, match=re.escape(str(bad))):
        load_golden(bad)
    bad.write_text("{not json")
    with pytest.raises(GoldenError, match="cannot read golden"):
        load_golden(bad)


def _def(name, line, end=None, kind="function", scope="", **kw):
    return Tag("f.py", line, end or line, name, DEF, kind, scope, **kw)


def _ref(name, line):
    return Tag("f.py", line, line, name, REF, "name")


GOLDEN = Golden(
    definitions=(
        GoldenDef("Shape", 3, 9, ("class",), ""),
        GoldenDef(
            "area", 5, 6, ("method",), "Shape", signature_has=("self",), docstring_has="The area"
        ),
        GoldenDef("_cache", 4, symbol_kinds=("field",), optional=True),
    ),
    references=(("Shape", 12), ("area", 13)),
    decoys=(("ghost", 20),),
    imports=(
        GoldenImport(("os.path",), 1, ("join",)),
        GoldenImport(("std::io", "std::io::Read"), 2, ("Read",)),
    ),
)


def test_perfect_output_scores_one_everywhere():
    tags = [
        _def("Shape", 3, 9, "class"),
        _def("area", 5, 6, "method", "Shape", signature="def area(self):", docstring="The area."),
        _ref("Shape", 12),
        _ref("area", 13),
        _ref("extra", 14),  # finding more references than the golden lists is fine
    ]
    imports = [
        Import("f.py", "os.path", ("join",), line_number=1),
        Import("f.py", "std::io::Read", (), line_number=2),  # the accepted alternative spelling
    ]
    score = score_file("f.py", GOLDEN, tags, imports)
    for name in ("definitions", "references", "imports"):
        assert score.tallies[name].precision == 1.0, name
        assert score.tallies[name].recall == 1.0, name
    for name, acc in score.accuracies.items():
        assert acc.value in (1.0, None), (name, score.messages)
    assert not any(score.messages.values())


def test_optional_definitions_count_neither_way():
    base = [_def("Shape", 3, 9, "class"), _def("area", 5, 6, "method", "Shape")]
    with_optional = score_file("f.py", GOLDEN, [*base, _def("_cache", 4, kind="field")], [])
    without = score_file("f.py", GOLDEN, base, [])
    for score in (with_optional, without):
        assert score.tallies["definitions"].precision == 1.0
        assert score.tallies["definitions"].recall == 1.0


def test_off_by_one_definitions_are_named_as_such():
    tags = [_def("Shape", 4, 10, "class"), _def("area", 6, 7, "method", "Shape")]
    score = score_file("f.py", GOLDEN, tags, [])
    assert score.tallies["definitions"].recall == 0.0
    messages = score.messages["definitions"]
    assert "f.py: definition 'Shape' expected at line 3, found at line 4 (off by one?)" in messages
    assert "f.py: unexpected definition 'Shape' (class) at line 4" in messages


def test_decoys_are_false_positives_with_a_clear_message():
    tags = [_def("Shape", 3, 9, "class"), _def("ghost", 20), _ref("ghost", 20)]
    score = score_file("f.py", GOLDEN, tags, [])
    assert score.tallies["definitions"].false_positives == 1
    assert score.tallies["references"].false_positives == 1
    assert any(
        "only occurs inside a comment or a string" in m for m in score.messages["references"]
    )


def test_attribute_mismatches_are_reported_separately():
    tags = [
        _def("Shape", 3, 8, "function"),
        _def("area", 5, 6, "method", "Wrong", signature="area()", docstring=None),
    ]
    score = score_file("f.py", GOLDEN, tags, [])
    assert score.tallies["definitions"].recall == 1.0
    assert score.accuracies["symbol_kinds"].value == 0.5
    assert score.accuracies["end_lines"].value == 0.5
    assert score.accuracies["scopes"].value == 0.5
    assert score.accuracies["signatures"].value == 0.0
    assert score.accuracies["docstrings"].value == 0.0
    assert (
        "f.py: definition 'Shape' at line 3: ends at line 8, expected 9"
        in score.messages["end_lines"]
    )


def test_references_with_unknown_line_match_by_name():
    unlocated = Tag("f.py", 0, 0, "area", REF, "name")
    score = score_file("f.py", GOLDEN, [unlocated], [])
    assert score.tallies["references"].matched == 1


def test_imports_check_names_and_report_what_the_line_has():
    imports = [
        Import("f.py", "os.path", ("exists",), line_number=1),
        Import("f.py", "std::fmt", ("Read",), line_number=2),
    ]
    score = score_file("f.py", GOLDEN, [], imports)
    assert score.tallies["imports"].matched == 1
    assert score.tallies["imports"].false_positives == 1
    assert score.accuracies["import_names"].value == 0.0
    assert any("that line has 'std::fmt'" in m for m in score.messages["imports"])


def test_regeneration_keeps_hand_written_parts():
    tags = [
        _def("Shape", 4, 10, "class"),  # moved one line down
        _def("area", 5, 6, "method", "Shape"),
        _ref("Shape", 12),
        _ref("print", 12),  # not a name the golden lists references for: dropped
        _ref("area", 14),
    ]
    imports = [Import("f.py", "std::io::Read", (), line_number=2)]
    new = golden_from_output(tags, imports, GOLDEN)
    by_key = {d.key: d for d in new.definitions}
    assert set(by_key) == {("Shape", 4), ("area", 5)}
    assert by_key[("area", 5)].signature_has == ("self",)
    assert by_key[("area", 5)].docstring_has == "The area"
    assert set(new.references) == {("Shape", 12), ("area", 14)}
    assert new.decoys == GOLDEN.decoys
    assert new.imports[0].sources == ("std::io::Read", "std::io")
    diff = unified_diff(GOLDEN.dumps(), new.dumps(), "goldens/x/f.py.json")
    assert '-    {"name": "Shape", "symbol_kind": "class", "start_line": 3' in diff
    assert '+    {"name": "Shape", "symbol_kind": "class", "start_line": 4' in diff


def test_golden_roundtrip_is_stable():
    again = Golden.from_json(json.loads(GOLDEN.dumps()))
    assert again.dumps() == GOLDEN.dumps()
