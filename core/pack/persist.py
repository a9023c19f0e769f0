"""Where the AST context is kept between runs: in the repository's tag cache (keyed by the
repository state, the file set and the code that produced it), and in a file only when the caller
names one. Never in the mapped repository by default; always plain JSON (nothing is unpickled).

The stored form is compact rows (see :func:`_encode_file`): a third of the size of
``ParsedFile.to_dict`` and faster to read back. In the tag cache that JSON is zlib-compressed
(a sixth of the size, and quicker to read out of SQLite than the text; see docs/packs.md).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import time
import zlib
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from ..cache import TagCache
from ..codedigest import made_by
from .models import ASTContext, ImportInfo, ParsedFile, SymbolInfo
from .store import atomic_write

log = logging.getLogger(__name__)

#: bump when the shape or meaning of the stored AST context changes
AST_CONTEXT_VERSION = "2"
FORMAT = "repomapper.ast_context/2"
#: prefix of the AST context's key among the tag cache's memoised maps (one kept per repository)
CACHE_PREFIX = "pack-ast:"


@functools.cache
def _code_digest() -> str:
    """The format and a digest of repomapper's code (see :mod:`repomapper.codedigest`), so an
    edited builder never reads a context stored by the old one."""
    return f"{AST_CONTEXT_VERSION}-{made_by('map')}"


def cache_key(state: str, file_set: str, backends: Iterable[str]) -> str:
    """The tag-cache key of the AST context of a repository state (git sha or content digest),
    file set (paths, sizes, mtimes) and the fingerprints of the backends that extract it."""
    h = hashlib.sha256(_code_digest().encode())
    h.update(f"\0{state}\0{file_set}".encode("utf-8", "surrogateescape"))
    for fp in sorted(set(backends)):
        h.update(b"\0" + fp.encode("utf-8", "surrogateescape"))
    return CACHE_PREFIX + h.hexdigest()


def _encode_file(pf: ParsedFile) -> list[Any]:
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


def _decode_file(path: str, row: list[Any]) -> ParsedFile:
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


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode_pieces(ctx: ASTContext) -> Iterator[str]:
    """``ctx`` as compact JSON (one line), a file at a time: the rows of a large repository are
    never all made at once."""
    head = {
        "format": FORMAT,
        "version": _code_digest(),
        "repo_path": ctx.repo_path,
        "git_sha": ctx.git_sha,
        "file_set": ctx.file_set,
        "created_at": ctx.created_at,
        "token_estimate": ctx.token_estimate,
    }
    yield _dumps(head)[:-1] + ',"files":{'
    for i, path in enumerate(sorted(ctx.files)):
        yield ("," if i else "") + _dumps(path) + ":" + _dumps(_encode_file(ctx.files[path]))
    yield "}}\n"


def encode(ctx: ASTContext) -> str:
    """``ctx`` as compact JSON (one line)."""
    return "".join(encode_pieces(ctx))


def decode(data: Any, git_sha: str, file_set: str, ttl: float, where: str) -> ASTContext | None:
    """The context in ``data`` (parsed JSON) if it is for this state and file set and younger
    than ``ttl`` seconds; ``None`` otherwise (logged, naming ``where``, when it is malformed)."""
    try:
        if data.get("version") != _code_digest():
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
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        log.warning("%s: unusable AST context, rebuilding: %s", where, exc)
        return None


def load_ast_context(path: Path, git_sha: str, file_set: str, ttl: float) -> ASTContext | None:
    """The context kept in the file ``path`` (see :func:`decode`), or ``None``."""
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        log.warning("%s: unusable AST context, rebuilding: %s", path, exc)
        return None
    return decode(data, git_sha, file_set, ttl, str(path))


def save_ast_context(path: Path, ctx: ASTContext) -> None:
    """Write ``ctx`` to the file ``path``, atomically (a reader never sees half a file)."""
    atomic_write(path, encode(ctx))


def usable(cache: TagCache) -> bool:
    """False when the tag cache said it is unavailable (then it is a stand-in in memory)."""
    return not any(d.code == "cache_unavailable" for d in cache.diagnostics)


#: zlib level of the AST context in the tag cache (the fastest: it is written once per state)
_ZLIB_LEVEL = 1


def load_cached(
    cache: TagCache, key: str, git_sha: str, file_set: str, ttl: float
) -> ASTContext | None:
    """The context stored under ``key`` in the tag cache (see :func:`decode`), or ``None``."""
    raw = cache.get_map(key)
    if raw is None:
        return None
    where = f"tag cache {cache.location}"
    try:
        if not isinstance(raw, bytes):
            raise TypeError(f"stored as {type(raw).__name__}, not compressed bytes")
        # parsed straight from the decompressed bytes, which are not kept: with the rows made
        # from them they would be the peak of a process that reads a large context
        data = json.loads(zlib.decompress(raw))
    except (TypeError, ValueError, zlib.error) as exc:
        log.warning("%s: unusable AST context, rebuilding: %s", where, exc)
        return None
    del raw
    return decode(data, git_sha, file_set, ttl, where)


def store_cached(cache: TagCache, key: str, ctx: ASTContext) -> None:
    """Keep ``ctx`` under ``key``; the context stored for an older state is dropped."""
    z = zlib.compressobj(_ZLIB_LEVEL)
    packed = [z.compress(piece.encode("utf-8")) for piece in encode_pieces(ctx)]
    packed.append(z.flush())
    cache.put_map(key, b"".join(packed), replaces=CACHE_PREFIX)
