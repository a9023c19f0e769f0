"""Resolved imports remembered between processes, so that a new process after an edit resolves
only the edited files' imports (the rows live in the repository's cache database)."""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cached_property

from .cache import CacheKey, TagCache
from .extract import Extractor
from .model import FileSymbols


class CachedImports:
    """Resolved imports kept in the repository's cache database between processes, for one
    scope: the mapped files (resolution looks them up) and the versions of the files that are
    not mapped (backends read some, such as tsconfig.json or go.mod). Each importer's row is
    keyed by its own content key, so an edited file is resolved again and only it."""

    def __init__(
        self,
        cache: TagCache,
        mapped: Mapping[str, FileSymbols],
        context: Iterable[CacheKey],
        extractor: Extractor,
    ):
        self.cache = cache
        self.mapped = mapped
        self.context = context
        self.extractor = extractor

    @cached_property
    def scope(self) -> str:
        """The digest of the scope; computed only when a state is built (an update never asks)."""
        h = hashlib.sha256()
        for path in sorted(self.mapped):
            h.update(path.encode("utf-8", "surrogateescape") + b"\0")
        h.update(b"\1")
        for k in sorted(self.context, key=lambda k: k.path):
            h.update(
                f"{k.path}\0{k.digest or (k.mtime_ns, k.size)}\0".encode("utf-8", "surrogateescape")
            )
        return h.hexdigest()

    def _keys(self) -> dict[str, CacheKey]:
        prepared = self.extractor.prepared()
        return {p: prepared[p] for p in self.mapped if p in prepared}

    def known(self) -> Iterator[tuple[str, Counter[str]]]:
        by_content = {k.content: p for p, k in self._keys().items() if k.digest}
        for content, hit in self.cache.load_imports(self.scope):
            path = by_content.get(content)
            if path is not None and all(t in self.mapped and t != path for t in hit):
                yield path, Counter(hit)

    def remember(self, found: Mapping[str, Counter[str]]) -> None:
        keys = self._keys()
        self.cache.store_imports(
            self.scope,
            [
                (keys[p].content, dict(sorted(c.items())))
                for p, c in found.items()
                if p in keys and keys[p].digest
            ],
        )
