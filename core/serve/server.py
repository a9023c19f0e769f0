"""``repomapper mcp``: the tools of :class:`~repomapper.serve.service.Service` over MCP stdio,
with the official ``mcp`` SDK (``pip install "repomapper[mcp]"``)."""

from __future__ import annotations

import gc
import json
import logging
from typing import TYPE_CHECKING, Any

from ..contract.schema import RESPONSE_SCHEMA
from .service import Service

if TYPE_CHECKING:
    from mcp.server import Server

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "repomapper answers questions about a source repository from a live index. Call repo_map first, "
    "with `task` set to what you are doing, to see the files and definitions that matter; then "
    "find_symbol / file_outline / find_references / related_files to zoom in before reading files; "
    "context_pack gives the code a task needs (targets, dependencies, tests) under a token budget. "
    "Every answer says when there is more (next / next_offset) and why it is empty (reason.code)."
)


class MissingSDK(RuntimeError):
    pass


def _require_sdk() -> None:
    """Raise :class:`MissingSDK` (how to install it) unless the SDK imports; the callers then
    import what they use by name, so that it is type-checked."""
    try:
        import anyio  # noqa: F401
        import mcp_types  # noqa: F401
        from mcp.server import Server  # noqa: F401
        from mcp.server.stdio import stdio_server  # noqa: F401
    except ImportError as exc:
        raise MissingSDK(
            f'the MCP server needs the mcp SDK ({exc}); install it with: pip install "repomapper[mcp]"'
        ) from None


def result_text(name: str, data: dict[str, Any], is_error: bool) -> str:
    """The text content of a result: one line a model can act on, then the JSON."""
    body = json.dumps(data, ensure_ascii=False)
    if is_error:
        reason = data.get("reason") or data.get("error") or {}
        return f"error [{reason.get('code', 'internal')}]: {reason.get('message', '')}\n{body}"
    return body


def build_server(service: Service) -> Server:
    from .. import __version__

    _require_sdk()
    import anyio
    import mcp_types as types
    from mcp.server import Server, ServerRequestContext

    tools = [
        types.Tool(
            name=s.name,
            description=s.description,
            input_schema=s.input_schema,
            output_schema=RESPONSE_SCHEMA if s.name == "repo_map" else None,
        )
        for s in service.specs.values()
    ]

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        result = await anyio.to_thread.run_sync(service.call, params.name, params.arguments)
        # What a call leaves behind is the live state (extraction, graph, indexes): hundreds of
        # thousands of long-lived objects the cyclic collector would otherwise walk again and
        # again during the next calls (pauses longer than the calls themselves). Frozen, they are left out
        # of its walks; they are still freed as usual when the state drops them.
        gc.freeze()
        return types.CallToolResult(
            content=[
                types.TextContent(
                    type="text", text=result_text(params.name, result.data, result.is_error)
                )
            ],
            structured_content=result.data,
            is_error=result.is_error,
        )

    return Server(
        "repomapper",
        version=__version__,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


def serve_stdio(service: Service) -> None:
    """Serve until the client closes standard input."""
    server = build_server(service)  # first: it says when the SDK is missing
    import anyio
    from mcp.server.stdio import stdio_server

    gc.freeze()  # the SDK's objects (see repomapper.gcpolicy), before the first call
    service.settle = gc.freeze  # and what background work leaves, as after each call

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        service.close()
