"""The hooks a repomapper backend implements. Nothing else lives here.

A backend is any importable object (usually a module) with functions marked by
``repomapper.hookimpl``. Register it in your package's ``pyproject.toml``::

    [project.entry-points.repomapper]
    mylang = "mylang_repomapper.plugin"

The core routes each file to the backends whose :func:`backend_info` claims its extension, in
pluggy's call order (entry-point plugins before built-ins; ``tryfirst``/``trylast`` respected;
a backend claiming every file with ``"*"`` after those that name the file's type), and the first
that returns a usable answer (see :mod:`repomapper.isolation.validate`) answers for that file.
Each backend is asked through pluggy's hook caller, inside the ``wrapper=True`` (and old-style
``hookwrapper=True``) implementations of every plugin: a wrapper sees and may change each
backend's answer, and is not a backend itself (it claims no file).

**One file, one object.** For each file the core calls ``prepare_batch`` (with the batch),
``extract_tags`` and ``extract_imports`` with the same :class:`~repomapper.model.SourceFile`
object, in the same process. ``source.memo(key, build)`` is a scratch on it: ``build()`` runs once
per key and file, later calls return its value, and the scratch is dropped when the core is done
with the file. Parse once there (key it with your plugin's name, ``("mylang", "parse")``) instead
of keeping a module-level cache keyed by path or content.

**The core normalises what you return** (:mod:`repomapper.isolation.normalize`): signatures are
cut to 240 characters, docstrings to their first paragraph and 500 characters, end lines clamped
between the start line and the file's last line. Do not do it yourself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .index import RepoIndex
    from .model import BackendInfo, Import, SourceFile, Tag

PROJECT_NAME = "repomapper"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def backend_info() -> BackendInfo:
    """Declare the backend: its name and version, the languages, file extensions and base names
    it handles, and its capabilities (see :class:`repomapper.model.Capability`).

    Called once per process. The core uses the declaration to route files (only claimed files are
    offered to the backend), to key the tag cache (name and version), to list plugins and to decide
    which conformance checks apply. Set ``available=False`` with a ``detail`` when a runtime
    dependency is missing; the core then reports the files it would have handled.
    """
    raise NotImplementedError  # a specification: plugins implement it


@hookspec(firstresult=True)
def extract_tags(source: SourceFile) -> Sequence[Tag] | None:
    """Return the definitions and references in ``source``, or ``None`` if this backend does not
    handle the file (the next backend is then asked).

    Contract: never raise for bad input (syntax errors, invalid UTF-8, deep nesting); return what
    could be extracted, or an empty list, and log a warning. Every ``Tag.file_path`` is
    ``source.path``; start lines are 1-based and within the file (the core clamps end lines); a
    definition's name occurs on its ``start_line``. Output must be deterministic.

    ``source`` is the object :func:`extract_imports` gets next for this file: share a parse
    between the two through ``source.memo``.
    """


@hookspec(firstresult=True)
def extract_imports(source: SourceFile) -> Sequence[Import] | None:
    """Return the imports in ``source`` as written, or ``None`` if this backend does not handle
    the file. The same contract as :func:`extract_tags` applies; ``source`` is the object
    :func:`extract_tags` got, with what it stored in ``source.memo``.
    """


@hookspec
def prepare_batch(sources: Sequence[SourceFile]) -> None:
    """Optional. Called once with the batch of files routed to this backend before any
    :func:`extract_tags` call for them, so that a backend which runs an external tool can do so
    once per batch (the ctags backend runs one process per batch). Results must not depend on
    how files are batched. ``sources`` are the objects the extraction hooks get next: a result
    per file can wait in each one's ``memo``.
    """


@hookspec(firstresult=True)
def resolve_import(imp: Import, index: RepoIndex) -> Sequence[str] | None:
    """Resolve ``imp`` (extracted from ``imp.file_path``) to repository files.

    Return the relative paths of the files it refers to (empty when it refers to nothing in the
    repository, such as a third-party module), or ``None`` if this backend does not handle the
    importing file's language. ``index`` knows every file being mapped and offers
    language-neutral helpers (files by directory, path-like specifiers); a backend's own lookup
    tables (module names, say) are built once per index with :meth:`RepoIndex.derived`.
    """


@hookspec(firstresult=True)
def resolve_target(file_path: str, target: str, index: RepoIndex) -> Sequence[str] | None:
    """Optional. Resolve a reference's qualified ``target`` (the ``Tag.target`` this backend
    reported for a reference in ``file_path``, such as ``pkg.mod.Class.method``) to the
    repository files that may define it.

    Return their relative paths (empty when the target is outside the repository), or ``None``
    if this backend does not handle ``file_path``'s language. Only the backend that extracted
    ``file_path`` is asked, so a target is read with the rules of the language it was written
    in. The ranking then links the reference only to the definitions of its name in those files
    (to every definition of the name when none is among them). Called once per distinct
    (file, name, target) of each map; keep it cheap (build lookup tables once per index with
    :meth:`RepoIndex.derived`), deterministic, and never raise: an exception is logged and the
    reference keeps all its definers.
    """
