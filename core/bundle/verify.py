"""``index import --verify``: a sample of a bundle's rows extracted again from the local files
and compared with what the bundle says, column for column."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..cache import ContentRow, TagCache
from ..extract import Extractor
from ..model import Diagnostic
from ..paths import entries_for
from ..registry import PluginConfig, PluginSet

log = logging.getLogger(__name__)


@dataclass
class Verified:
    """What a verification compared."""

    #: rows extracted again and compared
    checked: int = 0
    #: paths whose row disagreed with the bundle's
    disagreed: list[str] = field(default_factory=list)
    #: sampled rows not comparable here (the local file differs, or other backends answer it)
    not_comparable: int = 0


def verify_rows(
    root: Path, rows: Sequence[ContentRow], plugins: PluginSet | None = None
) -> Verified:
    """Extract each row's file under ``root`` again (in the supervised workers a map uses, into
    a cache in memory) and compare the row it makes with the bundle's. A row whose file has
    other content here, or is answered by other backends (another fingerprint), is not
    comparable and is left out."""
    plugins = plugins or PluginSet(PluginConfig())
    out = Verified()
    diags: list[Diagnostic] = []
    entries = {e.path: e for e in entries_for(root, [root / k[0] for k, _ in rows], 1 << 62, diags)}
    scratch = TagCache()
    extractor = Extractor(plugins, scratch)
    extractor.prepare(root, list(entries.values()))
    comparable = []
    for key, row in rows:
        entry = entries.get(key[0])
        if entry is None or extractor.key(entry).content != key:
            out.not_comparable += 1
            continue
        comparable.append((entry, row))
    extractor.run(root, [e for e, _ in comparable], full=True)
    for entry, row in comparable:
        mine = scratch.rows.get(extractor.key(entry).content)
        if mine is None:  # the file could not be extracted here (unreadable)
            out.not_comparable += 1
            continue
        out.checked += 1
        if tuple(mine) != tuple(row):
            log.warning("%s: the bundle's row disagrees with a fresh extraction", entry.path)
            out.disagreed.append(entry.path)
    out.disagreed.sort()
    return out
