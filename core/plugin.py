"""Everything a plugin author imports, in one place.

    from repomapper.plugin import BackendInfo, Capability, Import, SourceFile, Tag, TagKind, hookimpl

The hooks themselves are specified (with their contracts) in :mod:`repomapper.hookspecs`.
"""

from __future__ import annotations

from .hookspecs import hookimpl
from .model import DEF, REF, BackendInfo, Capability, Import, SourceFile, Tag
from .model import SymbolKind as TagKind

__all__ = [
    "DEF",
    "REF",
    "BackendInfo",
    "Capability",
    "Import",
    "SourceFile",
    "Tag",
    "TagKind",
    "hookimpl",
]
