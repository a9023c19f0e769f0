"""The settings that bound what a plugin may cost: time per hook call, tags per file, failures."""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace

log = logging.getLogger(__name__)

#: Seconds one plugin hook call (one file, or one ``prepare_batch``) may take.
ENV_TIMEOUT = "REPOMAPPER_PLUGIN_TIMEOUT"
#: Most tags one plugin may return for one file; more and its answer is rejected.
ENV_MAX_TAGS = "REPOMAPPER_MAX_TAGS_PER_FILE"
#: Failures in a row after which a plugin is disabled for the rest of the run.
ENV_MAX_FAILURES = "REPOMAPPER_PLUGIN_MAX_FAILURES"
#: Set to 0/false/no to run plugin hooks in-process (no crash or hang containment).
ENV_ISOLATE = "REPOMAPPER_ISOLATE"

DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_TAGS = 250_000
DEFAULT_MAX_FAILURES = 8


def _env_number(name: str, default: float, minimum: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        log.warning("%s=%r is not a number; using %s", name, raw, default)
        return default
    if value < minimum:
        log.warning("%s=%r is below %s; using %s", name, raw, minimum, default)
        return default
    return value


@dataclass(frozen=True, slots=True)
class Limits:
    """How much a plugin may cost before the framework steps in.

    ``timeout`` bounds one hook call in seconds (a file's ``extract_tags`` and
    ``extract_imports``, or one ``prepare_batch``); ``max_tags`` bounds the tags one plugin
    returns for one file; ``max_failures`` is how many files in a row a plugin may crash, hang,
    raise or answer invalidly on before it is disabled for the rest of the run. ``isolate``
    runs hooks in supervised worker processes (where the platform can fork); without it a crash
    or a hang of a hook is not contained.
    """

    timeout: float = DEFAULT_TIMEOUT
    max_tags: int = DEFAULT_MAX_TAGS
    max_failures: int = DEFAULT_MAX_FAILURES
    isolate: bool = True

    def __post_init__(self) -> None:
        if not self.timeout > 0:
            raise ValueError(f"the plugin timeout must be positive (got {self.timeout})")
        if self.max_tags < 1:
            raise ValueError(f"the tag cap must be at least 1 (got {self.max_tags})")
        if self.max_failures < 1:
            raise ValueError(f"max_failures must be at least 1 (got {self.max_failures})")

    @classmethod
    def from_env(cls) -> Limits:
        """Defaults, overridden by the ``REPOMAPPER_*`` environment variables above."""
        isolate = os.environ.get(ENV_ISOLATE, "").strip().lower() not in {"0", "false", "no", "off"}
        return cls(
            timeout=_env_number(ENV_TIMEOUT, DEFAULT_TIMEOUT, 0.001),
            max_tags=int(_env_number(ENV_MAX_TAGS, DEFAULT_MAX_TAGS, 1)),
            max_failures=int(_env_number(ENV_MAX_FAILURES, DEFAULT_MAX_FAILURES, 1)),
            isolate=isolate,
        )

    def with_timeout(self, timeout: float | None) -> Limits:
        return self if timeout is None else replace(self, timeout=float(timeout))
