"""docs/languages.md is generated from the code and must match what the code reports."""

from pathlib import Path

import pytest

from repomapper.conformance.languages_table import (
    collect_rows,
    every_grammar_installed,
    render_markdown,
)

DOC = Path(__file__).resolve().parent.parent / "docs" / "languages.md"

#: the languages issue 13 asks for (fixture directory names)
REQUIRED = set(
    [
        "arduino",
        "bash",
        "c",
        "cpp",
        "csharp",
        "chatito",
        "clojure",
        "commonlisp",
        "d",
        "dart",
        "elisp",
        "elixir",
        "elm",
        "gleam",
        "go",
        "haskell",
        "hcl",
        "java",
        "javascript",
        "julia",
        "kotlin",
        "lua",
        "matlab",
        "ocaml",
        "php",
        "pony",
        "properties",
        "python",
        "ql",
        "r",
        "racket",
        "ruby",
        "rust",
        "scala",
        "solidity",
        "swift",
        "tsx",
        "typescript",
        "udev",
        "zig",
    ]
)


@pytest.fixture(scope="module")
def rows():
    return collect_rows()


def test_every_required_language_has_a_row_and_a_fixture(rows):
    by_language = {r.language: r for r in rows}
    assert set(by_language) >= REQUIRED
    assert not [lang for lang in REQUIRED if by_language[lang].fixtures == "none"]


def test_core_languages_need_no_extra_and_pass(rows):
    by_language = {r.language: r for r in rows}
    for lang in ("python", "typescript", "tsx", "javascript", "go"):
        row = by_language[lang]
        assert row.extra == "core", lang
        assert row.fixtures == "pass", lang
        assert all(c.startswith("yes") for c in row.cells), (lang, row.cells)


def test_languages_without_grammar_are_skipped_not_failed(rows):
    for row in rows:
        assert row.fixtures != "fail", row
        if row.backend == "-":
            assert row.fixtures.startswith("skipped"), row


@pytest.mark.skipif(
    not every_grammar_installed(),
    reason="the committed table is generated with every extra installed "
    "(pip install -e '.[languages,langpack]'; CI does)",
)
def test_committed_table_matches_the_code(rows):
    assert DOC.read_text(encoding="utf-8") == render_markdown(rows), (
        "docs/languages.md is stale: run python benchmarks/languages_table.py"
    )
