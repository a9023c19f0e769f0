"""The ``foo`` backend: behaves as ``FOO_MODE`` says (see the package docstring)."""

from __future__ import annotations

import ctypes
import os
import time

from repomapper.hookspecs import hookimpl
from repomapper.model import DEF, BackendInfo, Tag

NAME = "foo"


def mode() -> str:
    return os.environ.get("FOO_MODE", "ok")


@hookimpl
def backend_info():
    if mode() == "wrong_info":
        return {"name": NAME, "extensions": [".foo"]}
    extensions = ("*",) if mode() == "claim_all" else (".foo", ".bar")
    return BackendInfo(NAME, "1.0", ("foo",), extensions, ("definitions",))


@hookimpl
def prepare_batch(sources):
    if mode() == "prepare_crash" and any(s.path.endswith("bad.foo") for s in sources):
        ctypes.string_at(0)


def _sound(source) -> list[Tag]:
    first = source.data.decode("utf-8", "replace").split()
    name = first[0] if first else "empty"
    return [Tag(source.path, 1, 1, name, DEF, "function")]


@hookimpl
def extract_tags(source):
    m = mode()
    if m == "claim_all" and not source.path.endswith(".foo"):
        return []
    if not source.path.endswith((".foo", ".bar")):
        return None
    if m == "prepare_crash":
        return _sound(source)
    if m == "hang":
        time.sleep(3600)
    elif m == "segfault":
        ctypes.string_at(0)
    elif m == "exit":
        os._exit(3)
    elif m == "raise":
        raise RuntimeError("foo cannot parse this")
    elif m == "garbage":
        return [{"name": "x"}, None, "str", 42]
    elif m == "lines":
        return [
            *_sound(source),
            Tag(source.path, -5, 1, "neg", DEF),
            Tag(source.path, 10**9, 10**9, "far", DEF),
        ]
    elif m == "million":
        return [Tag(source.path, 1, 1, "x", DEF)] * 1_000_000
    return _sound(source)
