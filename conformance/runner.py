"""Running the suite: which plugin is run on which fixtures, and the verdicts.

A fixture language is run against a plugin when the plugin is available and claims the fixture
files (``BackendInfo.claims``); a plugin claiming every file (``"*"``, the ctags fallback) must
also list the language. Only the claimed files of a language are used. A corpus shipped by a
plugin (``conformance_fixtures``) is run against that plugin only.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from repomapper.isolation.normalize import normalize_tag
from repomapper.isolation.validate import PROPERTY_OF, Lines, import_problem, tag_problem
from repomapper.model import BackendInfo, Capability, Import, SourceFile, Tag
from repomapper.registry import PluginSet

from .contain import contained
from .corpus import (
    Corpus,
    FixtureFile,
    builtin_corpus,
    corpus_from_dir,
    normalize_language,
    plugin_corpus,
)
from .goldens import Golden, GoldenError, load_golden
from .properties import DEFAULT_EXAMPLES, PropertyResult, run_properties
from .report import CheckResult, ConformanceReport, LanguageResult, Problem, evaluate_check
from .resolution import check_resolution
from .scoring import CHECKS, TALLY_CHECKS, Score, score_file
from .subject import Subject, describe_exception
from .thresholds import FALLBACK_LANGUAGES, OVERRIDES, Override, threshold_for
from .timing import extraction_speed

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Plan:
    """The fixture files of one language that one plugin is run on."""

    plugin: str
    language: str
    files: tuple[FixtureFile, ...]


def handles(info: BackendInfo, language: str, files: Sequence[FixtureFile]) -> list[FixtureFile]:
    """The fixture files of ``language`` that the plugin described by ``info`` is run on."""
    claimed = [f for f in files if info.claims(f.rel_path)]
    if not claimed:
        return []
    if "*" in info.extensions:
        languages = {normalize_language(x) for x in info.languages}
        if normalize_language(language) not in languages and "*" not in languages:
            return []
    return claimed


def plan_for(
    name: str,
    info: BackendInfo,
    corpora: Sequence[Corpus],
    language: str | None = None,
    fallback_skipped: list[str] | None = None,
) -> list[Plan]:
    """What ``name`` is run on; a fallback's languages outside :data:`FALLBACK_LANGUAGES` are
    appended to ``fallback_skipped`` instead."""
    by_language: dict[str, list[FixtureFile]] = {}
    held_to = FALLBACK_LANGUAGES.get(name) if "*" in info.extensions else None
    for corpus in corpora:
        if corpus.owner is not None and corpus.owner != name:
            continue
        for lang in corpus.languages():
            if language is not None and normalize_language(lang) != normalize_language(language):
                continue
            chosen = handles(info, lang, corpus.files(lang))
            if chosen and held_to is not None and normalize_language(lang) not in held_to:
                if fallback_skipped is not None:
                    fallback_skipped.append(normalize_language(lang))
                continue
            if chosen:
                by_language.setdefault(normalize_language(lang), []).extend(chosen)
    return [Plan(name, lang, tuple(fs)) for lang, fs in sorted(by_language.items())]


@dataclass(frozen=True, slots=True)
class Extraction:
    """What a plugin returned for each fixture (well-formed items only), and what went wrong."""

    sources: list[SourceFile]
    outputs: list[tuple[list[Tag], list[Import]]]
    errors: list[str]


def extract_fixtures(
    subject: Subject, files: Sequence[FixtureFile], info: BackendInfo
) -> Extraction:
    """Run the plugin on the fixtures; crashes become error messages, not exceptions.

    Items of the wrong type are dropped here; the ``well_formed`` property reports them.
    """
    errors: list[str] = []
    sources = [f.source() for f in files]
    try:
        subject.prepare(sources)
    except Exception as exc:
        errors.append(f"prepare_batch crashed on the fixtures: {describe_exception(exc)}")
    outputs: list[tuple[list[Tag], list[Import]]] = []
    claims = set(info.capabilities)
    wants_tags = bool(claims & {Capability.DEFINITIONS, Capability.REFERENCES})
    wants_imports = Capability.IMPORTS in claims
    if wants_imports and not subject.implements("extract_imports"):
        errors.append("claims imports but does not implement extract_imports")
    if wants_tags and not subject.implements("extract_tags"):
        errors.append("claims definitions/references but does not implement extract_tags")
    for f, src in zip(files, sources, strict=True):
        results: list[list[Any]] = []
        for hook, wanted, call, cls in (
            ("extract_tags", wants_tags, subject.tags, Tag),
            ("extract_imports", wants_imports, subject.imports, Import),
        ):
            try:
                value = call(src)
            except Exception as exc:
                errors.append(f"{hook} crashed on fixture {f.rel_path}: {describe_exception(exc)}")
                value = []
            if value is None:
                if wanted and subject.implements(hook):
                    errors.append(
                        f"{hook} returned None (declined) for fixture {f.rel_path}, "
                        "which the plugin claims"
                    )
                value = []
            items = value if isinstance(value, list | tuple) else []
            lines = Lines.of(src)
            kept = [x for x in items if _well_formed(x, cls, src, lines)]
            if cls is Tag:  # scored as a map uses them: normalised by the core
                kept = [normalize_tag(t, lines.last) for t in kept]
            results.append(kept)
        outputs.append((results[0], results[1]))
    return Extraction(sources, outputs, errors)


def _well_formed(item: object, cls: type, source: SourceFile, lines: Lines) -> bool:
    """Whether the framework's boundary validator lets ``item`` through as far as types and
    paths go (lines and names are scored here, not dropped)."""
    if not isinstance(item, cls):
        return False
    problem = (
        tag_problem(item, source.path, lines)
        if cls is Tag
        else import_problem(item, source.path, len(lines))
    )
    return problem is None or PROPERTY_OF.get(problem[0], "well_formed") != "well_formed"


def _load_goldens(
    files: Sequence[FixtureFile], plugin: str
) -> tuple[list[Golden | None], list[str]]:
    goldens: list[Golden | None] = []
    errors: list[str] = []
    for f in files:
        if not f.golden_path.is_file():
            errors.append(
                f"no golden for fixture {f.rel_path} (expected {f.golden_path}; draft one with "
                f"`repomapper conformance --plugin {plugin} --regenerate-goldens` and edit it)"
            )
            goldens.append(None)
            continue
        try:
            goldens.append(load_golden(f.golden_path))
        except GoldenError as exc:
            errors.append(str(exc))
            goldens.append(None)
    return goldens, errors


def check_language(
    subject: Subject,
    plan: Plan,
    examples: int = DEFAULT_EXAMPLES,
    properties: bool = True,
    overrides: tuple[Override, ...] = OVERRIDES,
) -> LanguageResult:
    """Fixtures, goldens and properties for one plugin on one language."""
    info = subject.info
    goldens, errors = _load_goldens(plan.files, plan.plugin)
    extraction = extract_fixtures(subject, plan.files, info)
    errors.extend(extraction.errors)
    sources, outputs = extraction.sources, extraction.outputs
    total = Score()
    for f, golden, (tags, imports) in zip(plan.files, goldens, outputs, strict=True):
        if golden is not None:
            total.add(score_file(f.rel_path, golden, tags, imports))
    claimed = set(info.capabilities)
    checks: list[CheckResult] = []
    for check, capability in CHECKS.items():
        threshold, override = threshold_for(plan.plugin, plan.language, check, overrides)
        measure = total.tallies[check] if check in TALLY_CHECKS else total.accuracies[check]
        checks.append(
            evaluate_check(
                check,
                capability,
                capability in claimed,
                measure,
                threshold,
                override,
                total.messages.get(check, []),
            )
        )
    resolution, resolution_errors = check_resolution(
        subject, plan.plugin, plan.language, plan.files, overrides
    )
    errors.extend(resolution_errors)
    if resolution is not None:
        checks.append(resolution)
    props: list[PropertyResult] = []
    if properties:
        path = Path(plan.files[0].rel_path).name
        props = run_properties(subject, path, _distinct(sources), examples)
    speed = extraction_speed(subject, sources) if properties and not extraction.errors else None
    return LanguageResult(
        plugin=plan.plugin,
        language=plan.language,
        files=tuple(f.rel_path for f in plan.files),
        checks=tuple(checks),
        properties=tuple(props),
        errors=tuple(errors),
        lines_per_second=speed,
    )


def fuzz_path(info: BackendInfo) -> str:
    """A file name the plugin claims, for generated input."""
    ext = next((e for e in info.extensions if e != "*"), "")
    if ext:
        return f"generated{ext}"
    return info.filenames[0] if info.filenames else "generated.txt"


def check_properties_only(subject: Subject, examples: int = DEFAULT_EXAMPLES) -> LanguageResult:
    """A plugin no fixtures cover is fuzzed: the properties on generated input, no goldens."""
    info = subject.info
    props = run_properties(subject, fuzz_path(info), [], examples)
    return LanguageResult(
        plugin=subject.name,
        language=(info.languages[0] if info.languages else "?") + " (properties only)",
        files=(),
        checks=(),
        properties=tuple(props),
    )


def _distinct(sources: Iterable[SourceFile]) -> list[SourceFile]:
    seen: set[str] = set()
    out = []
    for s in sources:
        if s.path not in seen:
            seen.add(s.path)
            out.append(s)
    return out


def corpora_for(fixtures_dir: Path | str | Sequence[Path | str] | None) -> list[Corpus]:
    corpora = [builtin_corpus()]
    if fixtures_dir is None:
        return corpora
    dirs = [fixtures_dir] if isinstance(fixtures_dir, str | Path) else list(fixtures_dir)
    corpora.extend(corpus_from_dir(d) for d in dirs)
    return corpora


def _uncovered(corpora: Sequence[Corpus], covered: set[str], language: str | None) -> list[Problem]:
    """A note per fixture language no installed backend claims (its grammar is missing)."""
    missing = sorted(
        {
            normalize_language(lang)
            for corpus in corpora
            if corpus.owner is None
            for lang in corpus.languages()
            if language is None or normalize_language(lang) == normalize_language(language)
        }
        - covered
    )
    if not missing:
        return []
    return [
        Problem(
            "*",
            "skipped (no installed backend claims their fixtures; install the grammar, "
            "see `repomapper plugins`): " + ", ".join(missing),
            fatal=False,
        )
    ]


def _contained_check(
    plugin: str, language: str, files: tuple[str, ...], check: Callable[[], LanguageResult]
) -> LanguageResult:
    """``check()`` in a child process: a crash fails this pair only (see :mod:`.contain`)."""
    return contained(
        check,
        lambda why: LanguageResult(
            plugin,
            language,
            files,
            (),
            (),
            errors=(f"the check crashed the process ({why}): a bug in the backend or its grammar",),
        ),
    )


@dataclass(frozen=True, slots=True)
class _Request:
    """What :func:`run_conformance` was asked to check, and how."""

    plugin_set: PluginSet
    plugin: str | None
    language: str | None
    examples: int
    properties: bool
    explicit: bool
    overrides: tuple[Override, ...]


@dataclass(slots=True)
class _Findings:
    """What the suite has found so far: the results, the problems in the order they were met,
    the fixture languages some plugin covered and the corpora run."""

    origins: list[str]
    results: list[LanguageResult] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    covered: set[str] = field(default_factory=set)

    def report(self, examples: int) -> ConformanceReport:
        """The findings as the suite's report."""
        return ConformanceReport(
            results=tuple(self.results),
            problems=tuple(self.problems),
            examples=examples,
            corpora=tuple(self.origins),
        )


def run_conformance(
    plugin_set: PluginSet,
    plugin: str | None = None,
    language: str | None = None,
    fixtures_dir: Path | str | Sequence[Path | str] | None = None,
    examples: int = DEFAULT_EXAMPLES,
    *,
    properties: bool = True,
    explicit: bool | None = None,
    overrides: tuple[Override, ...] = OVERRIDES,
) -> ConformanceReport:
    """Run the suite for ``plugin`` (or every registered plugin) of ``plugin_set``.

    ``explicit`` (default: ``plugin is not None``) makes an unavailable plugin or one without
    fixtures a failure rather than a note.
    """
    request = _Request(
        plugin_set,
        plugin,
        language,
        examples,
        properties,
        explicit=plugin is not None if explicit is None else explicit,
        overrides=overrides,
    )
    corpora = corpora_for(fixtures_dir)
    unknown = _unknown_plugin(plugin_set, plugin)
    if unknown is not None:
        return ConformanceReport(problems=(unknown,), examples=examples)
    found = _Findings(origins=[c.origin for c in corpora])
    for name in _plugins_to_check(plugin_set, plugin, found):
        _check_plugin(request, name, corpora, found)
    if plugin is None:
        found.problems.extend(_uncovered(corpora, found.covered, language))
    _note_nothing_checked(request, found)
    return found.report(examples)


def _unknown_plugin(plugin_set: PluginSet, plugin: str | None) -> Problem | None:
    """Why the plugin asked for by name cannot be checked at all (it failed to load, or there
    is no such plugin), or None."""
    if plugin is None or plugin in plugin_set.infos:
        return None
    load_errors = dict(plugin_set.load_errors)
    why = (
        f"failed to load: {load_errors[plugin]}"
        if plugin in load_errors
        else "no such plugin; registered: " + ", ".join(sorted(plugin_set.infos))
    )
    return Problem(plugin, why)


def _plugins_to_check(plugin_set: PluginSet, plugin: str | None, found: _Findings) -> list[str]:
    """The plugin asked for, or every registered plugin by name; with none asked for, each
    plugin that failed to load is a problem."""
    if plugin is not None:
        return [plugin]
    load_errors = dict(plugin_set.load_errors)
    found.problems.extend(
        Problem(n, f"failed to load: {e}") for n, e in sorted(load_errors.items())
    )
    return sorted(plugin_set.infos)


def _check_plugin(
    request: _Request, name: str, corpora: Sequence[Corpus], found: _Findings
) -> None:
    """Check one plugin: on the fixtures it claims in its corpora, or, when none cover its
    languages, on generated input only; an unavailable plugin is not checked."""
    info = request.plugin_set.infos[name]
    if not info.available:
        detail = f": {info.detail}" if info.detail else ""
        found.problems.append(
            Problem(name, f"unavailable{detail}; not checked", fatal=request.explicit)
        )
        return
    own = _corpora_of(request.plugin_set, name, corpora, found)
    plans, fallback_skipped = _plans_of(request, name, info, own, found)
    found.covered.update(p.language for p in plans)
    if plans:
        _check_plans(request, name, plans, found)
    elif not fallback_skipped:
        _check_without_fixtures(request, name, info, found)


def _corpora_of(
    plugin_set: PluginSet, name: str, corpora: Sequence[Corpus], found: _Findings
) -> list[Corpus]:
    """The corpora ``name`` is run on: the shared ones and the one it ships, if any (recorded
    among the corpora run); a shipped corpus that cannot be read is a problem."""
    own = list(corpora)
    try:
        shipped = plugin_corpus(name, plugin_set.pm.get_plugin(name))
    except Exception as exc:
        found.problems.append(Problem(name, f"its conformance_fixtures is unusable: {exc}"))
        shipped = None
    if shipped is not None:
        own.append(shipped)
        found.origins.append(shipped.origin)
    return own


def _plans_of(
    request: _Request,
    name: str,
    info: BackendInfo,
    corpora: Sequence[Corpus],
    found: _Findings,
) -> tuple[list[Plan], bool]:
    """What ``name`` is run on, and whether a fallback was held back from any language (a
    note: a dedicated backend serves those)."""
    fallback_skipped: list[str] = []
    plans = plan_for(name, info, corpora, request.language, fallback_skipped)
    if fallback_skipped and request.language is not None and request.explicit and not plans:
        # asked for this fallback on exactly this language: say why nothing is checked
        held_to = ", ".join(sorted(FALLBACK_LANGUAGES.get(name, ())))
        language = normalize_language(request.language)
        found.problems.append(
            Problem(
                name,
                f"not checked on {language}: {name} is a fallback backend, held to the fixture "
                f"languages whose goldens were written for it ({held_to}; see "
                f"FALLBACK_LANGUAGES); {language} is left to a dedicated backend "
                f"(`repomapper conformance --language {language}` checks the installed ones)",
            )
        )
    elif fallback_skipped:
        found.problems.append(
            Problem(
                name,
                "fallback not checked on "
                + ", ".join(sorted(set(fallback_skipped)))
                + " (a dedicated backend serves them; see FALLBACK_LANGUAGES)",
                fatal=False,
            )
        )
    return plans, bool(fallback_skipped)


def _check_plans(request: _Request, name: str, plans: Sequence[Plan], found: _Findings) -> None:
    """Check ``name`` on each language's fixtures, each pair in a child process."""
    subject = Subject(request.plugin_set, name)
    for plan in plans:
        log.info("conformance: %s on %s (%d files)", name, plan.language, len(plan.files))
        found.results.append(
            _contained_check(
                name,
                plan.language,
                tuple(f.rel_path for f in plan.files),
                functools.partial(
                    check_language,
                    subject,
                    plan,
                    request.examples,
                    request.properties,
                    request.overrides,
                ),
            )
        )


def _check_without_fixtures(
    request: _Request, name: str, info: BackendInfo, found: _Findings
) -> None:
    """A plugin no fixtures cover: with every language asked for, a note and its properties on
    generated input; with one language asked for, a problem when the check is explicit."""
    if request.language is None:
        found.problems.append(
            Problem(
                name,
                "no conformance fixtures cover its languages "
                f"({', '.join(info.languages) or 'none declared'}) or extensions "
                f"({', '.join(info.extensions + info.filenames) or 'none'}): only the "
                "properties were checked, on generated input; ship a corpus "
                "(conformance_fixtures) or pass --fixtures DIR for the accuracy checks",
                fatal=False,
            )
        )
        found.results.append(
            _contained_check(
                name,
                "*",
                (),
                functools.partial(
                    check_properties_only, Subject(request.plugin_set, name), request.examples
                ),
            )
        )
    elif request.explicit:
        found.problems.append(
            Problem(name, f"no fixtures for language {request.language!r} that it claims")
        )


def _note_nothing_checked(request: _Request, found: _Findings) -> None:
    """A problem when nothing was checked and no fatal problem says why; none for a plugin
    checked without being asked for (the CLI's second Python backend beside the default finds
    nothing under ``--language go``)."""
    if (
        not found.results
        and not any(p.fatal for p in found.problems)
        and (request.plugin is None or request.explicit)
    ):
        found.problems.append(Problem("*", "nothing was checked (no plugin and fixture matched)"))
