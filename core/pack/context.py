"""The AST context: the repository as our extraction sees it (every definition with its span,
every reference with its line, imports resolved by each file's backend), built from the
extraction of a :class:`RepoMap`. Where it is kept between runs: :mod:`repomapper.pack.persist`."""

from __future__ import annotations

import hashlib
import logging
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime

from ..discover import FileEntry
from ..index import RepoIndex
from ..model import DEF, FileExtraction
from ..repomap import RepoMap
from .models import ASTContext, ImportInfo, ParsedFile, SymbolInfo

log = logging.getLogger(__name__)

#: files listed per symbol in ``SymbolInfo.references`` (the first, in path order)
MAX_LISTED_REFERRERS = 20


def _exports(symbols: Sequence[SymbolInfo]) -> tuple[str, ...]:
    """Module-level definitions whose names do not start with an underscore."""
    return tuple(sorted({s.name for s in symbols if not s.scope and not s.name.startswith("_")}))


def build_ast_context(
    rm: RepoMap, entries: Sequence[FileEntry], git_sha: str, file_set: str
) -> ASTContext:
    """Extract every file (full tags, from the tag cache where it can) and resolve imports."""
    full: dict[str, FileExtraction] = rm.extract(entries, full=True)
    mapped = {p: ex for p, ex in full.items() if ex.plugin is not None}
    index = RepoIndex(rm.root, mapped)
    referrers: dict[str, set[str]] = defaultdict(set)
    for path, ex in mapped.items():
        for t in ex.tags:
            if t.kind != DEF:
                referrers[t.name].add(path)
    files: dict[str, ParsedFile] = {}
    chars = 0
    for path in sorted(mapped):
        try:
            data = (rm.root / path).read_bytes()
        except OSError as exc:
            log.warning("%s: unreadable: %s", path, exc)
            continue
        chars += len(data)
        files[path] = parsed_file(rm, index, mapped[path], data, referrers, set(mapped))
    return ASTContext(
        str(rm.root),
        git_sha,
        file_set,
        files,
        datetime.now(UTC).replace(microsecond=0).isoformat(),
        (chars + 3) // 4,
    )


def parsed_file(
    rm: RepoMap,
    index: RepoIndex,
    ex: FileExtraction,
    data: bytes,
    referrers: dict[str, set[str]],
    known: set[str],
    keep_text: bool = False,
) -> ParsedFile:
    """One extracted file as a :class:`ParsedFile`, its imports resolved by its own backend."""
    path = ex.path
    symbols = tuple(
        SymbolInfo(
            t.name,
            str(t.symbol_kind),
            path,
            t.start_line,
            max(t.end_line, t.start_line),
            t.signature,
            t.docstring,
            tuple(sorted(referrers.get(t.name, set()) - {path})[:MAX_LISTED_REFERRERS]),
            t.scope,
        )
        for t in ex.tags
        if t.kind == DEF
    )
    refs = tuple(
        sorted({(t.name, t.start_line, str(t.symbol_kind)) for t in ex.tags if t.kind != DEF})
    )
    imports = []
    for imp in ex.imports:
        try:
            _, targets = rm.plugins.call_first(
                "resolve_import", [str(ex.plugin)], imp=imp, index=index
            )
        except Exception as exc:  # a faulty backend costs this import, not the run
            log.warning("%s: resolving %r failed: %s", path, imp.source, exc)
            targets = ()
        resolved = tuple(sorted(t for t in (targets or ()) if t in known and t != path))
        imports.append(
            ImportInfo(imp.source, tuple(imp.names), imp.is_relative, imp.line_number, resolved)
        )
    return ParsedFile(
        path,
        ex.language or "",
        symbols,
        tuple(imports),
        _exports(symbols),
        data.decode("utf-8", errors="replace") if keep_text else None,
        data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1),
        refs,
        hashlib.sha256(data).hexdigest(),
    )
