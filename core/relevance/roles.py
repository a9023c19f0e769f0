"""What a file is for, from its path: code, or a test, example, documentation or vendored copy.

A task that is not about tests rarely needs a test file first, and never an example or a vendored
copy of a library; those files still rank, below the code they exercise.
"""

from __future__ import annotations

import posixpath

CODE = "code"
TEST = "test"
EXAMPLE = "example"
DOCS = "docs"
VENDORED = "vendored"

_TEST_DIRS = frozenset(
    {"test", "tests", "testing", "__tests__", "spec", "specs", "testdata", "test_data", "fixtures"}
)
_EXAMPLE_DIRS = frozenset(
    {"example", "examples", "sample", "samples", "demo", "demos", "benchmarks", "bench"}
)
_DOC_DIRS = frozenset({"doc", "docs", "documentation"})
_VENDOR_DIRS = frozenset(
    {
        "vendor",
        "vendored",
        "third_party",
        "thirdparty",
        "external",
        "extern",
        "node_modules",
        "_vendor",
    }
)


def file_role(path: str) -> str:
    parts = path.lower().split("/")
    dirs, name = parts[:-1], parts[-1]
    stem = name.rsplit(".", 1)[0]
    if any(d in _VENDOR_DIRS for d in dirs):
        return VENDORED
    if (
        any(d in _TEST_DIRS for d in dirs)
        or stem.startswith("test_")
        or stem.endswith(("_test", "_tests", ".test", ".spec", "_spec"))
        or stem in ("conftest", "tests", "test")
    ):
        return TEST
    if any(d in _EXAMPLE_DIRS for d in dirs):
        return EXAMPLE
    if any(d in _DOC_DIRS for d in dirs):
        return DOCS
    return CODE


def tested_stem(path: str) -> str | None:
    """The stem of the module a test file is named after (``tests/test_fields.py`` -> ``fields``)."""
    stem = posixpath.basename(path).rsplit(".", 1)[0]
    for prefix in ("test_",):
        if stem.startswith(prefix) and len(stem) > len(prefix):
            return stem[len(prefix) :]
    for suffix in ("_test", "_tests", ".test", ".spec", "_spec"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[: -len(suffix)]
    return None
