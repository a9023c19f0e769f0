"""Files whose code holds a message the task shows (an error a reporter pasted, a string quoted
in their prose): the program printed it, so the code that prints it is where to look.

A message is looked for as written, in the files that have every one of its search terms (the
lexical index's postings say which, without reading a file), most task-like first (by the
task's lexical score), at most :data:`MAX_READ` per message. A message held by more code files
than :data:`MAX_HOLDERS` says nothing of where to look (a phrase the whole code base prints);
otherwise each holder is worth ``1 / holders``. Only code files hold messages here: a test
asserting the message repeats it, and would dilute the file that prints it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from .lexical import LexicalIndex, text_terms
from .roles import CODE, file_role
from .symbols import file_text

#: Candidate files read per message (the files with all its terms, the best lexical match first).
MAX_READ = 30
#: Files read per task over all its messages (each file once).
MAX_READ_TOTAL = 120
#: More code files than this holding one message: the message is not evidence of any of them.
MAX_HOLDERS = 5


def message_files(
    messages: Sequence[str],
    lexical: LexicalIndex,
    lex_score: Mapping[str, float],
    paths: frozenset[str] | set[str],
    read: Callable[[str], bytes | None] | None,
) -> dict[str, tuple[float, str]]:
    """Each code file of ``paths`` holding one of ``messages`` (``read`` gives a file's bytes;
    none are read without it), with its best message: worth 1 / (the code files holding that
    message), for messages held by at most :data:`MAX_HOLDERS` (ties: the message shown
    first)."""
    if not messages or read is None:
        return {}
    texts = _Texts(read, MAX_READ_TOTAL)
    best: dict[str, tuple[float, str]] = {}
    for message in messages:
        holders = [
            p for p in _candidates(message, lexical, lex_score, paths) if texts.holds(p, message)
        ]
        if not holders or len(holders) > MAX_HOLDERS:
            continue
        value = 1.0 / len(holders)
        for p in holders:
            if value > best.get(p, (0.0, ""))[0]:
                best[p] = (value, message)
    return best


def _candidates(
    message: str,
    lexical: LexicalIndex,
    lex_score: Mapping[str, float],
    paths: frozenset[str] | set[str],
) -> list[str]:
    """The code files of ``paths`` whose text has every search term of ``message``, the best
    lexical match first (then by path), at most :data:`MAX_READ`."""
    words = text_terms(message)
    found = [p for p in lexical.files_with_all(words) if p in paths and file_role(p) == CODE]
    found.sort(key=lambda p: (-lex_score.get(p, 0.0), p))
    return found[:MAX_READ]


class _Texts:
    """Files' texts read once per task, at most ``limit`` files."""

    def __init__(self, read: Callable[[str], bytes | None], limit: int):
        self._read = read
        self._limit = limit
        self._texts: dict[str, str | None] = {}

    def holds(self, path: str, message: str) -> bool:
        if path not in self._texts:
            if len(self._texts) >= self._limit:
                return False
            self._texts[path] = file_text(self._read, path)
        text = self._texts[path]
        return text is not None and message in text
