"""Writing the ranking state as an ``.npz`` archive (see :mod:`repomapper.snapshot`)."""

from __future__ import annotations

import io
import json
from array import array
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from itertools import repeat
from typing import IO, TYPE_CHECKING, Any, BinaryIO

from ..cache import CacheKey
from ..graph import SymbolTable
from ..graphstate import GraphState
from ..importrows import ImportRows
from ..joinedstrings import JoinedStrings, separators
from ..layered import Layered
from ..model import Diagnostic, FileSymbols
from ..rank import RankedPairs, stable
from ..stringarrays import joined
from ..tablearrays import TableArrays, starts
from .stored import state_version

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


def encode(
    state: GraphState,
    keys: Mapping[str, CacheKey],
    context: frozenset[CacheKey],
    summaries: Mapping[str, FileSymbols] | None = None,
) -> memoryview:
    """The state's arrays as an ``.npz`` archive in memory (see :func:`write`)."""
    out = io.BytesIO()
    write(out, state, keys, context, summaries)
    return out.getbuffer()


def write(
    out: BinaryIO,
    state: GraphState,
    keys: Mapping[str, CacheKey],
    context: frozenset[CacheKey],
    summaries: Mapping[str, FileSymbols] | None = None,
) -> None:
    """Write the state's arrays (an ``.npz`` archive) to ``out``, with the content keys of its
    files (``keys``, every mapped file's) and of the files that are not mapped (``context``),
    and what each file's cache row says besides its texts; ``summaries``: every file's
    summary, of which those of the files of ``context`` are written as their rows' heads too
    when it holds every one of them (a new process then reads none of their rows).
    Each array is written as soon as it is made, so the lists it is gathered from are gone
    before the next is made (on a large tree they were most of a cold run's peak). ValueError
    when a name holds a NUL character (the format's separator): what was written is then
    incomplete, and the caller discards it (see :meth:`repomapper.cache.TagCache.write_state`)."""
    import zipfile

    import numpy as np

    files = sorted(state.files)
    if list(state.graph.files) != files or state.definitions.files != files:
        raise ValueError("the state's graph is not over its files")
    # what numpy.savez writes: one uncompressed .npy member per array
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in _arrays(state, keys, context, files, summaries):
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                if isinstance(array, _Strings):
                    array.write(member)
                else:
                    np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


class _Strings:
    """Many strings written as :func:`~repomapper.stringarrays.joined` writes them, a chunk at a
    time (a large tree's 3 million names joined into one string and its encoding were 140 MB at
    once)."""

    CHUNK = 1 << 16

    def __init__(self, values: Sequence[str]):
        self.values = values
        #: where each string ends in the bytes written (see
        #: :class:`~repomapper.joinedstrings.JoinedStrings`), known once written
        self.ends: Any = None

    def _parts(self) -> Iterator[bytes]:
        values, n = self.values, len(self.values)
        for lo in range(0, n, self.CHUNK):
            chunk = values[lo : lo + self.CHUNK]
            joined = "\0".join(chunk)
            if joined.count("\0") != len(chunk) - 1:
                raise ValueError("a name holds a NUL character")
            tail = "\0" if lo + self.CHUNK < n else ""
            yield (joined + tail).encode("utf-8", "surrogateescape")

    def write(self, member: IO[bytes]) -> None:
        import numpy as np

        ends, size = [], 0
        for part in self._parts():
            ends.append(separators(part) + size)
            size += len(part)
        self.ends = _ends(ends, len(self.values), size)
        header = {"descr": "|u1", "fortran_order": False, "shape": (size,)}
        np.lib.format.write_array_header_2_0(member, header)
        for part in self._parts():
            member.write(part)


def _arrays(
    state: GraphState,
    keys: Mapping[str, CacheKey],
    context: frozenset[CacheKey],
    files: list[str],
    summaries: Mapping[str, FileSymbols] | None,
) -> Iterator[tuple[str, Any]]:
    """The state's arrays by name, one at a time."""
    import numpy as np

    at = {f: i for i, f in enumerate(files)}
    i32 = np.int32
    yield "version", np.array([state_version()], dtype=np.int64)
    yield "files", joined(files)
    yield "digests", joined([keys[f].digest for f in files])
    yield "fingerprints", joined([keys[f].fingerprint for f in files])
    yield from _head_arrays([state.files[f] for f in files])
    yield "chat", joined(sorted(state.boosts[0]))
    yield "mentioned_files", joined(sorted(state.boosts[1]))
    yield "mentioned_idents", joined(sorted(state.boosts[2]))
    prior = [state.prior.get(f, 0.0) for f in files]
    yield "prior", np.array(prior, dtype=np.float64)
    # the file scores as a ranking reads them (rounded: see rank.stable), which a process that
    # loads the state would otherwise round again file by file
    yield "prior_stable", np.array([stable(x) for x in prior], dtype=np.float64)
    roles = state.rankings.weights
    if roles is not None:  # each file's role weight (1: code), asked again only when missing
        yield "role_weights", np.array([roles.get(f, 1.0) for f in files], dtype=np.float64)
    yield "out_weight", np.asarray(state.graph.out_weight, dtype=np.float64)
    t = state.table.arrays
    name_ids: Callable[[Any], Any]
    if t is not None and list(t.files) == files:  # built as arrays: written as they are
        yield from _held_table_arrays(t)
        name_ids = _searched_ids(t)
    else:
        name_at: dict[str, int] = {}
        yield from _table_arrays(state.table, files, at, name_at)

        def name_ids(values: Any) -> Any:  # identifiers as positions among the table's names
            return np.fromiter((name_at[v] for v in values), i32)

    ctx = sorted(k.content for k in context)
    yield "context", joined([part for c in ctx for part in c])
    yield from _context_heads(ctx, summaries)
    # the factored graph's layout
    a = state.blocks._assembly(tuple(files), state.definitions)
    held = t is not None and a.order_ids is not None
    yield "order", np.asarray(a.order_ids, dtype=i32) if held else name_ids(a.order)
    yield "counts", np.asarray(a.counts, dtype=np.int64)
    for name in ("r_rows", "r_cols", "d_rows", "d_cols", "d_local"):
        yield name, np.asarray(getattr(a, name), dtype=i32)
    yield "r_vals", np.asarray(a.r_vals, dtype=np.float64)
    yield "d_vals", np.asarray(a.d_vals, dtype=np.float64)
    g = state.graph
    yield "i_rows", np.asarray(g.I.rows, dtype=i32)
    yield "i_cols", np.asarray(g.I.cols, dtype=i32)
    yield "i_vals", np.asarray(g.I.vals, dtype=np.float64)
    yield from _import_arrays(state, at, files)
    # the definitions' ranking
    yield from _pair_arrays(state.ranking.definitions, files, at, name_ids, t is not None)
    # the definition index
    d = state.definitions.arrays
    yield "di_counts", np.diff(d.offsets)
    yield "di_tops", np.diff(d.top_offsets)
    held = t is not None and d.ident_ids is not None
    yield "di_idents", np.asarray(d.ident_ids, dtype=i32) if held else name_ids(d.idents)
    yield "di_kind", np.asarray(d.kind, dtype=np.float64)
    yield "di_unref", np.asarray(d.unreferenced, dtype=bool)
    yield "di_top_ids", np.asarray(d.top_ids, dtype=np.int64)
    scores = state.ranking.pairs
    if scores is not None and scores.arrays is d:  # each pair's rank before the order's
        # rounding, over the index above: a new process whose edit leaves the walk ranks
        # again only the edited files' pairs
        yield "pair_raw", np.asarray(scores.ranked, dtype=np.float64)
        yield "pair_received", np.asarray(scores.received, dtype=bool)


def _head_arrays(summaries: Sequence[FileSymbols]) -> Iterator[tuple[str, Any]]:
    """What each file's cache row says besides its texts (backend, language, diagnostics; see
    :meth:`~repomapper.snapshot.Stored.heads`): a backend or language as a position among the
    names (-1: none), the diagnostics as a JSON text per file that has any, as its row holds
    them ([code, message, severity] each)."""
    import numpy as np

    def positions(values: list[str | None]) -> tuple[list[str], Any]:
        names = sorted({v for v in values if v is not None})
        at = {v: i for i, v in enumerate(names)}
        return names, np.fromiter((-1 if v is None else at[v] for v in values), np.int32)

    n = len(summaries)
    for kind, values in (
        ("plugin", [fs.plugin for fs in summaries]),
        ("language", [fs.language for fs in summaries]),
    ):
        names, at = positions(values)
        yield f"{kind}_names", joined(names)
        yield f"file_{kind}", at
    noted = [i for i in range(n) if summaries[i].diagnostics]
    yield "diag_files", np.asarray(noted, dtype=np.int32)
    yield "diag_texts", joined([_diagnostics_text(summaries[i].diagnostics) for i in noted])


def _context_heads(
    ctx: list[tuple[str, str, str]], summaries: Mapping[str, FileSymbols] | None
) -> Iterator[tuple[str, Any]]:
    """What the cache row of each file that is not mapped says besides its texts (no backend
    answered: its language, if any, and its diagnostics' text), in the order of ``ctx``;
    nothing when a summary of one is missing or a backend answered it."""
    if summaries is None:
        return
    found = [summaries.get(path) for path, _, _ in ctx]
    if any(fs is None or fs.plugin is not None for fs in found):
        return
    yield "ctx_languages", joined([fs.language or "" for fs in found])  # type: ignore[union-attr]
    yield (
        "ctx_diagnostics",
        joined(
            [_diagnostics_text(fs.diagnostics) for fs in found]  # type: ignore[union-attr]
        ),
    )


def _diagnostics_text(diagnostics: Sequence[Diagnostic]) -> str:
    return json.dumps([[d.code, d.message, d.severity] for d in diagnostics], separators=(",", ":"))


def _pair_arrays(
    pairs: Sequence[tuple[str, str, float]],
    files: list[str],
    at: Mapping[str, int],
    name_ids: Callable[[Any], Any],
    held: bool,
) -> Iterator[tuple[str, Any]]:
    """The ranked pairs' files, identifiers (name ids) and ranks."""
    import numpy as np

    positions = pairs.file_positions(files) if isinstance(pairs, RankedPairs) else None
    if isinstance(pairs, RankedPairs) and positions is not None:
        ids = pairs.name_ids() if held else None
        yield "pair_file", np.asarray(positions, dtype=np.int32)
        if ids is None:
            yield "pair_ident", name_ids(pairs.columns()[1])
        else:
            yield "pair_ident", np.asarray(ids, dtype=np.int32)
        yield "pair_rank", np.asarray(pairs.ranks(), dtype=np.float64)
        return
    pair_files, pair_idents, pair_ranks = _columns(pairs)
    yield "pair_file", np.fromiter((at[f] for f in pair_files), np.int32, len(pair_files))
    yield "pair_ident", name_ids(pair_idents)
    yield "pair_rank", np.array(pair_ranks, dtype=np.float64)


def _held_table_arrays(t: TableArrays) -> Iterator[tuple[str, Any]]:
    """A table held as arrays, as the archive holds it."""
    import numpy as np

    yield from _names(t.names)
    for name in ("def_at", "ref_at", "tg_at", "tg_files_at", "tl_at"):
        yield name, np.array(getattr(t, name), dtype=np.int64)  # (a view of zeros made whole)
    yield "def_file", np.asarray(t.def_file, dtype=np.int32)
    yield "def_data", np.asarray(t.def_data, dtype=bool)
    yield "def_unref", np.asarray(t.def_unref, dtype=bool)
    yield "ref_file", np.asarray(t.ref_file, dtype=np.int32)
    yield "ref_count", t.ref_count  # (32 bits when every count fits)
    yield "tg_ref", np.asarray(t.tg_ref, dtype=np.int32)
    yield "tg_files", joined(t.tg_files)
    yield "tl_names", np.asarray(t.tl_ids, dtype=np.int32)


def _names(names: Sequence[str]) -> Iterator[tuple[str, Any]]:
    """The table's names, and where each ends (a stored state's names as they were read)."""
    if isinstance(names, JoinedStrings):
        yield "names", names.data
        yield "name_ends", names.ends
        return
    strings = _Strings(names)
    yield "names", strings
    yield "name_ends", strings.ends  # (written by then: the archive writes each when given)


def _ends(parts: list[Any], count: int, size: int) -> Any:
    """Where each of ``count`` strings ends, from each written part's separators (every
    part's last entry is where it ended: the next part's first string goes on from there);
    32 bits when the bytes are fewer than 2**31."""
    import numpy as np

    if not count:
        return np.zeros(0, dtype=np.int32)
    found = np.concatenate([p[:-1] for p in parts] + [np.array([size], dtype=np.int64)])
    if len(found) != count:
        raise ValueError("a name holds a NUL character")
    return found.astype(np.int32 if size < 1 << 31 else np.int64)


def _searched_ids(t: TableArrays) -> Callable[[Any], Any]:
    """Identifiers as name ids of ``t``, found by bisection (for what an update laid out
    again: the rest carries its ids)."""
    import numpy as np

    def ids(values: Any) -> Any:
        values = np.asarray(values, dtype=object)
        found = np.searchsorted(t.name_objects, values).astype(np.int32)
        if len(found) and not bool(
            (t.name_objects[np.minimum(found, len(t.names) - 1)] == values).all()
        ):
            raise ValueError("an identifier is not among the table's names")
        return found

    return ids


def _import_arrays(
    state: GraphState, at: Mapping[str, int], files: list[str]
) -> Iterator[tuple[str, Any]]:
    """The resolved imports: per importing file, its targets and counts."""
    import numpy as np

    imports = state.imports
    base = imports.base if isinstance(imports, Layered) and not imports.changed else None
    if isinstance(base, ImportRows) and list(base.files) == files:  # held as arrays
        yield "imp_file", np.asarray(base.importers, dtype=np.int32)
        yield "imp_counts", np.diff(base.starts)
        yield "imp_target", np.asarray(base.targets, dtype=np.int32)
        yield "imp_n", np.asarray(base.counts, dtype=np.int64)
        return
    importers = sorted(imports)
    edges = [sorted(imports[p].items()) for p in importers]
    yield "imp_file", np.fromiter((at[p] for p in importers), np.int32, len(importers))
    yield "imp_counts", np.array([len(e) for e in edges], dtype=np.int64)
    try:
        targets = [at[t] for e in edges for t, _ in e]
    except KeyError as exc:
        raise ValueError(f"an import resolves to a file that is not mapped: {exc}") from exc
    yield "imp_target", np.array(targets, dtype=np.int32)
    del targets
    yield "imp_n", np.array([c for e in edges for _, c in e], dtype=np.int64)


def _table_arrays(
    table: SymbolTable, files: list[str], at: Mapping[str, int], name_at: dict[str, int]
) -> Iterator[tuple[str, Any]]:
    """The symbol table as rows per name (names sorted; each name's files in path order, which
    is their index order), gathered in one pass per field and ordered by numpy; ``name_at`` is
    filled with each name's position before the first array is yielded."""
    import numpy as np

    targets: dict[str, list[tuple[str, AbstractSet[str]]]] = defaultdict(list)
    for (path, name), found in table.targets.items():
        if found:
            targets[name].append((path, found))
    names = sorted(set(table.defines) | set(table.references) | set(targets))
    name_at.update((name, i) for i, name in enumerate(names))
    k, m = name_at, len(names)
    yield from _names(names)
    del names

    def grouped(
        name_of: Sequence[int], file_of: Sequence[int], *columns: ArrayLike
    ) -> tuple[Any, ...]:
        n_ = np.array(name_of, dtype=np.int64)
        f_ = np.array(file_of, dtype=np.int64)
        order = np.lexsort((f_, n_))
        counts = np.bincount(n_, minlength=m) if len(n_) else np.zeros(m, dtype=np.int64)
        return (counts, f_[order].astype(np.int32), *(np.asarray(c)[order] for c in columns))

    def definers() -> tuple[Any, ...]:
        d_name, d_file, d_data, d_unref = [], [], [], []
        data_only, unreferenced = table.data_only, table.unreferenced
        for name, found in table.defines.items():
            i = k[name]
            for f in found:
                d_name.append(i)
                d_file.append(at[f])
                d_data.append((f, name) in data_only)
                d_unref.append((f, name) in unreferenced)
        return grouped(d_name, d_file, np.array(d_data, dtype=bool), np.array(d_unref, dtype=bool))

    def referencers() -> tuple[Any, ...]:
        r_name, r_file, r_count = array("i"), array("i"), array("q")
        for name, refs in table.references.items():
            r_name.extend(repeat(k[name], len(refs)))
            r_file.extend(at[f] for f in refs)
            r_count.extend(refs.values())
        return grouped(r_name, r_file, np.frombuffer(r_count, dtype=np.int64))

    def_n, def_file, def_data, def_unref = definers()
    yield "def_at", starts(def_n)
    yield "def_file", def_file
    yield "def_data", def_data
    yield "def_unref", def_unref
    del def_n, def_file, def_data, def_unref
    ref_n, ref_file, ref_count = referencers()
    yield "ref_at", starts(ref_n)
    yield "ref_file", ref_file
    yield "ref_count", ref_count
    del ref_n, ref_file, ref_count
    tg_n, tg_ref, tg_count, tg_files = [0] * m, [], [], []
    for name in sorted(targets):  # fewer names have resolved targets: sorted in Python
        entries = sorted(targets[name], key=lambda e: e[0])
        tg_n[k[name]] = len(entries)
        for f, found in entries:
            tg_ref.append(at[f])
            tg_count.append(len(found))
            tg_files.extend(sorted(found))
    yield "tg_at", starts(np.array(tg_n, dtype=np.int64))
    yield "tg_ref", np.array(tg_ref, dtype=np.int32)
    yield "tg_files_at", starts(np.array(tg_count, dtype=np.int64))
    yield "tg_files", joined(tg_files)
    del tg_n, tg_ref, tg_count, tg_files
    tops = [table.top_level.get(f, ()) for f in files]
    yield "tl_names", np.fromiter((k[n] for t in tops for n in t), np.int32)
    yield "tl_at", starts(np.array([len(t) for t in tops], dtype=np.int64))


def _columns(
    pairs: Sequence[tuple[str, str, float]],
) -> tuple[list[str], list[str], list[float]]:
    if isinstance(pairs, RankedPairs):
        return pairs.columns()
    return [f for f, _, _ in pairs], [i for _, i, _ in pairs], [r for _, _, r in pairs]
