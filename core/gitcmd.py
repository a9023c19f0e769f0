"""git run in a repository that may be hostile: an argument list, never a shell, and the
repository's own configuration unable to run anything (no fsmonitor hook); None when git cannot
be run at all."""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

log = logging.getLogger(__name__)

GIT_TIMEOUT = 60
#: git with the repository's own configuration unable to run anything (no fsmonitor hook).
GIT = (
    "git",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.quotepath=off",
)


def run_git(
    root: Path, args: Sequence[str], stdin: bytes | None = None
) -> subprocess.CompletedProcess[bytes] | None:
    """Run git in ``root`` with the repository's own configuration unable to run anything; None
    when git cannot be run at all."""
    try:
        return subprocess.run(
            [*GIT, *args],
            cwd=root,
            input=stdin,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            check=False,
            env={
                **os.environ,
                "GIT_OPTIONAL_LOCKS": "0",
                "GIT_TERMINAL_PROMPT": "0",
                "LC_ALL": "C",
            },
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.debug("git unavailable: %s", exc)
        return None
