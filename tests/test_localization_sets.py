"""The localization benchmark's report of the larger sets: sections kept across runs, and
Acc@k as the sets' README defines it for tasks with several gold files."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.fixture
def loc(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH))
    import localization

    yield localization
    for name in ("localization", "locsets"):
        sys.modules.pop(name, None)


def _section(loc, key: str, body: str) -> str:
    return f"{loc.SET_START.format(key=key)}\n{body}\n{loc.SET_END.format(key=key)}\n"


def test_set_sections_are_replaced_in_place_and_kept_before_the_discussion(loc, tmp_path):
    report = tmp_path / "r.md"
    head = "# Localization\n\ndev tables\n\n"
    disc = f"{loc.DISCUSSION_START}\nhand-written\n{loc.DISCUSSION_END}\n"
    report.write_text(head + disc, encoding="utf-8")
    first = {"multilang judge": _section(loc, "multilang judge", "old figures")}
    report.write_text(loc.with_sets(report.read_text(encoding="utf-8"), first), encoding="utf-8")
    kept = loc.existing_sets(report)
    assert kept == first
    kept["multilang judge"] = _section(loc, "multilang judge", "new figures")
    kept["python-more judge"] = _section(loc, "python-more judge", "python figures")
    text = loc.with_sets(report.read_text(encoding="utf-8"), kept)
    assert "old figures" not in text and text.count("new figures") == 1
    assert text.index("python figures") < text.index("hand-written")
    assert text.startswith(head)


def test_a_run_of_every_task_keeps_its_own_section_beside_a_samples(loc, tmp_path):
    """The record (every task) and a quick sample are two sections: a sample never replaces
    the record, nor the record a sample."""
    record = loc.set_key("multilang", "judge", False, None)
    sample = loc.set_key("multilang", "judge", False, 12)
    functions = loc.set_key("multilang", "judge", True, 5)
    assert len({record, sample, functions}) == 3
    report = tmp_path / "r.md"
    sets = {record: _section(loc, record, "every task"), sample: _section(loc, sample, "12")}
    report.write_text(loc.with_sets("# r\n", sets), encoding="utf-8")
    kept = loc.existing_sets(report)
    kept[sample] = _section(loc, sample, "12 again")
    text = loc.with_sets(report.read_text(encoding="utf-8"), kept)
    assert "every task" in text and "12 again" in text and "\n12\n" not in text


def test_acc_at_k_with_more_gold_files_than_k(loc):
    task = loc.Task("t", "o/r", "text", ("a.py", "b.py", "c.py"))
    out = loc.Outcome(task)
    out.rankings["v"] = ["a.py", "x.py", "b.py", "c.py"]
    assert out.hit("v", 1)  # the first k all gold
    assert not out.hit("v", 3)  # three gold files: all in the first 3, and x.py is 2nd
    assert out.hit("v", 5)
