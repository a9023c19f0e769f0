"""The AST context: the repository as our extraction sees it (every definition with its span,
every reference with its line, imports resolved by each file's backend), cached in
``context/ast_context.json`` and reused while the git sha (or the content digest without git) and
the file set are unchanged and the TTL has not passed."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from ..codedigest import made_by
from ..discover import FileEntry
from ..index import RepoIndex
from ..model import DEF, FileExtraction
from ..repomap import RepoMap
from .models import ASTContext, ImportInfo, ParsedFile, SymbolInfo
from .store import atomic_write

log = logging.getLogger(__name__)

#: files listed per symbol in ``SymbolInfo.references`` (the first, in path order)
MAX_LISTED_REFERRERS = 20
#: the format of ast_context.json; a context is also keyed by the code that made it
#: (see context_version)
AST_CONTEXT_VERSION = "2"


def context_version() -> str:
    """The format and a digest of repomapper's files: a context made by other code is built
    again."""
    return f"{AST_CONTEXT_VERSION}-{made_by('map')}"


def _exports(symbols: Sequence[SymbolInfo]) -> tuple[str, ...]:
    """Module-level definitions whose names do not start with an underscore."""
    return tuple(sorted({s.name for s in symbols if not s.scope and not s.name.startswith("_")}))


def build_ast_context(
    rm: RepoMap, entries: Sequence[FileEntry], git_sha: str, file_set: str
) -> ASTContext:
    """Extract every file (full tags, from the tag cache where it can) and resolve imports."""
    full: dict[str, FileExtraction] = rm.extract(entries, full=True)  # type: ignore[assignment]
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
            _, targets = rm.plugins.call_first("resolve_import", [ex.plugin], imp=imp, index=index)
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


def _encode_file(pf: ParsedFile) -> list:
    """A compact row for ``ast_context.json`` (a third of the size of ``to_dict``, faster to read)."""
    return [
        pf.language,
        [
            [
                s.name,
                s.kind,
                s.start_line,
                s.end_line,
                s.signature,
                s.docstring,
                list(s.references),
                s.scope,
            ]
            for s in pf.symbols
        ],
        [
            [i.source, list(i.names), i.is_relative, i.line_number, list(i.resolved)]
            for i in pf.imports
        ],
        list(pf.exports),
        pf.line_count,
        [list(r) for r in pf.references],
        pf.digest,
    ]


def _decode_file(path: str, row: list) -> ParsedFile:
    language, symbols, imports, exports, line_count, refs, digest = row
    return ParsedFile(
        path,
        language,
        tuple(
            SymbolInfo(n, k, path, a, b, sig, doc, tuple(refs_), scope)
            for n, k, a, b, sig, doc, refs_, scope in symbols
        ),
        tuple(
            ImportInfo(src, tuple(names), rel, line, tuple(res))
            for src, names, rel, line, res in imports
        ),
        tuple(exports),
        None,
        line_count,
        tuple((r[0], r[1], r[2]) for r in refs),
        digest,
    )


def load_ast_context(path: Path, git_sha: str, file_set: str, ttl: float) -> ASTContext | None:
    """The cached context at ``path`` if it is for this sha and file set and younger than
    ``ttl`` seconds; ``None`` (logged) otherwise. Never executes anything it reads: plain JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("version") != context_version():
            return None
        if data.get("git_sha") != git_sha or data.get("file_set") != file_set:
            return None
        created = datetime.fromisoformat(data["created_at"]).timestamp()
        if ttl <= 0 or time.time() - created > ttl:
            return None
        files = {p: _decode_file(p, row) for p, row in data["files"].items()}
        return ASTContext(
            data["repo_path"], git_sha, file_set, files, data["created_at"], data["token_estimate"]
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        log.warning("%s: unusable AST context, rebuilding: %s", path, exc)
        return None


def save_ast_context(path: Path, ctx: ASTContext) -> None:
    """Write ``ctx`` as compact rows (see :func:`_encode_file`), atomically."""
    data = {
        "format": "repomapper.ast_context/2",
        "version": context_version(),
        "repo_path": ctx.repo_path,
        "git_sha": ctx.git_sha,
        "file_set": ctx.file_set,
        "created_at": ctx.created_at,
        "token_estimate": ctx.token_estimate,
        "files": {p: _encode_file(ctx.files[p]) for p in sorted(ctx.files)},
    }
    atomic_write(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
