"""Which backends a request needs, and how to install the ones that are missing."""

from __future__ import annotations

from collections.abc import Iterable

from ..model import split_name
from ..registry import PluginSet
from .request import ContractError, invalid, nearest

#: How to install what a built-in backend needs, by backend name.
INSTALL = {
    "ctags": "apt-get install universal-ctags (Debian/Ubuntu; brew install universal-ctags on macOS)",
    "treesitter": 'pip install "repomapper[languages]"',
    "python_libcst": "pip install libcst",
}
#: Languages whose grammars come with the ``languages`` extra (names as the tree-sitter backend
#: reports them, plus common spellings).
EXTRA_LANGUAGES = frozenset(
    {"rust", "java", "ruby", "c", "cpp", "c++", "c_sharp", "csharp", "c#", "php"}
)
ALIASES = {
    "c++": "cpp",
    "c#": "c_sharp",
    "csharp": "c_sharp",
    "js": "javascript",
    "ts": "typescript",
    "golang": "go",
    "py": "python",
}


def install_hint(backends: Iterable[str]) -> str | None:
    hints = [INSTALL[b] for b in sorted(set(backends)) if b in INSTALL]
    return "; ".join(hints) or None


def language_suffixes(plugins: PluginSet) -> dict[str, set[str]]:
    """Language name (lower case) -> file suffixes, over every *available* backend."""
    out: dict[str, set[str]] = {}
    for info in plugins.infos.values():
        if not info.available:
            continue
        for language, exts in info.language_extensions:
            out.setdefault(language.lower(), set()).update(exts)
        if len(info.languages) == 1 and "*" not in info.extensions:
            out.setdefault(info.languages[0].lower(), set()).update(info.extensions)
    return out


def resolve_languages(languages: Iterable[str], plugins: PluginSet) -> frozenset[str]:
    """The suffixes the requested languages cover.

    A language no available backend maps is ``backend_missing`` (with the install command) when a
    known backend would map it once installed, else ``invalid_input`` naming the nearest language.
    """
    known = language_suffixes(plugins)
    suffixes: set[str] = set()
    ctags = plugins.infos.get("ctags")
    for raw in languages:
        lang = ALIASES.get(raw.lower(), raw.lower())
        if lang in known:
            suffixes |= known[lang]
            continue
        if lang in EXTRA_LANGUAGES or raw.lower() in EXTRA_LANGUAGES:
            raise ContractError(
                "backend_missing",
                f"no installed backend maps {raw!r}: its grammar comes with the languages extra",
                field="languages",
                value=raw,
                install=INSTALL["treesitter"],
            )
        if ctags is None or not ctags.available:
            raise ContractError(
                "backend_missing",
                f"no installed backend maps {raw!r}; universal-ctags "
                f"(unavailable here: {ctags.detail if ctags else 'not loaded'}) maps about 130 "
                f"languages",
                field="languages",
                value=raw,
                install=INSTALL["ctags"],
            )
        near = nearest(lang, sorted(known))
        hint = f"; did you mean {near!r}?" if near else ""
        raise invalid(
            f"languages: no backend knows {raw!r}{hint} (run `repomapper plugins` for the list)",
            "languages",
            raw,
            near,
        )
    return frozenset(suffixes)


def has_suffix(path: str, suffixes: frozenset[str]) -> bool:
    return split_name(path)[1] in suffixes


def classify_backends(paths: Iterable[str], plugins: PluginSet) -> tuple[int, int, set[str]]:
    """(files with no backend for their type, files whose every backend is unavailable, the names
    of those unavailable backends)."""
    no_backend = unavailable = 0
    missing: set[str] = set()
    infos = plugins.infos
    for p in paths:
        names = plugins.candidates(p)
        if not names:
            no_backend += 1
        elif not any(infos[n].available for n in names):
            unavailable += 1
            missing.update(names)
    return no_backend, unavailable, missing
