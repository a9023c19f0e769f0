"""A third-party plugin that is no backend: it only wraps ``extract_tags`` (pluggy's new-style
``wrapper=True``) to post-process every backend's tags. ``WRAPPER_MODE``: ``hide`` (default)
drops the definitions named ``internal_*`` and the references to them; ``raise`` raises after
the backend answered (a broken wrapper)."""

from __future__ import annotations

import os
from collections.abc import Generator, Sequence

from repomapper.plugin import SourceFile, Tag, hookimpl


@hookimpl(wrapper=True)
def extract_tags(source: SourceFile) -> Generator[None, Sequence[Tag] | None, Sequence[Tag] | None]:
    tags = yield
    if os.environ.get("WRAPPER_MODE") == "raise":
        raise RuntimeError("wrapper broke")
    if tags is None:
        return None
    return [t for t in tags if not t.name.startswith("internal_")]
