"""What a Java, Kotlin or C# file declares about where it lives: its ``package`` (Java, Kotlin)
or its ``namespace``\\ s (C#), read from the start of its text.

Java and Kotlin imports name packages, and C# ``using`` directives name namespaces; neither is a
path. A Kotlin file's package need not match its folder, and a C# namespace never has to, so the
declaration is read rather than guessed from the folder. A file whose declaration cannot be read
falls back to its folder below a source root (``src/main/java``, ``src/main/kotlin``, ...).

Declarations are remembered per file by its size and modification time, so a new index (after an
edit) reads only the files that changed.
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import threading
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from repomapper.index import RepoIndex

log = logging.getLogger(__name__)

JVM_SUFFIXES = (".java", ".kt", ".kts")
CSHARP_SUFFIXES = (".cs",)

#: A package declaration comes before any type: the head of the file is enough.
_JVM_HEAD_BYTES = 16 * 1024
#: C# namespaces may follow long ``using`` lists and earlier namespaces in the same file.
_CSHARP_BYTES = 256 * 1024
#: Kotlin top-level declarations are looked for in at most this much of a file.
_KOTLIN_BYTES = 512 * 1024

_PACKAGE = re.compile(rb"^[ \t]*package[ \t]+([A-Za-z_`][\w.`]*)", re.MULTILINE)
_NAMESPACE = re.compile(rb"^[ \t]*namespace[ \t]+(?:global::)?([A-Za-z_@][\w.@]*)", re.MULTILINE)
_KOTLIN_TOP = re.compile(
    rb"^(?:(?:public|internal|private|protected|data|sealed|abstract|open|enum|annotation|inline"
    rb"|value|expect|actual|const|suspend|operator|infix|tailrec|external|fun)[ \t]+)*"
    rb"(?:class|interface|object|typealias|fun|val|var)[ \t]+(?:<[^>\n]*>[ \t]*)?"
    rb"(?:[\w.]+\.)?`?([A-Za-z_]\w*)",
    re.MULTILINE,
)

#: Folders below which a JVM source tree mirrors its packages (longest first).
_SOURCE_ROOT_MARKERS = (
    "src/main/java/",
    "src/test/java/",
    "src/main/kotlin/",
    "src/test/kotlin/",
    "src/commonMain/kotlin/",
    "src/jvmMain/kotlin/",
    "java/",
    "kotlin/",
    "src/",
)

_memo_lock = threading.Lock()
#: (root, path, what) -> ((size, mtime_ns), declared names)
_memo: dict[tuple[str, str, str], tuple[tuple[int, int], tuple[str, ...]]] = {}
_MEMO_LIMIT = 200_000


def _read(index: RepoIndex, rel: str, limit: int) -> tuple[tuple[int, int], bytes] | None:
    path = index.root / rel
    try:
        with open(path, "rb") as fh:
            stat = os.fstat(fh.fileno())
            return (stat.st_size, stat.st_mtime_ns), fh.read(limit)
    except OSError as exc:
        log.info("%s: cannot read its declarations: %s", rel, exc)
        return None


def _declared(
    index: RepoIndex, rel: str, what: str, pattern: re.Pattern[bytes], limit: int
) -> tuple[str, ...] | None:
    """Every match of ``pattern``'s group in the head of ``rel``, remembered by stat; None when
    the file cannot be read."""
    key = (str(index.root), rel, what)
    try:
        stat = os.stat(index.root / rel)
        stamp = (stat.st_size, stat.st_mtime_ns)
    except OSError:
        stamp = None
    with _memo_lock:
        kept = _memo.get(key)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    read = _read(index, rel, limit)
    if read is None:
        return None
    stamp, data = read
    names = tuple(
        dict.fromkeys(
            m.group(1).decode("utf-8", "replace").replace("`", "").replace("@", "")
            for m in pattern.finditer(data)
        )
    )
    with _memo_lock:
        if len(_memo) >= _MEMO_LIMIT:
            _memo.clear()
        _memo[key] = (stamp, names)
    return names


def folder_package(rel: str) -> str:
    """The package a file's folder spells below the first source root in its path ("" when none
    is found: the file's folder is then not a package path)."""
    directory = posixpath.dirname(rel) + "/"
    for marker in _SOURCE_ROOT_MARKERS:
        at = directory.find(marker)
        if at == 0 or (at > 0 and directory[at - 1] == "/"):
            return directory[at + len(marker) :].strip("/").replace("/", ".")
    return ""


@dataclass(frozen=True, slots=True)
class Packages:
    """Package (or namespace) -> the files declaring it, sorted."""

    files: dict[str, tuple[str, ...]]

    def by_stem(self, package: str, stem: str) -> list[str]:
        return [
            f
            for f in self.files.get(package, ())
            if posixpath.splitext(posixpath.basename(f))[0] == stem
        ]


def _table(pairs: Iterable[tuple[str, str]]) -> Packages:
    grouped: dict[str, list[str]] = defaultdict(list)
    for name, path in pairs:
        grouped[name].append(path)
    return Packages({k: tuple(sorted(v)) for k, v in grouped.items()})


def jvm_packages(index: RepoIndex) -> Packages:
    """Every Java and Kotlin file of ``index`` by its declared package."""
    return index.derived(("treesitter", "jvm_packages"), _jvm_packages)


def _jvm_packages(index: RepoIndex) -> Packages:
    def packages() -> Iterable[tuple[str, str]]:
        for rel in sorted(f for f in index.files if f.endswith(JVM_SUFFIXES)):
            found = _declared(index, rel, "package", _PACKAGE, _JVM_HEAD_BYTES)
            if found is None:
                yield folder_package(rel), rel
            else:  # no declaration: the default package
                yield (found[0] if found else ""), rel

    return _table(packages())


def csharp_namespaces(index: RepoIndex) -> Packages:
    """Every C# file of ``index`` under each namespace it declares (a file may declare several;
    one that declares none is in the global namespace, ``""``)."""
    return index.derived(("treesitter", "csharp_namespaces"), _csharp_namespaces)


def _csharp_namespaces(index: RepoIndex) -> Packages:
    def namespaces() -> Iterable[tuple[str, str]]:
        for rel in sorted(f for f in index.files if f.endswith(CSHARP_SUFFIXES)):
            found = _declared(index, rel, "namespace", _NAMESPACE, _CSHARP_BYTES)
            for name in found or ("",):
                yield name, rel

    return _table(namespaces())


def kotlin_declares(index: RepoIndex, rel: str, name: str) -> bool:
    """Whether the Kotlin file ``rel`` declares ``name`` at its top level (a class, object,
    function, property or type alias: a Kotlin file may hold any number, named freely)."""
    found = _declared(index, rel, "kotlin_top", _KOTLIN_TOP, _KOTLIN_BYTES)
    return name in (found or ())
