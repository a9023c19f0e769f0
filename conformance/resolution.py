"""The import-resolution check: a plugin's ``resolve_import`` on a small repository per
language, against the import edges that language's own rules give.

A corpus may hold, among its goldens (specifications, not fixtures a backend is run on one by
one)::

    <root>/goldens/resolution/<language>/repo/...        a small repository
    <root>/goldens/resolution/<language>/expected.json   the edges its imports must resolve to

``expected.json`` lists imports by the file that writes them and their source as extracted::

    {"imports": [
        {"from": "app/App.java", "source": "com.acme.model.User", "to": ["core/.../User.java"]},
        {"from": "app/App.java", "source": "java.util.List", "to": []}
    ]}

Each listed import is extracted by the plugin itself (``extract_imports`` on the file) and
resolved with ``resolve_import`` over an index of every file of the repository; imports the
list does not name are not judged. An edge is ``(from, source, to)``: recall counts the expected
edges found, precision the resolved edges that were expected (``"to": []`` is a name that must
resolve to nothing, such as a standard-library module beside a repository file of the same name).

The check applies only where the plugin declares resolution: it implements ``resolve_import`` and
answers (not ``None``) for the language's files. Otherwise it is "not claimed" and never fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from repomapper.index import RepoIndex
from repomapper.model import Import, SourceFile

from .corpus import FixtureFile
from .report import CheckResult, evaluate_check
from .scoring import Tally
from .subject import Subject, describe_exception
from .thresholds import OVERRIDES, Override, threshold_for

CHECK = "import_resolution"
CAPABILITY = "import resolution"
#: where a corpus keeps its resolution cases, below its root
RESOLUTION_DIR = ("goldens", "resolution")
EXPECTED_FILE = "expected.json"


@dataclass(frozen=True, slots=True)
class Expected:
    """One listed import and the files it must resolve to."""

    importer: str
    source: str
    targets: frozenset[str]


@dataclass(frozen=True, slots=True)
class Case:
    """A small repository of one language and its expected edges."""

    repo: Path
    expected: tuple[Expected, ...]


def cases_for(files: Iterable[FixtureFile]) -> tuple[list[Case], list[str]]:
    """The resolution cases of the corpora that ``files`` come from (each fixture's corpus root
    is two folders above its language folder), and why any could not be read."""
    cases: list[Case] = []
    errors: list[str] = []
    seen: set[Path] = set()
    for f in files:
        folder = f.language_dir.parent.parent.joinpath(*RESOLUTION_DIR, f.language_dir.name)
        if folder in seen or not (folder / EXPECTED_FILE).is_file():
            continue
        seen.add(folder)
        try:
            cases.append(load_case(folder))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            errors.append(f"{folder / EXPECTED_FILE}: unusable resolution case: {exc}")
    return cases, errors


def load_case(folder: Path) -> Case:
    data = json.loads((folder / EXPECTED_FILE).read_text(encoding="utf-8"))
    entries = data["imports"]
    if not isinstance(entries, list):
        raise ValueError('"imports" must be a list')
    expected = tuple(
        Expected(str(e["from"]), str(e["source"]), frozenset(str(t) for t in e["to"]))
        for e in entries
    )
    return Case(folder / "repo", expected)


def _repo_files(repo: Path) -> list[str]:
    return sorted(
        p.relative_to(repo).as_posix()
        for p in repo.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    )


@dataclass(slots=True)
class _Outcome:
    tally: Tally
    messages: list[str]
    answered: bool  # the plugin answered (not None) for at least one import


def _resolve_case(subject: Subject, case: Case) -> _Outcome:
    files = _repo_files(case.repo)
    index = RepoIndex(case.repo, files)
    tally, messages, answered = Tally(), [], False
    by_importer: dict[str, list[Expected]] = {}
    for e in case.expected:
        by_importer.setdefault(e.importer, []).append(e)
    for importer, expected in sorted(by_importer.items()):
        if importer not in files:
            messages.append(f"{importer}: listed in {EXPECTED_FILE} but not in the repository")
            continue
        if not subject.info.claims(importer):
            continue
        source = SourceFile(case.repo, importer, (case.repo / importer).read_bytes())
        try:
            subject.prepare([source])
            extracted = subject.imports(source) or []
        except Exception as exc:
            messages.append(f"{importer}: extract_imports crashed: {describe_exception(exc)}")
            extracted = []
        imports: list[Import] = [i for i in extracted if isinstance(i, Import)]
        for e in expected:
            tally.expected += len(e.targets)
            written = [i for i in imports if i.source == e.source]
            if not written:
                if e.targets:
                    messages.append(f"{importer}: import {e.source!r} was not extracted")
                continue
            found: set[str] = set()
            for imp in written:
                try:
                    answer = subject.resolve(imp, index)
                except Exception as exc:
                    messages.append(
                        f"{importer}: resolve_import crashed on {e.source!r}: "
                        f"{describe_exception(exc)}"
                    )
                    continue
                if answer is None:
                    continue
                answered = True
                found.update(t for t in answer if isinstance(t, str))
            tally.reported += len(found)
            tally.matched += len(found & e.targets)
            tally.false_positives += len(found - e.targets)
            for missing in sorted(e.targets - found):
                messages.append(f"{importer}: {e.source!r} should resolve to {missing}")
            for extra in sorted(found - e.targets):
                messages.append(f"{importer}: {e.source!r} resolved to {extra}, not expected")
    return _Outcome(tally, messages, answered)


def check_resolution(
    subject: Subject,
    plugin: str,
    language: str,
    files: Iterable[FixtureFile],
    overrides: tuple[Override, ...] = OVERRIDES,
) -> tuple[CheckResult | None, list[str]]:
    """The import-resolution check of ``plugin`` on ``language`` (None when no corpus has a
    resolution case for the language), and errors reading the cases."""
    cases, errors = cases_for(files)
    if not cases:
        return None, errors
    tally, messages, answered = Tally(), [], False
    if subject.implements("resolve_import"):
        for case in cases:
            outcome = _resolve_case(subject, case)
            tally.add(outcome.tally)
            messages.extend(outcome.messages)
            answered = answered or outcome.answered
    threshold, override = threshold_for(plugin, language, CHECK, overrides)
    result = evaluate_check(CHECK, CAPABILITY, answered, tally, threshold, override, messages)
    return result, errors
