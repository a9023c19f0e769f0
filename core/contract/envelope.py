"""The repo.map response envelope: built and serialised here, and nowhere else.

Every answer has the same keys (:data:`ENVELOPE_KEYS`, pinned by a test and by
``docs/schemas/repo_map.response.json``) and one of three outcomes:

- ``ok``: a map was produced (``reason`` is null);
- ``empty``: nothing to show, legitimately; ``reason.code`` says why (:data:`EMPTY_REASONS`) and
  ``counts`` explain it;
- ``error``: the request could not be answered; ``reason.code`` is one of :data:`ERROR_CODES` with
  an actionable message (``install`` carries the command for ``backend_missing``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, is_dataclass
from typing import Any

from ..installable import CODE as INSTALLABLE
from ..model import Diagnostic, MapResult

SCHEMA = "repomapper.map/1"
OUTCOMES = ("ok", "empty", "error")
EMPTY_REASONS = {
    "no_files_matched": "no file under clone_path matched include_globs / languages (or the directory is empty)",
    "no_backend": "files matched, but no backend handles their types",
    "all_backends_missing": "files matched, but every backend that would map them is unavailable (see install)",
    "extraction_failed": "files matched, but every extraction failed (parse or backend errors; see diagnostics)",
    "no_symbols": "files were mapped, but none defines a symbol (the map lists file names only)",
    "all_in_chat": "every mapped file is a chat file, and chat files are left out of the map",
    "budget_too_small": "token_budget cannot hold even the first entry of the map",
}
ERROR_CODES = {
    "invalid_input": "the request is malformed; field, value and suggestion say what to fix",
    "backend_missing": "the request needs a backend that is not installed; install says how",
    "internal": "repomapper failed; the message says where (please report it)",
}
#: What to do about each empty reason (the envelope's ``next``).
NEXT_FOR_EMPTY = {
    "no_files_matched": "check clone_path, include_globs and languages (counts.files_seen is how many files exist)",
    "no_backend": "these file types have no backend: `repomapper plugins` lists what is installed",
    "all_backends_missing": "install what reason.install says, then call again",
    "extraction_failed": "the diagnostics name each file and why it failed",
    "no_symbols": "the files define nothing: read them directly, or widen include_globs",
    "all_in_chat": "pass fewer chat_files to see the rest of the repository",
    "budget_too_small": "raise token_budget",
}
COUNT_KEYS = (
    "files_seen",
    "files_total",
    "files_mapped",
    "files_covered",
    "files_no_backend",
    "files_backend_unavailable",
    "symbols_ranked",
)
ENVELOPE_KEYS = (
    "schema",
    "outcome",
    "reason",
    "map",
    "tokens_estimated",
    "tokens_exact",
    "tokenizer",
    "token_budget",
    "files_covered",
    "files_total",
    "counts",
    "ranked_files",
    "ranked_files_total",
    "ranked_symbols",
    "diagnostics",
    "next",
)


@dataclass(frozen=True, slots=True)
class Reason:
    """Why an answer is empty or an error: a stable code and what the caller can do."""

    code: str
    message: str
    field: str | None = None
    value: Any = None
    suggestion: str | None = None
    install: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"code": self.code, "message": self.message}
        for key in ("field", "value", "suggestion", "install"):
            v = getattr(self, key)
            if v is not None:
                d[key] = v
        return d


@dataclass(frozen=True, slots=True)
class Envelope:
    """One repo.map answer. :meth:`to_dict` is the wire form; :meth:`to_json` its serialisation."""

    outcome: str
    reason: Reason | None = None
    map: str = ""
    tokens_estimated: int = 0
    tokens_exact: bool = False
    tokenizer: str = ""
    token_budget: int = 0
    files_covered: int = 0
    files_total: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    ranked_files: tuple[dict[str, Any], ...] = ()
    ranked_files_total: int = 0
    ranked_symbols: tuple[dict[str, Any], ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    next: str | None = None

    @property
    def is_error(self) -> bool:
        return self.outcome == "error"

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "outcome": self.outcome,
            "reason": self.reason.to_dict() if self.reason else None,
            "map": self.map,
            "tokens_estimated": self.tokens_estimated,
            "tokens_exact": self.tokens_exact,
            "tokenizer": self.tokenizer,
            "token_budget": self.token_budget,
            "files_covered": self.files_covered,
            "files_total": self.files_total,
            "counts": {k: int(self.counts.get(k, 0)) for k in COUNT_KEYS},
            "ranked_files": [dict(f) for f in self.ranked_files],
            "ranked_files_total": self.ranked_files_total,
            "ranked_symbols": [dict(s) for s in self.ranked_symbols],
            "diagnostics": [d.to_dict() for d in self.diagnostics],
            "next": self.next,
        }

    def to_json(self, indent: int | None = None) -> str:
        """Deterministic: same envelope, same bytes."""
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent, sort_keys=False)


def _why_item(raw: Any) -> dict[str, Any]:
    if hasattr(raw, "to_dict"):
        raw = raw.to_dict()
    elif is_dataclass(raw) and not isinstance(raw, type):
        raw = asdict(raw)
    elif isinstance(raw, tuple | list) and len(raw) == 3:
        raw = dict(zip(("signal", "detail", "weight"), raw, strict=True))
    if not isinstance(raw, Mapping):
        return {"signal": "unknown", "detail": str(raw), "weight": 0.0}
    return {
        "signal": str(raw.get("signal", "")),
        "detail": str(raw.get("detail", "")),
        "weight": float(raw.get("weight", 0.0) or 0.0),
    }


def ranked_file_entry(f: Any) -> dict[str, Any]:
    """``{"path", "score", "why": [{"signal", "detail", "weight"}]}`` from a RankedFile (``why``
    is optional on RankedFile: absent or empty gives an empty list)."""
    return {
        "path": f.path,
        "score": float(f.score),
        "why": [_why_item(w) for w in (getattr(f, "why", None) or ())],
    }


_COUNT_RE = re.compile(r"^(\d+) ")


def diagnostic_file_count(diags: Sequence[Diagnostic], code: str) -> int:
    """How many files a (summarised) diagnostic code covers."""
    n = 0
    for d in diags:
        if d.code != code:
            continue
        m = _COUNT_RE.match(d.message)
        n += int(m.group(1)) if m and d.path is None else max(1, len(d.paths))
    return n


def from_result(
    result: MapResult,
    *,
    max_ranked: int,
    reason: Reason | None = None,
    extra_counts: Mapping[str, int] | None = None,
) -> Envelope:
    """The envelope of a finished map: ``ok`` unless ``reason`` says it is empty."""
    files_mapped = int(result.extra.get("files_mapped", len(result.ranked_files)))
    counts = {
        "files_seen": int(result.extra.get("files_seen", result.files_total)),
        "files_total": result.files_total,
        "files_mapped": files_mapped,
        "files_covered": result.files_covered,
        "files_no_backend": diagnostic_file_count(result.diagnostics, "no_backend"),
        "files_backend_unavailable": diagnostic_file_count(
            result.diagnostics, "backend_unavailable"
        ),
        "symbols_ranked": len(result.ranked_symbols),
    }
    counts.update(extra_counts or {})
    ranked = result.ranked_files[:max_ranked]
    hints = []
    if result.map and result.files_covered < files_mapped:
        hints.append(
            f"the map covers {result.files_covered} of {files_mapped} mapped files: raise token_budget "
            f"(now {result.budget}), narrow include_globs, or pass task to focus it"
        )
    if len(ranked) < len(result.ranked_files):
        hints.append(
            f"ranked_files lists {len(ranked)} of {len(result.ranked_files)}: raise max_ranked for more"
        )
    hints.extend(_installable_hints(result.diagnostics))
    return Envelope(
        outcome="empty" if reason else "ok",
        reason=reason,
        map=result.map,
        tokens_estimated=result.tokens,
        tokens_exact=result.tokens_exact,
        tokenizer=result.tokenizer,
        token_budget=result.budget,
        files_covered=result.files_covered,
        files_total=result.files_total,
        counts=counts,
        ranked_files=tuple(ranked_file_entry(f) for f in ranked),
        ranked_files_total=len(result.ranked_files),
        ranked_symbols=tuple(s.to_dict() for s in result.ranked_symbols[:max_ranked]),
        diagnostics=result.diagnostics,
        next="; ".join(hints) or (NEXT_FOR_EMPTY.get(reason.code) if reason else None),
    )


def _installable_hints(diagnostics: Sequence[Diagnostic]) -> list[str]:
    """A hint per language whose files a grammar not installed would map better: its info
    diagnostic (how many files, and the command), which the CLI shows only with -v."""
    return [d.message for d in diagnostics if d.code == INSTALLABLE]


def error(
    reason: Reason,
    *,
    token_budget: int = 0,
    tokenizer: str = "",
    diagnostics: Sequence[Diagnostic] = (),
) -> Envelope:
    """An ``error`` envelope: nothing mapped, the reason says what to do."""
    if reason.code not in ERROR_CODES:
        raise ValueError(f"not an error code: {reason.code}")
    return Envelope(
        outcome="error",
        reason=reason,
        token_budget=token_budget,
        tokenizer=tokenizer,
        diagnostics=tuple(diagnostics),
        next="fix the request as the reason says and call again"
        if reason.code == "invalid_input"
        else None,
    )
