"""What a map would gain from installing something: files that a fallback backend mapped (or no
backend mapped) while an installed backend would map them once a grammar is installed.

A fresh ``pip install repomapper`` maps Rust, Java, C and C++ with the universal-ctags
fallback: definitions without references or scopes, which ranks those files worse. The map
says so, with the command that installs the better backend, instead of ranking them quietly
worse.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from .diagnostics import MAX_LISTED_PATHS
from .model import BackendInfo, Diagnostic, FileSymbols, split_name
from .summaryview import diagnostics_of, plugins_of

#: the diagnostic's code
CODE = "better_backend_installable"


def installable_diagnostics(
    summaries: Mapping[str, FileSymbols], infos: Mapping[str, BackendInfo]
) -> list[Diagnostic]:
    """One info diagnostic per language, listing the files its install command would map
    better (the first :data:`~repomapper.diagnostics.MAX_LISTED_PATHS`)."""
    wanted = _installable_suffixes(infos.values())
    if not wanted:
        return []
    fallbacks = frozenset(n for n, info in infos.items() if "*" in info.extensions)
    found: dict[tuple[str, str], list[str]] = {}
    for path, plugin in plugins_of(summaries):
        if plugin is not None and plugin not in fallbacks:
            continue
        if plugin is None and not any(
            d.code == "no_backend" for d in diagnostics_of(summaries, path)
        ):
            continue  # skipped for another reason (binary, too large, ...)
        hit = wanted.get(split_name(path)[1])
        if hit is not None:
            found.setdefault(hit, []).append(path)
    return [
        _diagnostic(language, how, sorted(paths))
        for (language, how), paths in sorted(found.items())
    ]


def _installable_suffixes(infos: Iterable[BackendInfo]) -> dict[str, tuple[str, str]]:
    """Suffix -> (language, install command), over the available backends' installable
    languages; a suffix an installed backend already claims is left out."""
    infos = list(infos)
    claimed = {
        e
        for info in infos
        if info.available and "*" not in info.extensions
        for e in info.extensions
    }
    out: dict[str, tuple[str, str]] = {}
    for info in sorted(infos, key=lambda i: i.name):
        for language, exts, how in info.installable:
            for ext in exts:
                if ext not in claimed:
                    out.setdefault(ext, (language, how))
    return out


def _diagnostic(language: str, how: str, paths: list[str]) -> Diagnostic:
    return Diagnostic(
        CODE,
        f"{len(paths)} {language} file(s) mapped without their language's grammar (by a fallback "
        f"that finds definitions only, or not at all), so they rank worse: {how} maps them fully",
        None,
        "info",
        tuple(paths[:MAX_LISTED_PATHS]),
    )
