"""The boundary validator: what a backend returns is checked before the core uses it."""

from __future__ import annotations

import itertools

import pytest

from repomapper.isolation.validate import Lines, validate_imports, validate_tags
from repomapper.model import DEF, REF, Import, SourceFile, Tag

SRC = SourceFile.from_text("pkg/a.py", "import os\n\ndef run():\n    return os.sep\n")


def tag(name="run", line=3, end=None, kind=DEF, **kw):
    return Tag(
        kw.pop("file_path", "pkg/a.py"), line, line if end is None else end, name, kind, **kw
    )


def test_sound_output_passes_untouched():
    tags = [tag(), tag("os", 4, kind=REF), tag("sep", 0, 0, kind=REF)]
    assert validate_tags(tags, SRC, 100) == (tags, None)
    imports = [Import("pkg/a.py", "os", line_number=1)]
    assert validate_imports(imports, SRC, 100) == (imports, None)


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (tag(file_path="other.py"), "with another file's path"),
        (tag(line=-5), "with lines outside the file"),
        (tag(line=10**9), "with lines outside the file"),
        (tag(line=6, end=6), "with lines outside the file"),  # the file has 5 (4 and a last "")
        (tag(line=0, end=0), "with lines outside the file"),  # a definition needs a line
        (tag("missing"), "whose name is not on its line"),
        (tag(kind="definition"), "of an unknown kind"),
        (tag(name=""), "with no name"),
        (tag(signature=42), "with a field of the wrong type"),
        (tag(line="3"), "with a line that is not an int"),
        ({"name": "run"}, "not a Tag"),
        (None, "not a Tag"),
    ],
)
def test_each_unsound_tag_is_dropped_and_named(bad, what):
    kept, problem = validate_tags([tag(), bad], SRC, 100)
    assert kept == [tag()]
    assert problem.startswith("dropped 1 of 2 tags: 1 " + what)


@pytest.mark.parametrize(
    ("end", "clamped"),
    [(10**9, 4), (5, 4), (4, 4), (2, 3), (-7, 3)],
)
def test_the_end_line_is_clamped_to_the_file_not_dropped(end, clamped):
    kept, problem = validate_tags([tag(end=end)], SRC, 100)
    assert problem is None and kept == [tag(end=clamped)]


def test_a_reference_on_the_empty_last_piece_is_kept_and_its_end_clamped():
    kept, problem = validate_tags([tag("x", 5, 9, kind=REF)], SRC, 100)
    assert problem is None and kept == [tag("x", 5, 5, kind=REF)]


def test_signatures_and_docstrings_are_normalised_for_every_backend():
    long_sig = "def run(" + "a, " * 200 + "):"
    doc = "  First line\n  of the summary.  \n   \nSecond paragraph.\n"
    kept, problem = validate_tags([tag(signature=long_sig, docstring=doc)], SRC, 100)
    assert problem is None
    [t] = kept
    assert t.signature == long_sig[:237] + "..." and len(t.signature) == 240
    assert t.docstring == "First line\n  of the summary."
    kept, _ = validate_tags(
        [tag(docstring="x" * 600), tag("os", 1, kind=REF, docstring=" \n")], SRC, 100
    )
    assert kept[0].docstring == "x" * 500 and kept[1].docstring is None


def test_a_sound_tag_that_needs_nothing_is_the_same_object():
    t = tag(signature="def run():", docstring="Run it.")
    kept, _ = validate_tags([t], SRC, 100)
    assert kept[0] is t


def test_one_line_per_plugin_and_file_counts_each_problem():
    bad = [tag(line=-1), tag(line=-2), tag("nope")]
    kept, problem = validate_tags([tag(), *bad], SRC, 100)
    assert kept == [tag()]
    assert problem == (
        "dropped 3 of 4 tags: 2 with lines outside the file (first: 'run' at -1--1 (file has 5 lines)); "
        "1 whose name is not on its line (first: 'nope' at line 3)"
    )


@pytest.mark.parametrize("answer", [{"run": 3}, "run", b"run", 42, tag()])
def test_an_answer_that_is_not_a_sequence_is_rejected_whole(answer):
    kept, problem = validate_tags(answer, SRC, 100)
    assert kept is None and "not a sequence of Tag" in problem


def test_the_cap_stops_iteration_early():
    endless = (tag() for _ in itertools.count())  # would never finish without the cap
    kept, problem = validate_tags(endless, SRC, 1000)
    assert kept is None and "more than 1000 tags" in problem


def test_an_answer_that_raises_while_iterated_is_rejected():
    def gen():
        yield tag()
        raise OSError("boom")

    kept, problem = validate_tags(gen(), SRC, 100)
    assert kept is None and "OSError: boom" in problem


@pytest.mark.parametrize(
    ("bad", "what"),
    [
        (Import("other.py", "os", line_number=1), "with another file's path"),
        (Import("pkg/a.py", "os", line_number=99), "with a line outside the file"),
        (Import("pkg/a.py", "os", line_number=1, level=-1), "with a bad level"),
        (Import("pkg/a.py", "os", names=["x"], line_number=1), "with names of the wrong type"),
        (Import("pkg/a.py", 7, line_number=1), "with a source that is not a string"),
        ("os", "not an Import"),
    ],
)
def test_each_unsound_import_is_dropped_and_named(bad, what):
    good = Import("pkg/a.py", "os", line_number=1)
    kept, problem = validate_imports([good, bad], SRC, 100)
    assert kept == [good] and problem.startswith("dropped 1 of 2 imports: 1 " + what)


def test_names_are_found_under_either_line_convention_and_nfkc():
    crlf = SourceFile.from_text("a.py", "x = 1\rdef µ():\r  pass\n")
    lines = Lines.of(crlf)
    assert lines.has(2, "μ")  # lone CR counted as a newline, MICRO SIGN read as GREEK MU
    assert lines.has(1, "def")  # or the line-feed-only view, where everything is on line 1
    assert not lines.has(3, "def")
