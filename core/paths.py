"""Files named by the caller (chat files, mentioned files, an explicit file list) as paths
relative to the repository root, with a diagnostic for each one that cannot be used."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .discover import stat_entry
from .fileentry import FileEntry
from .model import Diagnostic


def relative_to_root(root: Path, name: str | os.PathLike[str]) -> str | None:
    """``name`` (absolute, or relative to ``root``) as a root-relative POSIX path; None when it
    lies outside ``root``. A symlink is judged by where it is, not where it points."""
    p = Path(name)
    if not p.is_absolute():
        p = root / p
    try:
        rel = (
            p.resolve().relative_to(root) if not p.is_symlink() else p.absolute().relative_to(root)
        )
    except (ValueError, OSError):
        return None
    return rel.as_posix()


def entries_for(
    root: Path,
    names: Iterable[str | os.PathLike[str]],
    max_file_size: int,
    diags: list[Diagnostic],
) -> list[FileEntry]:
    """The entries for ``names`` (sorted, each once), with the checks discovered files get; a
    name outside the root, missing, or not a regular file adds a diagnostic to ``diags``."""
    entries: dict[str, FileEntry] = {}
    for name in names:
        rel = relative_to_root(root, name)
        if rel is None:
            diags.append(
                Diagnostic("outside_root", f"not inside the repository {root}; ignored", str(name))
            )
            continue
        found = stat_entry(root, rel, max_file_size)
        if isinstance(found, FileEntry):
            entries[rel] = found
        elif found is not None:
            diags.append(found)
        elif os.path.lexists(root / rel):
            diags.append(Diagnostic("not_a_file", "not a regular file; ignored", rel))
        else:
            diags.append(Diagnostic("unreadable", "no such file", rel))
    return [entries[k] for k in sorted(entries)]
