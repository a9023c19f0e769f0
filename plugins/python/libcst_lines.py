"""Line spans of libcst nodes, computed like ``PositionProvider`` but lines only, at lower cost.

libcst's ``PositionProvider`` generates the module's code once, recording a ``CodeRange`` of
``CodePosition`` objects for every node; that is about a fifth of the backend's time. The
backend only needs line numbers, so :func:`line_spans` runs the same code generation with a
leaner state: it makes the same ``before_codegen`` / ``after_codegen`` /
``record_syntactic_position`` calls as libcst's own position state (so the spans are the
syntactic ones ``PositionProvider`` gives: decorators, leading comments and trailing newlines
excluded), but keeps a pair of ints and counts only newlines.

``CodegenState`` is libcst's code-generation state (``libcst._nodes.internal``), stable since
libcst 0.3. Should it ever be missing or change shape, :func:`line_spans` falls back to
``PositionProvider`` (slower, same result); the tests compare both on every fixture.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

log = logging.getLogger(__name__)

Span = tuple[int, int]

try:
    from libcst._nodes.internal import CodegenState
except ImportError:  # pragma: no cover - depends on libcst's internals
    CodegenState = None  # type: ignore[assignment,misc]


def _newlines(value: str) -> int:
    """Line breaks in ``value`` (``\\r\\n``, ``\\r`` and ``\\n`` each count once)."""
    return value.count("\n") + value.count("\r") - value.count("\r\n")


if CodegenState is not None:

    @dataclass(frozen=False)
    class _LineState(CodegenState):
        spans: dict[cst.CSTNode, Span] = field(default_factory=dict)
        line: int = 1
        starts: list[int] = field(default_factory=list)

        def add_indent_tokens(self) -> None:
            self.tokens.extend(self.indent_tokens)  # indentation holds no line breaks

        def add_token(self, value: str) -> None:
            self.tokens.append(value)
            if "\n" in value or "\r" in value:
                self.line += _newlines(value)

        def before_codegen(self, node: cst.CSTNode) -> None:
            self.starts.append(self.line)

        def after_codegen(self, node: cst.CSTNode) -> None:
            start = self.starts.pop()
            if node not in self.spans:  # a syntactic position recorded inside wins
                self.spans[node] = (start, self.line)

        @contextmanager
        def record_syntactic_position(
            self,
            node: cst.CSTNode,
            *,
            start_node: cst.CSTNode | None = None,
            end_node: cst.CSTNode | None = None,
        ) -> Iterator[None]:
            start = self.line
            try:
                yield
            finally:
                end = self.line
                if start_node is not None:
                    start = self.spans[start_node][0]
                if end_node is not None:
                    end = self.spans[end_node][1]
                self.spans[node] = (start, end)


def position_spans(module: cst.Module) -> dict[cst.CSTNode, Span]:
    """Line spans from libcst's own ``PositionProvider`` (the reference implementation)."""
    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return {node: (r.start.line, r.end.line) for node, r in positions.items()}


def line_spans(module: cst.Module) -> Mapping[cst.CSTNode, Span]:
    """(start line, end line) of every node of ``module``, 1-based and inclusive."""
    if CodegenState is None:
        return position_spans(module)
    try:
        state = _LineState(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
    except TypeError:  # pragma: no cover - CodegenState changed shape
        log.debug("libcst CodegenState changed; using PositionProvider")
        return position_spans(module)
    module._codegen(state)
    return state.spans
