"""Rewriting goldens from a plugin's output after a deliberate change, showing the diff.

Goldens are a specification written by hand; regenerating them from one plugin is a drafting
aid (new fixture, edited fixture, renumbered lines). Review the diff before keeping it: every
difference is either a plugin bug or a golden that was wrong.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repomapper.registry import PluginSet

from .corpus import plugin_corpus
from .goldens import GoldenError, golden_from_output, load_golden, unified_diff
from .runner import corpora_for, extract_fixtures, plan_for
from .subject import Subject


@dataclass(frozen=True, slots=True)
class GoldenChange:
    path: Path
    diff: str  # unified diff, "" when unchanged
    created: bool

    @property
    def changed(self) -> bool:
        return bool(self.diff)


def regenerate_goldens(
    plugin_set: PluginSet,
    plugin: str,
    language: str | None = None,
    fixtures_dir: Path | str | Sequence[Path | str] | None = None,
    *,
    write: bool = True,
) -> list[GoldenChange]:
    """Draft goldens from ``plugin``'s output for one corpus, returning the diffs.

    The corpus is ``fixtures_dir`` when given, else the one the plugin ships
    (``conformance_fixtures``), else the suite's own: a third-party author regenerates their
    goldens, never ours by accident. Raises ``LookupError`` when the plugin is not registered or
    covers no fixture there.
    """
    if plugin not in plugin_set.infos:
        raise LookupError(
            f"no plugin named {plugin!r}; registered: {', '.join(sorted(plugin_set.infos))}"
        )
    info = plugin_set.infos[plugin]
    shipped = plugin_corpus(plugin, plugin_set.pm.get_plugin(plugin))
    if fixtures_dir is not None:
        corpora = corpora_for(fixtures_dir)[1:]
    elif shipped is not None:
        corpora = [shipped]
    else:
        corpora = corpora_for(None)
    plans = plan_for(plugin, info, corpora, language)
    if not plans:
        raise LookupError(
            f"plugin {plugin!r} is run on no fixture" + (f" of {language!r}" if language else "")
        )
    subject = Subject(plugin_set, plugin)
    changes = []
    for plan in plans:
        extraction = extract_fixtures(subject, plan.files, info)
        if extraction.errors:
            raise RuntimeError(f"{plugin}/{plan.language}: " + "; ".join(extraction.errors))
        for f, (tags, imports) in zip(plan.files, extraction.outputs, strict=True):
            previous = None
            old_text = ""
            if f.golden_path.is_file():
                old_text = f.golden_path.read_text(encoding="utf-8")
                try:
                    previous = load_golden(f.golden_path)
                except GoldenError:
                    previous = None
            new_text = golden_from_output(tags, imports, previous).dumps()
            diff = unified_diff(old_text, new_text, f"goldens/{f.language}/{f.rel_path}.json")
            if write and diff:
                f.golden_path.parent.mkdir(parents=True, exist_ok=True)
                f.golden_path.write_text(new_text, encoding="utf-8")
            changes.append(GoldenChange(f.golden_path, diff, not old_text))
    return changes
