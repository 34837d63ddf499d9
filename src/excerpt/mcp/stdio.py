"""`excerpt mcp`'s transport: the SDK's stdio server, plus JSON-RPC's own answers to lines that
are not a message.

The SDK's reader drops such a line with a log entry, so a client that sent it waits for an
answer that never comes. Here every line is checked first, as JSON-RPC 2.0 asks: one that is
not JSON is answered with a parse error (-32700, id null), JSON that is not a request,
notification or response with an invalid-request error (-32600) carrying its ``id`` when it
has a usable one; only lines that are messages reach the SDK.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterable, AsyncIterator
from io import TextIOWrapper
from typing import Any

import anyio
import mcp_types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

__all__ = ["rpc_error", "serve_stdio"]


def rpc_error(line: str) -> types.JSONRPCError | None:
    """The JSON-RPC error that answers ``line``, or None when it is a message."""
    try:
        data = json.loads(line)
    except ValueError:
        return _error(None, types.PARSE_ERROR, "Parse error: the line is not JSON")
    try:
        types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValueError:
        given = data.get("id") if isinstance(data, dict) else None
        usable = isinstance(given, str | int) and not isinstance(given, bool)
        return _error(given if usable else None, types.INVALID_REQUEST,
                      "Invalid Request: not a JSON-RPC 2.0 request, notification or response")
    return None


def _error(id_: Any, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(jsonrpc="2.0", id=id_,
                              error=types.ErrorData(code=code, message=message))


async def _checked(lines: AsyncIterable[str],
                   answers: MemoryObjectSendStream[SessionMessage]) -> AsyncIterator[str]:
    """The lines that are JSON-RPC messages; the others are answered through ``answers``."""
    async with answers:
        async for line in lines:
            if not line.strip():
                continue
            error = rpc_error(line)
            if error is None:
                yield line
            else:
                await answers.send(SessionMessage(error))


async def _forward(answers: MemoryObjectReceiveStream[SessionMessage], write: Any) -> None:
    async with answers:
        async for answer in answers:
            await write.send(answer)


async def serve_stdio(server: MCPServer) -> None:
    """Run ``server`` over this process's stdin and stdout until stdin ends."""
    send, receive = anyio.create_memory_object_stream[SessionMessage](16)
    raw = anyio.wrap_file(TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace"))
    stdin: Any = _checked(raw, send)  # the SDK's reader only iterates it (``async for``)
    lowlevel = server._lowlevel_server  # the SDK's run_stdio_async does the same
    async with stdio_server(stdin=stdin) as (read, write), anyio.create_task_group() as tasks:
        tasks.start_soon(_forward, receive, write)
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
        tasks.cancel_scope.cancel()
