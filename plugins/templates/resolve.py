"""Template names to repository files: the way template loaders look them up.

A name is looked up, first hit wins:

1. ``./x`` and ``../x``: relative to the importing file's folder, and nowhere else;
2. under the template roots that contain the importing file, nearest first (folders named
   :data:`ROOT_NAMES`: ``templates``, ``layouts``, ``views``, ``_includes``, ...), each as
   ``root/name``, ``root/partials/name`` and ``root/_partials/name`` (Hugo's ``partial "x"``);
3. in the importing file's own folder (and its ``partials/``);
4. under the template roots beside the importing file's folders (a root whose parent folder
   holds the importer: Jekyll's ``_includes`` for a page in ``_layouts``), nearest first;
5. a name with a folder in it (``app/base.html``, Django's per-app namespaces) under every other
   template root of the repository: each that has it.

A name without an extension also finds ``name.<template extension>`` (Handlebars partials, Hugo's
``partial "header"``), preferring the importer's own extension; an ERB ``render "shared/form"``
finds Rails' ``shared/_form.html.erb``. A name that matches nothing stays unresolved: a bare name
is never looked for outside the roots above, so it cannot land on a same-named file elsewhere.
"""

from __future__ import annotations

import posixpath

from repomapper.index import RepoIndex

from .dialects import TEMPLATE_EXTENSIONS, suffix_of

#: folder names that hold templates a loader looks names up in
ROOT_NAMES = frozenset(
    {"templates", "layouts", "_layouts", "views", "_includes", "partials", "snippets", "sections"}
)
#: sub-folders of a root (or of the importer's folder) where partials live
PARTIAL_DIRS = ("", "partials", "_partials")
#: characters that make a name an expression or a URL rather than a template file
_NOT_A_NAME = set("{}$<>|*?\\\n\r\t")


def template_roots(index: RepoIndex) -> tuple[str, ...]:
    """Every folder of the repository named like a template root, sorted."""
    return index.derived(("templates", "roots"), _build_roots)


def _build_roots(index: RepoIndex) -> tuple[str, ...]:
    roots: set[str] = set()
    seen: set[str] = set()
    for path in index.files:
        folder = posixpath.dirname(path)
        while folder and folder not in seen:
            seen.add(folder)
            if posixpath.basename(folder) in ROOT_NAMES:
                roots.add(folder)
            folder = posixpath.dirname(folder)
    return tuple(sorted(roots))


def resolve_template(importer: str, name: str, index: RepoIndex) -> list[str]:
    """The repository files template ``name``, used in ``importer``, stands for (see above)."""
    name = name.strip()
    if not name or "://" in name or _NOT_A_NAME.intersection(name):
        return []
    folder = posixpath.dirname(importer)
    rails = suffix_of(importer) == ".erb"
    if name.startswith(("./", "../")):
        joined = posixpath.normpath(posixpath.join(folder, name))
        if joined.startswith("../") or joined in ("..", "."):
            return []
        found = _match(index, joined, importer, rails)
        return [found] if found else []
    name = posixpath.normpath(name.lstrip("/"))
    if name.startswith("../") or name in ("..", "."):
        return []
    roots = template_roots(index)
    around = sorted((r for r in roots if importer.startswith(r + "/")), key=lambda r: (-len(r), r))
    # roots beside the importer's folders (Jekyll's _includes for a file in _layouts), nearest
    # first: a root whose parent folder holds the importing file
    beside = sorted(
        (r for r in roots if r not in around and _holds(posixpath.dirname(r), importer)),
        key=lambda r: (-len(posixpath.dirname(r)), r),
    )
    for base in [*around, folder, *beside]:
        for sub in PARTIAL_DIRS:
            found = _match(index, posixpath.join(base, sub, name), importer, rails)
            if found:
                return [found]
    if "/" not in name:
        return []
    elsewhere = (
        _match(index, posixpath.join(r, name), importer, rails)
        for r in roots
        if r not in around and r not in beside
    )
    return sorted({f for f in elsewhere if f})


def _holds(folder: str, path: str) -> bool:
    return not folder or path.startswith(folder + "/")


def _match(index: RepoIndex, path: str, importer: str, rails: bool) -> str | None:
    """``path`` itself, or a template file named ``path.<ext>`` (an ERB partial also
    ``_<name>.<ext>``); never the importer."""
    path = posixpath.normpath(path)
    if path in index.files and path != importer:
        return path
    folder, base = posixpath.split(path)
    bases = [base, f"_{base}"] if rails and not base.startswith("_") else [base]
    importer_name = posixpath.basename(importer)
    own_suffix = importer_name[importer_name.find(".") :] if "." in importer_name else ""
    for stem in bases:
        if stem != base and posixpath.join(folder, stem) in index.files:
            return posixpath.join(folder, stem)
        prefix = stem + "."
        candidates = [
            f
            for f in index.files_in_dir(folder)
            if posixpath.basename(f).startswith(prefix)
            and suffix_of(f) in TEMPLATE_EXTENSIONS
            and f != importer
        ]
        if candidates:
            # the importer's own kind first (form.html.erb from show.html.erb), then by name
            return min(candidates, key=lambda f: (not f.endswith(own_suffix), f))
    return None
