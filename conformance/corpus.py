"""Fixture corpora: where fixture files and their goldens live, and which plugin they apply to.

A corpus is a directory with two trees side by side::

    <root>/fixtures/<language>/<file>          the source a backend is run on
    <root>/goldens/<language>/<file>.json      what it should extract (see ``goldens``)

The suite ships one (``repomapper.conformance``); a plugin can ship its own by setting a
module attribute ``conformance_fixtures`` to such a directory (or a callable returning it), and
``--fixtures DIR`` adds more.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from repomapper.model import SourceFile

from .goldens import GOLDEN_SUFFIX

BUILTIN_ROOT = Path(__file__).resolve().parent
#: Module attribute a plugin sets to ship its own corpus.
PLUGIN_CORPUS_ATTRIBUTE = "conformance_fixtures"

_ALIASES = {
    "c++": "cpp",
    "c#": "csharp",
    "js": "javascript",
    "jsx": "javascript",
    "ts": "typescript",
    "golang": "go",
    "makefile": "make",
    "py": "python",
    "rb": "ruby",
    "rs": "rust",
}


def normalize_language(name: str) -> str:
    """Canonical spelling of a language name (``"C++"`` -> ``"cpp"``, ``"TypeScript"`` -> ...)."""
    key = name.strip().lower()
    return _ALIASES.get(key, key)


@dataclass(frozen=True, slots=True)
class FixtureFile:
    """One fixture source file and where its golden is (or would be)."""

    language: str
    rel_path: str  # relative to fixtures/<language>/, forward slashes
    language_dir: Path
    golden_path: Path

    @property
    def path(self) -> Path:
        return self.language_dir / self.rel_path

    def source(self) -> SourceFile:
        """The fixture as a backend sees it: rooted at its language directory."""
        return SourceFile(self.language_dir, self.rel_path, self.path.read_bytes())


@dataclass(frozen=True, slots=True)
class Corpus:
    """A fixture corpus; ``owner`` is the plugin it belongs to (``None``: every plugin)."""

    root: Path
    origin: str
    owner: str | None = None

    @property
    def fixtures_dir(self) -> Path:
        return self.root / "fixtures"

    @property
    def goldens_dir(self) -> Path:
        return self.root / "goldens"

    def languages(self) -> list[str]:
        if not self.fixtures_dir.is_dir():
            return []
        return sorted(p.name for p in self.fixtures_dir.iterdir() if p.is_dir())

    def files(self, language: str) -> list[FixtureFile]:
        lang_dir = self.fixtures_dir / language
        if not lang_dir.is_dir():
            return []
        found = []
        for path in sorted(_walk(lang_dir)):
            rel = path.relative_to(lang_dir).as_posix()
            golden = self.goldens_dir / language / (rel + GOLDEN_SUFFIX)
            found.append(FixtureFile(language, rel, lang_dir, golden))
        return found


def _walk(directory: Path) -> Iterator[Path]:
    for p in directory.rglob("*"):
        if p.is_file() and not p.name.startswith(".") and "__pycache__" not in p.parts:
            yield p


def builtin_corpus() -> Corpus:
    return Corpus(BUILTIN_ROOT, "repomapper.conformance")


def corpus_from_dir(directory: Path | str, owner: str | None = None) -> Corpus:
    """A corpus rooted at ``directory``; raises ``ValueError`` if it has no ``fixtures/``."""
    root = Path(directory).expanduser().resolve()
    if not (root / "fixtures").is_dir():
        raise ValueError(
            f"{root}: not a fixture corpus (expected {root / 'fixtures'}/<language>/<file> and "
            f"{root / 'goldens'}/<language>/<file>.json)"
        )
    origin = str(directory) if owner is None else f"plugin {owner}: {root}"
    return Corpus(root, origin, owner)


def plugin_corpus(plugin_name: str, plugin_obj: Any) -> Corpus | None:
    """The corpus a plugin ships through its ``conformance_fixtures`` attribute, if any."""
    value = getattr(plugin_obj, PLUGIN_CORPUS_ATTRIBUTE, None)
    if value is None:
        return None
    if callable(value):
        value = value()
    if value is None:
        return None
    return corpus_from_dir(Path(str(value)), owner=plugin_name)
