"""What each :class:`AgentRole` changes in the selection.

=========  ==============================================================================
coding     full targets; full bodies of the symbols the targets use directly (depth 1);
           signatures of indirect dependencies; direct callers as signatures; tests of the
           targets at the table's 0.5
reviewing  full targets; dependents (callers, subclasses, importers) two levels up, weighted
           as direct dependencies (0.6); tests of the targets at 0.7 with their bodies;
           dependencies as signatures only
planning   targets as outlines (signatures and docstrings, no bodies); three times as many
           files from the relevance model, as outlines; nothing in full
testing    full targets; tests of the targets first after them (0.9) and in full; fixtures
           (``conftest``) of those tests; dependencies as signatures
debugging  full targets and the files the task names (traceback frames); full bodies of
           direct dependencies; direct callers (0.5)
=========  ==============================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

from .models import AgentRole


@dataclass(frozen=True, slots=True)
class RolePolicy:
    role: AgentRole
    #: files taken from the relevance model's ranking (before the MIN_RELEVANCE_SCORE cut)
    relevance_files: int
    #: the best mode a target may take (``full`` or ``outline``)
    target_mode: str
    #: the best mode a file that is not a target may take
    other_mode: str
    #: direct dependencies get the bodies of the symbols used (else signatures)
    dependency_bodies: bool
    dependent_depth: int
    dependent_factor: float
    test_factor: float
    test_bodies: bool
    named_full: bool = False


POLICIES: dict[AgentRole, RolePolicy] = {
    AgentRole.CODING: RolePolicy(
        AgentRole.CODING, 12, "full", "outline", True, 1, 0.35, 0.5, False
    ),
    AgentRole.REVIEWING: RolePolicy(
        AgentRole.REVIEWING, 12, "full", "outline", False, 2, 0.6, 0.7, True
    ),
    AgentRole.PLANNING: RolePolicy(
        AgentRole.PLANNING, 36, "outline", "outline", False, 1, 0.35, 0.4, False
    ),
    AgentRole.TESTING: RolePolicy(
        AgentRole.TESTING, 12, "full", "outline", False, 1, 0.35, 0.9, True
    ),
    AgentRole.DEBUGGING: RolePolicy(
        AgentRole.DEBUGGING, 12, "full", "outline", True, 1, 0.5, 0.5, False, named_full=True
    ),
}


def policy_for(role: AgentRole | str) -> RolePolicy:
    try:
        return POLICIES[AgentRole(role)]
    except ValueError as exc:
        names = ", ".join(r.value for r in AgentRole)
        raise ValueError(f"unknown role {role!r} (one of: {names})") from exc
