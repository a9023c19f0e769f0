"""The ranked repository: what :meth:`RepoMap.rank` returns and every output renders from.

It holds the ranking (files with scores and reasons, (file, identifier) pairs best first) and the
extracted repository it was computed on, so the map, the context packs and the MCP tools read one
ranking instead of each ranking again.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass

from .discover import FileEntry
from .graph import SymbolTable
from .model import Diagnostic, FileSymbols, RankedFile, Reason
from .render import Item


@dataclass(frozen=True)
class RankedRepository:
    #: every mapped file, best first, with its score and the reasons for it
    files: tuple[RankedFile, ...]
    #: (file, identifier, score), best first: with a task, what the task names first
    definitions: list[tuple[str, str, float]]
    #: task evidence per (file, identifier)
    symbol_scores: Mapping[tuple[str, str], float]
    symbol_reasons: Mapping[tuple[str, str], tuple[Reason, ...]]
    #: files the task names by path, module or traceback frame
    named: frozenset[str]
    chat: frozenset[str]
    mapped: Mapping[str, FileSymbols]
    table: SymbolTable
    entries: list[FileEntry]
    all_entries: list[FileEntry]
    seen: int
    diagnostics: tuple[Diagnostic, ...]
    #: ranked for a task (the relevance model) rather than by Aider's PageRank alone
    task: bool = False

    def file_symbols(self) -> dict[str, list[tuple[str, float]]]:
        """Per file, its identifiers in ranked order."""
        out: dict[str, list[tuple[str, float]]] = defaultdict(list)
        for f, ident, score in self.definitions:
            out[f].append((ident, score))
        return out


def map_items(ranked: RankedRepository) -> list[Item]:
    """The entries of the map, most wanted first.

    Without a task: Aider's order, (file, identifier) pairs by rank, then files without
    definitions. With a task the map follows the file ranking: the k-th symbol of a file with score
    ``s`` is wanted as much as ``s / k``, so each well-ranked file shows its first symbols before
    the best file shows its tenth, and the files the task names come first of all.
    """
    chat = ranked.chat
    if not ranked.task:
        items = [Item(f, i, r) for f, i, r in ranked.definitions if f not in chat]
        with_defs = {i.path for i in items}
        items += [
            Item(f.path, None, f.score)
            for f in ranked.files
            if f.path not in chat and f.path not in with_defs
        ]
        return items
    per_file = ranked.file_symbols()
    keyed: list[tuple[tuple, Item]] = []
    for pos, rf in enumerate(ranked.files):
        if rf.path in chat:
            continue
        named = rf.path in ranked.named
        symbols = per_file.get(rf.path, [])
        if not symbols:
            keyed.append(((0 if named else 1, -rf.score, pos, 0), Item(rf.path, None, rf.score)))
            continue
        for k, (ident, _) in enumerate(symbols):
            first = named and k == 0
            keyed.append(
                (
                    (0 if first else 1, -rf.score / (k + 1), pos, k),
                    Item(rf.path, ident, rf.score / (k + 1)),
                )
            )
    keyed.sort(key=lambda x: x[0])
    return [item for _, item in keyed]
