"""Find and vet the Universal Ctags binary, and learn which files it can parse.

Detection runs a handful of short ``ctags`` probes (argument lists, timeouts, ``--options=NONE``)
once per process and caches the answer; :func:`reset_detection` forgets it (tests, long-lived
embedders that install ctags meanwhile). A usable detection is also kept on disk (JSON, in the
user cache directory) by the binary's real path, mtime and size, so later processes skip the
probes until the binary changes. Nothing here parses repository files.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

log = logging.getLogger(__name__)

#: Environment variable naming the ctags binary to use (overrides the ``PATH`` search).
ENV_CTAGS = "REPOMAPPER_CTAGS"
#: Names searched on ``PATH`` when :data:`ENV_CTAGS` is not set, in order.
BINARY_NAMES = ("ctags", "universal-ctags")
INSTALL_HINT = (
    "install Universal Ctags with the json feature: "
    "apt-get install -y universal-ctags (Debian/Ubuntu) or brew install universal-ctags (macOS)"
)
PROBE_TIMEOUT = 15.0

#: Mappings ctags lacks by default, added to every run when the language exists:
#: (language, ``.ext`` or ``(exact-file-name)``).
EXTRA_MAPS: tuple[tuple[str, str], ...] = (
    ("C++", ".ino"),  # Arduino sketches
    ("C++", ".pde"),  # Arduino sketches, older IDEs
    ("JavaScript", ".cjs"),
    ("Ruby", ".rake"),
    ("Ruby", ".gemspec"),
    ("Ruby", "(Rakefile)"),
    ("Ruby", "(Gemfile)"),
)
#: Kinds that are off by default but belong in a repo map: function prototypes and extern
#: variables, which are the API of a C/C++ header.
EXTRA_KINDS: tuple[tuple[str, str], ...] = (("C", "+px"), ("C++", "+px"), ("CUDA", "+px"))

#: Formats ctags parses that are prose, markup or configuration rather than code. Their "tags"
#: (headings, keys, element ids) crowd a repo map without telling an agent about the code, so
#: the fallback leaves these files unclaimed (reported as having no backend), as Aider does.
#: Java properties are not among them: their keys are the names code looks settings up by.
NOT_CODE_LANGUAGES = frozenset(
    {
        "Asciidoc",
        "BibTeX",
        "DTD",
        "Glade",
        "HTML",
        "Iniconf",
        "JSON",
        "Man",
        "Markdown",
        "Maven2",
        "Passwd",
        "PlistXML",
        "Pod",
        "PythonLoggingConfig",
        "RelaxNG",
        "ReStructuredText",
        "SVG",
        "SystemdUnit",
        "Tex",
        "TeXBeamer",
        "Txt2tags",
        "XML",
        "XSLT",
        "Yaml",
        "YumRepo",
        "AnsiblePlaybook",
        "Ant",
        "Ctags",
        "Diff",
        "Abc",
    }
)

#: Source-code suffixes ctags maps by default, used only to say which files went unmapped when
#: ctags itself is missing (so that README or LICENSE files are not reported as casualties).
STATIC_CODE_EXTENSIONS: tuple[str, ...] = (
    ".ada",
    ".adb",
    ".ads",
    ".asm",
    ".awk",
    ".bas",
    ".bat",
    ".c",
    ".c++",
    ".cbl",
    ".cc",
    ".clj",
    ".cljs",
    ".cmake",
    ".cob",
    ".cpp",
    ".cs",
    ".css",
    ".cu",
    ".cxx",
    ".d",
    ".el",
    ".elm",
    ".erl",
    ".ex",
    ".exs",
    ".f",
    ".f90",
    ".f95",
    ".for",
    ".h",
    ".h++",
    ".hh",
    ".hpp",
    ".hrl",
    ".hs",
    ".hxx",
    ".ino",
    ".java",
    ".jl",
    ".kt",
    ".kts",
    ".l",
    ".lisp",
    ".lua",
    ".m",
    ".mak",
    ".mk",
    ".ml",
    ".mli",
    ".pas",
    ".pde",
    ".php",
    ".pl",
    ".pm",
    ".proto",
    ".ps1",
    ".r",
    ".rake",
    ".rb",
    ".rs",
    ".s",
    ".scm",
    ".scss",
    ".sh",
    ".sml",
    ".sql",
    ".sv",
    ".swift",
    ".tcl",
    ".v",
    ".vhd",
    ".vhdl",
    ".vim",
    ".y",
    ".zsh",
)

#: Language names as the other backends spell them; the rest are lower-cased.
_LANGUAGE_NAMES = {
    "C++": "cpp",
    "C#": "csharp",
    "UdevRules": "udev",
    "EmacsLisp": "elisp",
    "JavaProperties": "properties",
}

#: Languages ctags has no parser for, defined with its own regex parser options: udev rules set
#: variables (``ENV{NAME}=``) and name GOTO targets (``LABEL=``). Used only when the installed
#: ctags accepts them (``--kinddef`` needs Universal Ctags 5.9 or later).
DEFINED_LANGUAGES: tuple[str, ...] = (
    "--langdef=UdevRules",
    "--map-UdevRules=+.rules",
    "--kinddef-UdevRules=v,variable,variables",
    "--kinddef-UdevRules=l,label,labels",
    r"--regex-UdevRules=/^[^#]*ENV\{([A-Za-z0-9_]+)\}[+:]?=[^=]/\1/v/",
    r'--regex-UdevRules=/^[^#]*LABEL="([^"]+)"/\1/l/',
)

_VERSION_RE = re.compile(r"Universal Ctags\s+([^\s,]+)")


def normalise_language(ctags_name: str) -> str:
    """``"C++"`` -> ``"cpp"``, ``"Rust"`` -> ``"rust"``: the spelling the other backends use."""
    return _LANGUAGE_NAMES.get(ctags_name, ctags_name.lower())


@dataclass(frozen=True)
class LanguageMap:
    """ctags's file-name-to-language map, applied the way ctags applies it.

    Exact file-name patterns are tried first, then the extension (what follows the last dot of
    the base name, case-sensitive as on any POSIX system), then the same again with a
    trailing ``.in`` template suffix removed. Among several candidates ctags's own order wins.
    """

    extensions: dict[str, tuple[str, ...]] = field(default_factory=dict)
    patterns: tuple[tuple[str, str], ...] = ()

    def _match(self, name: str) -> str | None:
        for pattern, language in self.patterns:
            if fnmatchcase(name, pattern):
                return language
        dot = name.rfind(".")
        if dot >= 0:
            languages = self.extensions.get(name[dot + 1 :])
            if languages:
                return languages[0]
        return None

    def language_of(self, rel_path: str) -> str | None:
        """The ctags language for ``rel_path``, or ``None`` if ctags would not parse it."""
        name = PurePosixPath(rel_path).name
        if not name:
            return None
        found = self._match(name)
        if found is None and name.endswith(".in") and len(name) > 3:
            found = self._match(name[:-3])
        return None if found in NOT_CODE_LANGUAGES else found

    def extensions_of(self, language: str) -> tuple[str, ...]:
        """The ``.ext`` suffixes mapped to ``language`` (exact case), in ctags's order."""
        return tuple(f".{ext}" for ext, langs in self.extensions.items() if language in langs)

    def language_extensions(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """``BackendInfo.language_extensions``: normalised language -> lower-case suffixes.

        Each suffix is listed once, under the language ctags would pick for it.
        """
        chosen: dict[str, str] = {}
        for ext in self.extensions:
            lower = ext.lower()
            if lower in chosen:
                continue
            language = self._match(f"x.{lower}") or self._match(f"x.{ext}")
            if language is not None and language not in NOT_CODE_LANGUAGES:
                chosen[lower] = language
        grouped: dict[str, set[str]] = {}
        for lower, language in chosen.items():
            grouped.setdefault(normalise_language(language), set()).add(f".{lower}")
        return tuple((lang, tuple(sorted(exts))) for lang, exts in sorted(grouped.items()))


@dataclass(frozen=True)
class CtagsInstall:
    """The outcome of detection: a usable Universal Ctags, or why there is none."""

    available: bool
    path: str | None = None
    version: str = ""
    reason: str = ""
    languages: tuple[str, ...] = ()  # ctags's own spelling, enabled parsers only
    language_map: LanguageMap = field(default_factory=LanguageMap)
    map_options: tuple[str, ...] = ()  # --map-*/--kinds-* options every run must pass

    @property
    def detail(self) -> str:
        if not self.available:
            return f"{self.reason}; {INSTALL_HINT}"
        return f"Universal Ctags {self.version} at {self.path} ({len(self.languages)} languages)"


_lock = threading.Lock()
_cached: CtagsInstall | None = None


def subprocess_env() -> dict[str, str]:
    """The environment for ctags: ours, minus the variables older ctags read options from."""
    return {k: v for k, v in os.environ.items() if k not in ("CTAGS", "ETAGS")}


def _probe(binary: str, *args: str) -> str:
    """Run ``binary args`` and return stdout; raise ``OSError``/``SubprocessError`` on failure."""
    done = subprocess.run(
        [binary, *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=PROBE_TIMEOUT,
        env=subprocess_env(),
        check=False,
    )
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise subprocess.SubprocessError(
            f"`{Path(binary).name} {' '.join(args)}` exited with status {done.returncode}"
            + (f": {err[-1]}" if err else "")
        )
    return done.stdout.decode("utf-8", "replace")


def _table(text: str) -> list[list[str]]:
    """Rows of a ``--machinable`` listing (tab-separated), headers and blanks dropped."""
    return [
        line.split("\t") for line in text.splitlines() if line.strip() and not line.startswith("#")
    ]


def _candidates() -> list[str]:
    configured = os.environ.get(ENV_CTAGS, "").strip()
    if configured:
        if "/" not in configured and os.sep not in configured:  # a bare name: look it up
            return [shutil.which(configured) or configured]
        return [configured]
    return [found for name in BINARY_NAMES if (found := shutil.which(name))]


def _vet(binary: str) -> CtagsInstall:
    """Check one binary; never raises."""
    if not Path(binary).is_file():
        return CtagsInstall(False, binary, reason=f"ctags not found at {binary}")
    try:
        version_text = _probe(binary, "--version")
        m = _VERSION_RE.search(version_text)
        if m is None:
            first = version_text.strip().splitlines()[0] if version_text.strip() else "no output"
            return CtagsInstall(
                False, binary, reason=f"{binary} is not Universal Ctags ({first.strip()[:80]})"
            )
        version = m.group(1)
        try:
            listed = _table(_probe(binary, "--options=NONE", "--list-features"))
            features = {row[0].split()[0] for row in listed if row[0].split()}
        except (OSError, subprocess.SubprocessError):  # very old builds: features in --version
            features = set(re.findall(r"\+(\w[\w-]*)", version_text))
        if "json" not in features:
            return CtagsInstall(
                False,
                binary,
                version,
                reason=f"Universal Ctags {version} at {binary} lacks the json output feature",
            )
        listing = ("--options=NONE", "--machinable", "--with-list-header=no")
        try:
            listed_languages = _probe(binary, *listing, *DEFINED_LANGUAGES, "--list-languages")
            defined = DEFINED_LANGUAGES
        except subprocess.SubprocessError:  # an older ctags without --kinddef
            listed_languages = _probe(binary, *listing, "--list-languages")
            defined = ()
        languages: list[str] = []
        for row in _table(listed_languages):
            name = row[0].strip()
            if name and "[disabled]" not in name:
                languages.append(name)
        present = set(languages)
        map_options = tuple(
            [*defined]
            + [f"--map-{lang}=+{spec}" for lang, spec in EXTRA_MAPS if lang in present]
            + [f"--kinds-{lang}={spec}" for lang, spec in EXTRA_KINDS if lang in present]
        )
        extensions: dict[str, list[str]] = {}
        for row in _table(_probe(binary, *listing, *map_options, "--list-map-extensions")):
            # an "extension" with a dot can never match: ctags takes what follows the last dot
            if len(row) >= 2 and row[0] in present and row[1] and "." not in row[1]:
                langs = extensions.setdefault(row[1], [])
                if row[0] not in langs:
                    langs.append(row[0])
        patterns = tuple(
            (row[1], row[0])
            for row in _table(_probe(binary, *listing, *map_options, "--list-map-patterns"))
            if len(row) >= 2 and row[0] in present and row[1]
        )
    except (OSError, subprocess.SubprocessError, IndexError) as exc:
        return CtagsInstall(False, binary, reason=f"cannot run {binary}: {exc}")
    return CtagsInstall(
        True,
        binary,
        version,
        languages=tuple(sorted(languages)),
        language_map=LanguageMap({k: tuple(v) for k, v in extensions.items()}, patterns),
        map_options=map_options,
    )


#: The detection of a binary, kept on disk by its real path, mtime and size: probing runs the
#: binary several times on every run, and a binary that has not changed answers the same.
DETECT_CACHE_FORMAT = 1
DETECT_CACHE_NAME = "ctags-detect.json"
DETECT_CACHE_ENTRIES = 8


def _detect_cache_file() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("repomapper")) / DETECT_CACHE_NAME


def _binary_key(binary: str) -> str | None:
    try:
        real = os.path.realpath(binary)
        st = os.stat(real)
    except OSError:
        return None
    return f"{real}|{st.st_mtime_ns}|{st.st_size}"


def _to_json(found: CtagsInstall) -> dict[str, Any]:
    return {
        "path": found.path,
        "version": found.version,
        "languages": list(found.languages),
        "extensions": {k: list(v) for k, v in found.language_map.extensions.items()},
        "patterns": [list(p) for p in found.language_map.patterns],
        "map_options": list(found.map_options),
    }


def _from_json(data: object) -> CtagsInstall | None:
    """A remembered detection, or None when the record is not exactly what we write."""

    def strings(value: object) -> bool:
        return isinstance(value, list) and all(isinstance(x, str) for x in value)

    if not isinstance(data, dict):
        return None
    ext, pats = data.get("extensions"), data.get("patterns")
    if not (
        isinstance(data.get("path"), str)
        and isinstance(data.get("version"), str)
        and strings(data.get("languages"))
        and strings(data.get("map_options"))
        and isinstance(ext, dict)
        and all(isinstance(k, str) and strings(v) for k, v in ext.items())
        and isinstance(pats, list)
        and all(strings(p) and len(p) == 2 for p in pats)
    ):
        return None
    return CtagsInstall(
        True,
        data["path"],
        data["version"],
        languages=tuple(data["languages"]),
        language_map=LanguageMap({k: tuple(v) for k, v in ext.items()}, tuple(map(tuple, pats))),
        map_options=tuple(data["map_options"]),
    )


def _read_detect_cache() -> dict[str, Any]:
    try:
        data = json.loads(_detect_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("format") != DETECT_CACHE_FORMAT:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _vet_remembered(binary: str) -> CtagsInstall:
    """:func:`_vet`, answered from the on-disk record when the binary is unchanged (only a
    usable detection is recorded: a missing or unusable ctags is probed again each run)."""
    key = _binary_key(binary)
    if key is not None:
        found = _from_json(_read_detect_cache().get(key))
        if found is not None and found.path == binary:
            return found
    found = _vet(binary)
    if found.available and key is not None:
        entries = _read_detect_cache()
        entries.pop(key, None)
        entries[key] = _to_json(found)
        kept = dict(list(entries.items())[-DETECT_CACHE_ENTRIES:])
        target = _detect_cache_file()
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
            tmp.write_text(json.dumps({"format": DETECT_CACHE_FORMAT, "entries": kept}), "utf-8")
            tmp.replace(target)
        except OSError as exc:
            log.debug("ctags detection not remembered: %s", exc)
    return found


def detect() -> CtagsInstall:
    """The usable ctags (cached per process): :data:`ENV_CTAGS`, else ``ctags`` then
    ``universal-ctags`` on ``PATH``; the first that is Universal Ctags with json wins."""
    global _cached
    with _lock:
        if _cached is not None:
            return _cached
        candidates = _candidates()
        if not candidates:
            result = CtagsInstall(False, reason="ctags not found on PATH")
        else:  # the first available, else what the first one says
            result = _vet_remembered(candidates[0])
            for binary in candidates[1:]:
                if result.available:
                    break
                vetted = _vet_remembered(binary)
                if vetted.available:
                    result = vetted
        _cached = result
        return result


def reset_detection() -> None:
    """Forget the cached detection (the next :func:`detect` probes again)."""
    global _cached
    with _lock:
        _cached = None
