"""A stored state's arrays, checked for shape when read (see :mod:`repomapper.snapshot`)."""

from __future__ import annotations

import functools
import hashlib
import io
import itertools
import logging
import operator
import os
from collections.abc import Mapping
from typing import Any, BinaryIO

from ..cache import NO_DIAGNOSTICS, CacheKey
from ..codedigest import made_by
from ..joinedstrings import JoinedStrings, separators
from ..mappedpages import give_back
from ..stringarrays import split, triples
from ..tablearrays import TableArrays

log = logging.getLogger(__name__)

#: definitions of the stored ranking whose files a map is likely to show
NEAR_TOP = 400
#: the format's version; stored with the arrays as one number with the digest of the code that
#: makes a state (see state_version), and a state of another is not read
VERSION = 9


@functools.cache
def state_version() -> int:
    """The format's version and the digest of the code that makes a state (repomapper's graph
    and ranking modules, see :data:`repomapper.codedigest.MADE_BY`) as one int64."""
    made = hashlib.blake2b(f"{VERSION}-{made_by('state')}".encode(), digest_size=7).digest()
    return int.from_bytes(made, "big")


#: the stored arrays of the symbol table (see :class:`~repomapper.tablearrays.TableArrays`)
_TABLE_ARRAYS = (
    "def_at",
    "def_file",
    "def_data",
    "def_unref",
    "ref_at",
    "ref_file",
    "ref_count",
    "tg_at",
    "tg_ref",
    "tg_files_at",
    "tl_at",
    "tl_names",
)

#: (path, digest, backends) of a file, what its cache row is keyed by
Content = tuple[str, str, str]


class Stored:
    """A stored state's arrays, checked for shape, before it is matched against the files."""

    def __init__(self, a: Mapping[str, Any], names_checked: bool = False):
        """``names_checked``: the names' bytes were checked against the archive's CRC-32 of
        them, as written by a process that sorted them (the state a repository stored
        itself); otherwise their order is checked name by name (a state from elsewhere)."""
        import numpy as np

        self.a = a
        #: the keys :func:`changed_files` was last asked of, and its answer
        self.last_changed: tuple[list[CacheKey], list[str]] | None = None
        if a["version"].shape != (1,) or int(a["version"][0]) != state_version():
            raise ValueError("a stored state of another version")
        self.files = split(a["files"])
        n = len(self.files)
        self.digests = split(a["digests"], n)
        self.fingerprints = split(a["fingerprints"], n)
        #: the content keys of the files that are not mapped, in the order of the heads below
        self.context_keys = triples(a["context"])
        self.context = frozenset(self.context_keys)
        self._context_heads = _context_columns(a, len(self.context_keys))
        chat, mentioned_files, mentioned_idents = (
            frozenset(split(a[k])) for k in ("chat", "mentioned_files", "mentioned_idents")
        )
        self.boosts = (chat, mentioned_files, mentioned_idents)
        for k in ("prior", "prior_stable", "out_weight", "di_counts", "di_tops"):
            if a[k].shape != (n,):
                raise ValueError(f"{k} does not match the file list")
        roles = a.get("role_weights")
        if roles is not None and (
            roles.shape != (n,) or not bool(((roles > 0) & (roles <= 1)).all())
        ):
            raise ValueError("role weights do not match the file list")
        raw, received = a.get("pair_raw"), a.get("pair_received")
        if (raw is None) != (received is None):
            raise ValueError("a pair's rank without whether it was reached, or the reverse")
        if raw is not None and received is not None:
            pairs = int(a["di_counts"].sum())
            if raw.shape != (pairs,) or received.shape != (pairs,) or received.dtype != bool:
                raise ValueError("pair ranks do not match the definition index")
            if not bool((np.isfinite(raw) & (raw >= 0)).all()):
                raise ValueError("pair ranks are not finite and non-negative")
        names = JoinedStrings(a["names"], a["name_ends"])
        # looked up by bisection (comparing 3 million names costs a large tree's every
        # process seconds; a state it wrote itself is checked by its checksum instead, and
        # its names are decoded as they are read)
        if not names_checked:
            if not np.array_equal(separators(a["names"])[:-1], a["name_ends"][:-1]):
                raise ValueError("name ends are not where the names end")
            listed = names.strings()
            if not all(map(operator.lt, listed, listed[1:])):
                raise ValueError("names are not sorted and distinct")
        self.table = TableArrays(
            self.files,
            names,
            {
                **{k: a[k] for k in _TABLE_ARRAYS},
                "tg_files": split(a["tg_files"]),
            },
        )
        self.names = names
        self.np = np
        self._heads = _head_columns(a, n)

    def give_back(self) -> None:
        """Give back the pages of the file read so far (checked, or made into names): what
        is read again is paged in again (see :mod:`repomapper.mappedpages`)."""
        give_back(*self.a.values())

    def near_top(self, paths: set[str]) -> bool:
        """Whether any of ``paths`` defines one of the first ``NEAR_TOP`` ranked definitions
        of the stored ranking (a map shows those files)."""
        if not paths:
            return False
        top = {int(i) for i in self.a["pair_file"][:NEAR_TOP].tolist()}
        return any(self.files[i] in paths for i in top if 0 <= i < len(self.files))

    @functools.cached_property
    def position(self) -> dict[str, int]:
        """Each file's position in the file list."""
        return {f: i for i, f in enumerate(self.files)}

    def content(self, i: int) -> Content:
        return (self.files[i], self.digests[i], self.fingerprints[i])

    def heads(self) -> StoredHeads:
        """What each file's cache row says besides its texts, by content key (the files that
        are not mapped too, when the state holds theirs): a lookup trusts them only while the
        cache holds every row the state was made from (see
        :meth:`repomapper.cache.TagCache.keeps_state_rows`)."""
        return StoredHeads(self, *self._heads, self._context_heads)


#: a row's texts, left out of a head (read when first needed: see repomapper.rowtext)
_NO_TEXTS = ("", "", "", "")


def _head_columns(a: Mapping[str, Any], n: int) -> tuple[list[Any], list[Any], dict[int, str]]:
    """Each file's backend and language (None for none) and its diagnostics' text, checked."""
    columns = []
    for kind in ("plugin", "language"):
        names: list[str | None] = list(split(a[f"{kind}_names"]))
        at = a[f"file_{kind}"]
        if at.shape != (n,) or (n and not -1 <= int(at.min()) <= int(at.max()) < len(names)):
            raise ValueError(f"file_{kind} does not match the file list and its names")
        names.append(None)  # position -1
        columns.append([names[i] for i in at.tolist()])
    noted = a["diag_files"].tolist()
    texts = split(a["diag_texts"], len(noted))
    if any(not 0 <= i < n for i in noted):
        raise ValueError("diagnostics of a file that is not mapped")
    return columns[0], columns[1], dict(zip(noted, texts, strict=True))


def _context_columns(a: Mapping[str, Any], n: int) -> tuple[list[str], list[str]] | None:
    """Each file that is not mapped: its language ("" for none) and its diagnostics' text, as
    the state holds them (None when it does not: written without every such file's summary)."""
    languages, texts = a.get("ctx_languages"), a.get("ctx_diagnostics")
    if languages is None or texts is None:
        return None
    return split(languages, n), split(texts, n)


class StoredHeads:
    """A stored state's files' cache rows without their texts, by content key (see
    :meth:`Stored.heads`)."""

    def __init__(
        self,
        stored: Stored,
        plugins: list[Any],
        languages: list[Any],
        texts: dict[int, str],
        context: tuple[list[str], list[str]] | None = None,
    ):
        self._stored = stored
        self._plugins, self._languages, self._texts = plugins, languages, texts
        self._context = context
        self._context_at: dict[Content, int] | None = None

    def get(self, content: Content, /) -> tuple[Any, ...] | None:
        path, digest, fingerprint = content
        s = self._stored
        i = s.position.get(path)
        if i is None:
            return self._unmapped(content)
        if s.digests[i] != digest or s.fingerprints[i] != fingerprint:
            return None
        plugin = self._plugins[i]
        if plugin is None:
            return None
        return (plugin, self._languages[i], *_NO_TEXTS, self._texts.get(i, NO_DIAGNOSTICS))

    def _unmapped(self, content: Content) -> tuple[Any, ...] | None:
        """The head of a file no backend answered, when the state holds it for this content."""
        if self._context is None:
            return None
        at = self._context_at
        if at is None:
            at = self._context_at = {c: i for i, c in enumerate(self._stored.context_keys)}
        i = at.get(content)
        if i is None:
            return None
        languages, texts = self._context
        return (None, languages[i] or None, *_NO_TEXTS, texts[i])


def decode(data: bytes | memoryview | BinaryIO, own: bool = False) -> Stored | None:
    """The stored state's arrays (bytes, or a binary file read from where it is), or None when
    they cannot be read. A file on disk is mapped rather than read: its arrays are views of the
    file (read-only), paged in as they are read (a large tree's state read whole costs more
    than the pages a run touches). ``own``: a state this cache wrote (written whole and
    renamed into place), whose names' order a checksum stands for (see :class:`Stored`)."""
    import numpy as np

    try:
        if isinstance(data, bytes | memoryview):
            data = io.BytesIO(data)
        elif not hasattr(data, "read") or not hasattr(data, "seek"):
            raise TypeError("a stored state is bytes or a binary file")
        mapped = _mapped(data, checked=("names", "name_ends") if own else ())
        if mapped is not None:
            return Stored(mapped, names_checked=own)
        data.seek(0)
        with np.load(data, allow_pickle=False) as z:
            return Stored({k: z[k] for k in z.files})
    except Exception as exc:  # a damaged or foreign row is a miss, never a failure
        log.debug("stored state unreadable: %s", exc)
        return None


#: the fixed part of a zip member's local header, and where its name and extra lengths are
_LOCAL_HEADER, _LOCAL_SIGNATURE = 30, b"PK\x03\x04"
#: an .npy header is read from at most this many bytes of a member
_NPY_HEADER_MAX = 1 << 16


def _mapped(f: BinaryIO, checked: tuple[str, ...] = ()) -> dict[str, Any] | None:
    """The ``.npz`` archive's arrays as views of the file mapped into memory, or None when
    ``f`` is not a file on disk or a member is not stored uncompressed (then it is read whole).
    Like ``numpy.load(allow_pickle=False)``, an array of objects is refused; every member must
    lie inside the file; the members named in ``checked`` must match their CRC-32."""
    import mmap
    import struct
    import zipfile
    import zlib

    import numpy as np
    from numpy.lib import format as npy

    try:
        fileno = f.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return None
    size = os.fstat(fileno).st_size
    if not size:
        return None
    view = mmap.mmap(fileno, 0, access=mmap.ACCESS_READ)
    arrays: dict[str, Any] = {}
    with zipfile.ZipFile(f) as archive:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED or not info.filename.endswith(".npy"):
                return None
            at = info.header_offset
            head = view[at : at + _LOCAL_HEADER]
            if len(head) != _LOCAL_HEADER or head[:4] != _LOCAL_SIGNATURE:
                raise ValueError(f"{info.filename}: not a zip member")
            name_len, extra_len = struct.unpack("<HH", head[26:30])
            start = at + _LOCAL_HEADER + name_len + extra_len
            end = start + info.file_size
            if end > size:
                raise ValueError(f"{info.filename}: runs past the end of the file")
            if info.filename[: -len(".npy")] in checked:
                with memoryview(view) as whole:
                    if zlib.crc32(whole[start:end]) != info.CRC:
                        raise ValueError(f"{info.filename}: does not match its checksum")
            header = io.BytesIO(view[start : min(end, start + _NPY_HEADER_MAX)])
            version = npy.read_magic(header)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(header)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(header)
            else:
                raise ValueError(f"{info.filename}: .npy version {version}")
            if dtype.hasobject:
                raise ValueError(f"{info.filename}: an array of objects")
            count = int(np.prod(shape, dtype=np.int64)) if shape else 1
            offset = start + header.tell()
            if offset + count * dtype.itemsize > end:
                raise ValueError(f"{info.filename}: shorter than its shape")
            array = np.frombuffer(view, dtype=dtype, count=count, offset=offset)
            arrays[info.filename[: -len(".npy")]] = array.reshape(
                shape, order="F" if fortran else "C"
            )
    return arrays


def changed_files(stored: Stored, keys: Mapping[str, CacheKey]) -> list[str] | None:
    """The state's files whose content or backends differ from the stored state's (``keys``:
    path -> key of at least the state's files, the others are not read), or None when one of
    them has no key. Remembered for the same keys (a call that loads the state asks twice)."""
    try:
        now = list(map(keys.__getitem__, stored.files))
    except KeyError:
        return None
    last = stored.last_changed
    if last is not None and len(last[0]) == len(now) and all(map(operator.is_, now, last[0])):
        return list(last[1])
    # compared a column at a time (a large tree's every file, on every call that loads it)
    ne = operator.ne
    digests = map(ne, map(_DIGEST, now), stored.digests)
    fingerprints = map(ne, map(_FINGERPRINT, now), stored.fingerprints)
    changed = list(itertools.compress(stored.files, map(operator.or_, digests, fingerprints)))
    stored.last_changed = (now, changed)
    return list(changed)


_DIGEST, _FINGERPRINT = operator.attrgetter("digest"), operator.attrgetter("fingerprint")


def _indices(array: Any) -> Any:
    """An index array as stored (32 bits: half the memory of a copy to 64; numpy indexes and
    counts with either, and a spliced layout joins them into 64 bits)."""
    if array.dtype.kind != "i" or array.ndim != 1:
        raise ValueError("an index array is not one-dimensional integers")
    return array
