"""What one call asks for, as frozen values: which files (:class:`Selection`) and what map
(:class:`MapSettings`). A stage is a function of these and the repository state
(:mod:`repomapper.state`); the memoised map's key hashes them (see :mod:`repomapper.memo`)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field

#: the map's default budget in tokens, on every surface (the CLI, the library, MCP)
DEFAULT_MAP_TOKENS = 1024


@dataclass(frozen=True, slots=True)
class Selection:
    """Which of the repository's files a call works on: those discovery lists that match
    ``include`` and not ``exclude`` (gitignore-style globs), or exactly ``files`` (paths
    relative to the root, or absolute) when given."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    files: tuple[str, ...] | None = None

    @classmethod
    def of(
        cls,
        include: Iterable[str] = (),
        exclude: Iterable[str] = (),
        files: Iterable[str | os.PathLike[str]] | None = None,
    ) -> Selection:
        return cls(
            tuple(include),
            tuple(exclude),
            None if files is None else tuple(os.fspath(f) for f in files),
        )


#: every file discovery lists
ALL_FILES = Selection()


@dataclass(frozen=True, slots=True)
class MapSettings:
    """Everything a map of the repository state depends on besides the files themselves."""

    budget: int = DEFAULT_MAP_TOKENS
    selection: Selection = field(default_factory=Selection)
    #: files in the chat: their references weigh 50 times more; they are left out of the map
    chat_files: tuple[str, ...] = ()
    mentioned_files: tuple[str, ...] = ()
    mentioned_idents: tuple[str, ...] = ()
    #: a task description in words: the relevance model ranks for it
    task: str | None = None
    #: relevance signals switched off (for measuring what each adds)
    disabled_signals: frozenset[str] = frozenset()
    #: Aider's ``map_mul_no_files``: the budget's multiplier when no file is in the chat
    map_mul_no_files: float = 1.0
    #: Aider's ``repo_content_prefix``: a text put before a non-empty map
    prefix: str | None = None
    #: rank and render again instead of replaying a memoised map
    force_refresh: bool = False

    def __post_init__(self) -> None:
        if self.budget < 1:
            raise ValueError(f"map_tokens must be at least 1 (got {self.budget})")

    @classmethod
    def of(
        cls,
        budget: int = DEFAULT_MAP_TOKENS,
        selection: Selection | None = None,
        chat_files: Iterable[str | os.PathLike[str]] = (),
        mentioned_files: Iterable[str | os.PathLike[str]] | None = None,
        mentioned_idents: Iterable[str] | None = None,
        task: str | None = None,
        **rest: object,
    ) -> MapSettings:
        """Settings from the loose arguments of Aider's interface (any iterables, None)."""
        return cls(
            int(budget),
            selection or Selection(),
            tuple(os.fspath(f) for f in chat_files),
            tuple(os.fspath(f) for f in mentioned_files or ()),
            tuple(mentioned_idents or ()),
            task,
            **rest,  # type: ignore[arg-type]
        )

    def effective_budget(self, has_chat: bool) -> int:
        """The budget a map renders to: ``map_mul_no_files`` applies when nothing is in chat."""
        if not has_chat and self.map_mul_no_files != 1.0:
            return max(1, int(self.budget * self.map_mul_no_files))
        return self.budget
