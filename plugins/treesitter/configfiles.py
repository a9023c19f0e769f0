"""Reading the configuration files resolution consults (``tsconfig.json``, ``package.json``,
``Cargo.toml``): bounded, decoded leniently, and a broken one costs only what it would name."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

#: more of a configuration file than this is not read
MAX_CONFIG_BYTES = 1 << 20


def read_config(
    root: Path, rel_path: str, parse: Callable[[str], Any], *, quiet: bool = False
) -> dict[str, Any] | None:
    """The table ``parse`` makes of the file at ``rel_path``, or None when it cannot be read,
    does not parse (logged with the code ``config_unreadable``: a warning, or with ``quiet``
    only an info line, for files that are often broken on purpose, such as test fixtures'
    manifests) or is not a table."""
    try:
        with open(root / rel_path, "rb") as fh:
            data = parse(fh.read(MAX_CONFIG_BYTES).decode("utf-8", errors="replace"))
    except (OSError, ValueError) as exc:  # (json and tomllib errors are ValueErrors)
        log.log(
            logging.INFO if quiet else logging.WARNING,
            "%s: cannot read: %s",
            rel_path,
            exc,
            extra={"code": "config_unreadable", "path": rel_path},
        )
        return None
    return data if isinstance(data, dict) else None
