"""The diagnostics policy: which per-file codes are summarised into one diagnostic listing the
files, at what severity, and the order a result lists diagnostics in."""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Sequence

from .model import Diagnostic

#: Per-file diagnostic codes summarised into one diagnostic per code (with the paths listed).
SUMMARISED = {
    "no_backend": "{n} file(s) have no backend for their type (extensions: {ext})",
    "binary": "{n} binary file(s) skipped",
    "minified": "{n} minified file(s) skipped",
    "generated": "{n} file(s) marked as generated, ranked below code",
    "too_large": "{n} file(s) over the size limit skipped",
    "backend_unavailable": "{n} file(s) could not be mapped because their backend is unavailable: {detail}",
    "symlink_outside_root": "{n} symlink(s) leading outside the repository skipped",
}
#: Summarised codes that stay warnings (the others are info: expected in any repository).
WARNING_CODES = frozenset({"backend_unavailable", "symlink_outside_root"})
#: A summary lists at most this many paths (every one for ``backend_unavailable``).
MAX_LISTED_PATHS = 50
SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


#: how many of the latest summaries are remembered with what they were made of
REMEMBERED = 4
_remembered: list[tuple[tuple[Diagnostic, ...], tuple[Diagnostic, ...]]] = []


def summarise(diags: Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Per-file diagnostics of the common kinds become one diagnostic per kind listing paths,
    and so does any other per-file code reported for more than MAX_LISTED_PATHS files (a large
    tree whose C files a grammar parses only in part would otherwise give a line per file); the
    result is de-duplicated and sorted (errors first). A long-lived process summarises the same
    diagnostics on every call (tens of thousands on a large tree, most of them the very objects
    of the call before): the latest summaries are remembered by what they were made of."""
    made_of = tuple(diags)
    for seen, summary in _remembered:
        if len(seen) == len(made_of) and seen == made_of:
            return summary
    summary = _summarised(made_of)
    _remembered[:] = [(made_of, summary), *_remembered[: REMEMBERED - 1]]
    return summary


def _summarised(diags: Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
    grouped: dict[str, list[Diagnostic]] = defaultdict(list)
    per_file: dict[str, list[Diagnostic]] = defaultdict(list)
    out: list[Diagnostic] = []
    for d in dict.fromkeys(diags):
        if d.code in SUMMARISED and d.path is not None:
            grouped[d.code].append(d)
        elif d.path is not None and not d.paths:
            per_file[d.code].append(d)
        else:
            out.append(d)
    for code in sorted(grouped):
        group = grouped[code]
        paths = sorted({d.path for d in group if d.path})
        exts = Counter(_suffix_or_name(p) for p in paths)
        ext = ", ".join(
            f"{e} ({n})" for e, n in sorted(exts.items(), key=lambda x: (-x[1], x[0]))[:10]
        )
        detail = sorted({d.message for d in group})[0]
        listed = paths if code == "backend_unavailable" else paths[:MAX_LISTED_PATHS]
        severity = "warning" if code in WARNING_CODES else "info"
        message = SUMMARISED[code].format(n=len(paths), ext=ext, detail=detail)
        if len(listed) < len(paths):
            message += f"; first {len(listed)} listed"
        out.append(Diagnostic(code, message, None, severity, tuple(listed)))
    for code in sorted(per_file):
        group = per_file[code]
        if len({d.path for d in group}) <= MAX_LISTED_PATHS:
            out.extend(group)
        else:
            out.append(_crowded(code, group))
    out.sort(key=lambda d: (SEVERITY_ORDER.get(d.severity, 3), d.code, d.path or "", d.message))
    return tuple(out)


def _suffix_or_name(path: str) -> str:
    """The path's suffix as pathlib gives it (case kept), else its name: without a ``Path`` per
    file (a large tree reports tens of thousands of files of one code)."""
    name = path.rsplit("/", 1)[-1]
    dot = name.rfind(".")
    return name if dot <= 0 or dot == len(name) - 1 else name[dot:]


#: how many of a crowded code's messages its summary quotes
QUOTED_MESSAGES = 3


def _crowded(code: str, group: Sequence[Diagnostic]) -> Diagnostic:
    """One diagnostic for a code reported for many files: how many, its commonest messages
    (with how many files each), the first paths, at the group's most severe level."""
    # only the first few paths and messages are shown: picked, not sorted (a code a grammar
    # reports for tens of thousands of files, each with its own message)
    paths = {d.path for d in group if d.path}
    messages = Counter(d.message for d in group)
    common = heapq.nsmallest(QUOTED_MESSAGES, messages.items(), key=lambda kv: (-kv[1], kv[0]))
    quoted = "; ".join(f"{m} ({n})" for m, n in common)
    if len(messages) > QUOTED_MESSAGES:
        quoted += f"; {len(messages) - QUOTED_MESSAGES} other message(s)"
    severity = min((d.severity for d in group), key=lambda s: SEVERITY_ORDER.get(s, 3))
    message = f"{len(paths)} files: {quoted}; first {MAX_LISTED_PATHS} listed"
    listed = tuple(heapq.nsmallest(MAX_LISTED_PATHS, paths))
    return Diagnostic(code, message, None, severity, listed)
