"""Rewriting goldens from a plugin's output after a deliberate change, showing the diff.

Goldens are a specification written by hand; regenerating them from one plugin is a drafting
aid (new fixture, edited fixture, renumbered lines). Review the diff before keeping it: every
difference is either a plugin bug or a golden that was wrong.
"""

from __future__ import annotations

import site
import sysconfig
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from repomapper.registry import PluginSet

from .corpus import plugin_corpus
from .goldens import GOLDEN_SUFFIX, GoldenError, golden_from_output, load_golden, unified_diff
from .runner import corpora_for, extract_fixtures, plan_for
from .subject import Subject

#: Directory names under which Python installs packages.
_INSTALL_DIR_NAMES = frozenset({"site-packages", "dist-packages"})


class InstalledGoldensError(RuntimeError):
    """Regeneration would write into an installed package."""


def _install_dirs() -> set[Path]:
    dirs = {sysconfig.get_paths().get(k) for k in ("purelib", "platlib")}
    dirs.update(getattr(site, "getsitepackages", list)())
    if site.ENABLE_USER_SITE:
        dirs.add(site.getusersitepackages())
    return {Path(d).resolve() for d in dirs if d}


def installed_package_dir(path: Path | str) -> Path | None:
    """The installation directory (``site-packages``) that holds ``path``, or ``None``."""
    resolved = Path(path).expanduser().resolve()
    for i, part in enumerate(resolved.parts):
        if part in _INSTALL_DIR_NAMES:
            return Path(*resolved.parts[: i + 1])
    for d in sorted(_install_dirs()):
        if resolved.is_relative_to(d):
            return d
    return None


def _check_writable_here(goldens_dir: Path, named: bool) -> None:
    installed = installed_package_dir(goldens_dir)
    if installed is None:
        return
    if named:
        why = f"--goldens-dir {goldens_dir} is inside an installed package ({installed})"
    else:
        why = (
            f"the goldens of this corpus ({goldens_dir}) are inside an installed package "
            f"({installed})"
        )
    raise InstalledGoldensError(
        f"{why}: refusing to write there (a reinstall would lose the goldens, and they are not "
        "your source). Name the directory to write to with --goldens-dir DIR, such as your "
        "plugin's source checkout's conformance/goldens, or preview with --dry-run"
    )


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
    goldens_dir: Path | str | None = None,
) -> list[GoldenChange]:
    """Draft goldens from ``plugin``'s output for one corpus, returning the diffs.

    The corpus is ``fixtures_dir`` when given, else the one the plugin ships
    (``conformance_fixtures``), else the suite's own: a third-party author regenerates their
    goldens, never ours by accident. The drafts are written to ``goldens_dir``
    (``<goldens_dir>/<language>/<file>.json``) when given, else over the corpus's own goldens;
    each is compared with the golden already there, else with the corpus's. Nothing is written
    inside an installed package (``site-packages``): that raises
    :class:`InstalledGoldensError` before any work, naming ``--goldens-dir``. Raises
    ``LookupError`` when the plugin is not registered or covers no fixture there.
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
    target = Path(goldens_dir).expanduser().resolve() if goldens_dir is not None else None
    if write:
        corpus_goldens = {f.language_dir.parent.parent / "goldens" for p in plans for f in p.files}
        for d in [target] if target is not None else sorted(corpus_goldens):
            _check_writable_here(d, named=target is not None)
    subject = Subject(plugin_set, plugin)
    changes = []
    for plan in plans:
        extraction = extract_fixtures(subject, plan.files, info)
        if extraction.errors:
            raise RuntimeError(f"{plugin}/{plan.language}: " + "; ".join(extraction.errors))
        for f, (tags, imports) in zip(plan.files, extraction.outputs, strict=True):
            dest = f.golden_path
            if target is not None:
                dest = target / f.language / (f.rel_path + GOLDEN_SUFFIX)
            existing = next((p for p in (dest, f.golden_path) if p.is_file()), None)
            previous = None
            old_text = ""
            if existing is not None:
                old_text = existing.read_text(encoding="utf-8")
                try:
                    previous = load_golden(existing)
                except GoldenError:
                    previous = None
            new_text = golden_from_output(tags, imports, previous).dumps()
            diff = unified_diff(old_text, new_text, f"goldens/{f.language}/{f.rel_path}.json")
            created = not dest.is_file()
            if write and (diff or created):
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(new_text, encoding="utf-8")
            changes.append(GoldenChange(dest, diff, created))
    return changes
