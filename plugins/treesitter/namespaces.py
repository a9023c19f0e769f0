"""Java, Kotlin and C# imports resolved by declared packages and namespaces (:mod:`.declared`).

* Java and Kotlin: ``import a.b.C`` is the file of package ``a.b`` named ``C`` (``C.java``,
  ``C.kt``) or, in Kotlin, a file of ``a.b`` declaring ``C`` at its top level; nested classes
  and static members (``import static a.b.C.m``, ``a.b.C.Inner``) are the file of the longest
  package prefix's class. ``import a.b.*`` is the package's files, ``import static a.b.C.*``
  the class's. Java and Kotlin see each other's packages. A name in no package of the
  repository (``java.util.List``) resolves to nothing, whatever file names match it.
* C#: ``using A.B;`` names a namespace, which many files declare and which the importer may use
  little of: it resolves to at most :data:`MAX_NAMESPACE_FILES` of them, those nearest the
  importer (by shared folders, then by path), so one directive cannot tie a file to a whole
  framework. ``using static A.B.C;`` and ``using X = A.B.C;`` name a type: the file ``C.cs`` of
  namespace ``A.B`` (or, when ``A.B.C`` is itself a namespace, its files as above).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from repomapper.index import RepoIndex
from repomapper.model import Import

from .declared import Packages, csharp_namespaces, jvm_packages, kotlin_declares

#: The most files a wildcard import or a C# ``using`` of a namespace resolves to.
MAX_NAMESPACE_FILES = 24


def nearest(importer: str, files: Sequence[str], limit: int = MAX_NAMESPACE_FILES) -> list[str]:
    """At most ``limit`` of ``files``: those sharing the most leading folders with ``importer``,
    then by path (deterministic)."""
    parts = posixpath.dirname(importer).split("/")

    def shared(path: str) -> int:
        n = 0
        for a, b in zip(parts, posixpath.dirname(path).split("/"), strict=False):
            if a != b:
                break
            n += 1
        return n

    return sorted(sorted(files, key=lambda f: (-shared(f), f))[:limit])


def _nearest_in(
    index: RepoIndex, kind: str, package: str, files: Sequence[str], importer: str
) -> list[str]:
    """:func:`nearest` remembered per index, package and importer folder: a namespace that
    thousands of files use is sorted once per folder, not once per directive."""
    memo: dict[tuple[str, str, str], list[str]] = index.derived(
        ("treesitter", "nearest_namespace_files"), lambda _: {}
    )
    key = (kind, package, posixpath.dirname(importer))
    found = memo.get(key)
    if found is None:
        found = memo[key] = nearest(importer, files)
    return list(found)


def _class_files(index: RepoIndex, table: Packages, package: str, name: str) -> list[str]:
    hits = table.by_stem(package, name)
    if hits:
        return hits
    return [
        f
        for f in table.files.get(package, ())
        if f.endswith((".kt", ".kts")) and kotlin_declares(index, f, name)
    ]


def resolve_jvm(imp: Import, index: RepoIndex) -> list[str]:
    """A Java or Kotlin import (``source`` dotted; ``names == ("*",)`` for a wildcard)."""
    table = jvm_packages(index)
    parts = [p.strip("`") for p in imp.source.split(".") if p]
    if not parts:
        return []
    if "*" in imp.names and ".".join(parts) in table.files:
        package = ".".join(parts)
        return _nearest_in(index, "jvm", package, table.files[package], imp.file_path)
    # the longest package prefix first: ``a.b.C.Inner`` is class C of package a.b
    for k in range(len(parts) - 1, 0, -1):
        package = ".".join(parts[:k])
        if package in table.files:
            hits = _class_files(index, table, package, parts[k])
            if hits:
                return hits
    return []


def resolve_csharp(imp: Import, index: RepoIndex) -> list[str]:
    """A C# ``using`` directive (namespace, ``using static`` type, or alias)."""
    table = csharp_namespaces(index)
    name = imp.source.removeprefix("global::")
    name = name.split("<", 1)[0]  # a generic type alias: ``using L = A.List<int>;``
    if name in table.files and name:
        return _nearest_in(index, "csharp", name, table.files[name], imp.file_path)
    namespace, _, type_name = name.rpartition(".")
    if namespace in table.files:
        return table.by_stem(namespace, type_name)
    return []
