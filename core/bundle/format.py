"""The index bundle's file format: gzip-compressed JSON lines, read with bounds.

A bundle is a header line, then one record per line, then an end record with the number of
records and the SHA-256 of every line before it (a truncated or edited file is refused as a
whole). Records are plain JSON: nothing in a bundle is executed or unpickled. Reading bounds
every line's length, the number of records of each kind, the decompressed size and the ratio of
decompressed to compressed bytes (a decompression bomb is refused while it is read, not after).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Any

from ..cache import MAX_CONTENT_BYTES, MAX_CONTENT_ROWS, MAX_COUNTS, MAX_SHARED_MAPS

#: the first record's ``format``: a file with another is not a bundle
FORMAT = "repomapper-index-bundle"
#: the layout of the records; a bundle of another is refused
VERSION = 1

#: kinds of record
ROW, COUNT, LEXICAL, STATE, MAP, END = "row", "count", "lex", "state", "map", "end"

_DRIVE = re.compile(r"[A-Za-z]:")

#: bytes of the ranking state per record (base64 in the record)
STATE_CHUNK = 4 << 20


class BundleError(Exception):
    """The bundle cannot be used: the message says why (nothing was imported)."""


@dataclass(frozen=True)
class Limits:
    """What a bundle may hold; past any of them it is refused."""

    #: bytes of one line (a content row of a large file is a few MB)
    line_bytes: int = 64 << 20
    #: content rows, token counts and lexical documents (the cache's own bounds)
    rows: int = MAX_CONTENT_ROWS
    counts: int = MAX_COUNTS
    lexical: int = MAX_CONTENT_ROWS
    maps: int = MAX_SHARED_MAPS
    #: bytes of the ranking state (a kernel-sized tree's runs to hundreds of megabytes)
    state_bytes: int = 2 << 30
    #: decompressed bytes in all
    total_bytes: int = 2 * MAX_CONTENT_BYTES
    #: decompressed bytes per compressed byte, once past ``ratio_after`` decompressed bytes
    #: (JSON of summaries compresses about 5 to 10 times; a bomb thousands of times)
    ratio: int = 200
    ratio_after: int = 64 << 20

    def cap(self, kind: str) -> int:
        return {ROW: self.rows, COUNT: self.counts, LEXICAL: self.lexical, MAP: self.maps}.get(
            kind, self.state_bytes // STATE_CHUNK + 1
        )


def header(code: dict[str, str], counts: dict[str, int]) -> dict[str, Any]:
    return {"format": FORMAT, "version": VERSION, "code": code, "counts": counts}


class Writer:
    """Writes records to a gzip file, keeping the digest and count the end record states."""

    def __init__(self, out: IO[bytes]):
        self._gz = gzip.GzipFile(filename="", fileobj=out, mode="wb", compresslevel=6, mtime=0)
        self._sha = hashlib.sha256()
        self.records = 0

    def write(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogateescape"
        )
        line += b"\n"
        self._sha.update(line)
        self._gz.write(line)
        self.records += 1

    def close(self) -> None:
        end = {"k": END, "records": self.records, "sha256": self._sha.hexdigest()}
        self._gz.write(json.dumps(end, separators=(",", ":")).encode() + b"\n")
        self._gz.close()


class _Counted:
    """A binary file that counts the compressed bytes read from it."""

    def __init__(self, raw: IO[bytes]):
        self.raw, self.read_bytes = raw, 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.read_bytes += len(data)
        return data

    def readable(self) -> bool:
        return True


def read(path: str | os.PathLike[str], limits: Limits | None = None) -> Iterator[dict[str, Any]]:
    """The bundle's header, then its records (dicts with a ``k``), each checked to be a JSON
    object within the bounds; the end record is checked and not yielded. BundleError for a file
    that is not a whole, well-formed bundle within ``limits``; it may come after records were
    yielded, so a caller writes nothing until the reading is done."""
    limits = limits or Limits()
    try:
        raw = open(path, "rb")  # noqa: SIM115 - closed below
    except OSError as exc:
        raise BundleError(f"cannot read {path}: {exc.strerror or exc}") from exc
    with raw:
        counted = _Counted(raw)
        gz = gzip.GzipFile(fileobj=counted, mode="rb")  # type: ignore[call-overload]
        try:
            yield from _records(gz, counted, limits)
        except (OSError, EOFError, zlib.error) as exc:  # not gzip, truncated, corrupt stream
            raise BundleError(f"{path} is not a readable bundle ({exc})") from exc


def _records(gz: gzip.GzipFile, counted: _Counted, limits: Limits) -> Iterator[dict[str, Any]]:
    sha = hashlib.sha256()
    total = 0
    seen: dict[str, int] = {}
    n = 0
    end: dict[str, Any] | None = None
    while True:
        line = gz.readline(limits.line_bytes + 1)
        if not line:
            break
        if end is not None:
            raise BundleError("the bundle goes on after its end record")
        total += len(line)
        if len(line) > limits.line_bytes or not line.endswith(b"\n"):
            what = "is cut short" if len(line) <= limits.line_bytes else "is too long"
            raise BundleError(f"record {n} {what} (at most {limits.line_bytes} bytes a line)")
        if total > limits.total_bytes:
            raise BundleError(f"the bundle holds more than {limits.total_bytes} bytes")
        if total > limits.ratio_after and total > limits.ratio * max(1, counted.read_bytes):
            raise BundleError(
                "the bundle decompresses to more than "
                f"{limits.ratio} times its size: refused as a decompression bomb"
            )
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise BundleError(f"record {n} is not JSON ({exc})") from exc
        if not isinstance(record, dict):
            raise BundleError(f"record {n} is not a JSON object")
        if n == 0:
            _check_header(record)
        else:
            kind = record.get("k")
            if kind == END:
                end = record
                continue
            if kind not in (ROW, COUNT, LEXICAL, STATE, MAP):
                raise BundleError(f"record {n} is of an unknown kind {str(kind)[:40]!r}")
            seen[kind] = seen.get(kind, 0) + 1
            if seen[kind] > limits.cap(kind):
                raise BundleError(f"the bundle holds more than {limits.cap(kind)} {kind} records")
        sha.update(line)
        n += 1
        yield record
    if n == 0:
        raise BundleError("the file is empty: not a bundle")
    if end is None:
        raise BundleError("the bundle has no end record: it is cut short")
    if end.get("records") != n or end.get("sha256") != sha.hexdigest():
        raise BundleError("the bundle's records do not match its end record: it was altered")


def _check_header(record: dict[str, Any]) -> None:
    if record.get("format") != FORMAT:
        raise BundleError("not an index bundle (its first record names another format)")
    if record.get("version") != VERSION:
        raise BundleError(
            f"an index bundle of format version {str(record.get('version'))[:20]}; this "
            f"repomapper reads version {VERSION}"
        )
    code = record.get("code")
    if not isinstance(code, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in code.items()
    ):
        raise BundleError("the bundle's header does not say which code made it")
    counts = record.get("counts")
    if not isinstance(counts, dict):
        raise BundleError("the bundle's header does not say what it holds")


def valid_path(path: object) -> bool:
    """Whether ``path`` is a repository-relative POSIX path that stays inside the root (a row
    naming another is never stored: it could not be hit by a map, and it is not trusted)."""
    if not isinstance(path, str) or not path or len(path) > 4096:
        return False
    if "\0" in path or "\\" in path or path.startswith("/") or _DRIVE.match(path):
        return False
    return all(part not in ("", ".", "..") for part in path.split("/"))
