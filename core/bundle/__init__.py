"""Index bundles: a repository's index built once, written to one portable file, and loaded
into the cache of another machine (``repomapper index export`` / ``import``).

:mod:`.format` reads and writes the file (gzip JSON lines, bounded), :mod:`.export` builds and
writes one, :mod:`.importer` checks and loads one, :mod:`.verify` re-extracts a sample. The
trust model is in ``docs/index-bundles.md``.
"""

from __future__ import annotations

from .export import Exported, export_bundle
from .format import BundleError, Limits
from .importer import Imported, import_bundle
from .verify import Verified, verify_rows

__all__ = [
    "BundleError",
    "Exported",
    "Imported",
    "Limits",
    "Verified",
    "export_bundle",
    "import_bundle",
    "verify_rows",
]
