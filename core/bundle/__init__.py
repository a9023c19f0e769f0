"""Index bundles: a repository's index built once, written to one portable file, and loaded
into the cache of another machine.

:mod:`.format` reads and writes the file (gzip JSON lines, bounded), :mod:`.export` builds and
writes one.
"""

from __future__ import annotations

from .export import Exported, export_bundle
from .format import BundleError, Limits

__all__ = ["BundleError", "Exported", "Limits", "export_bundle"]
