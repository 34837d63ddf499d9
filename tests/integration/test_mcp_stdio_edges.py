"""`excerpt mcp` over stdio at its edges (issue 28 item 7), against a real process: a line that
is not JSON-RPC gets JSON-RPC's own error instead of silence, and the tools validate as the
REST routes do (no NUL character, the same limit on stored text)."""

from __future__ import annotations

import json
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import TextContent
from tests.aio import run_async

from excerpt.memory.store import MAX_TEXT_CHARS


@pytest.fixture
def process(tmp_path: Path) -> Any:
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(tmp_path),
                               "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    yield server
    server.kill()
    server.communicate()


def _exchange(server: Any, line: str) -> dict[str, Any]:
    server.stdin.write(line + "\n")
    server.stdin.flush()
    ready, _, _ = select.select([server.stdout], [], [], 30)
    if not ready:
        pytest.fail(f"no answer to {line!r} within 30 s")
    answer = server.stdout.readline()
    assert answer, server.stderr.read()[-2000:]
    return json.loads(answer)  # type: ignore[no-any-return]


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "test", "version": "1"}}}


@pytest.mark.parametrize(("line", "code", "id_"), [
    ("{not json", -32700, None),
    ("[1, 2", -32700, None),
    ('{"jsonrpc": "2.0", "id": 9, "method": 3}', -32600, 9),
    ('{"jsonrpc": "1.0", "id": "a", "method": "ping"}', -32600, "a"),
    ('{"jsonrpc": "2.0", "id": {"x": 1}, "method": "ping", "params": 5}', -32600, None),
    ('"just a string"', -32600, None),
    ("[]", -32600, None),
])
def test_a_line_that_is_not_json_rpc_gets_json_rpcs_error(process: Any, line: str, code: int,
                                                          id_: Any) -> None:
    answer = _exchange(process, line)
    assert answer["jsonrpc"] == "2.0" and answer["id"] == id_, answer
    assert answer["error"]["code"] == code, answer
    assert _exchange(process, json.dumps(INITIALIZE))["result"]["serverInfo"]["name"] == \
        "excerpt"  # and the server goes on


def _stdio(home: Path) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "excerpt", "--home", str(home), "mcp"])


def test_tools_validate_as_the_rest_routes_do(tmp_path: Path) -> None:
    async def body() -> list[str]:
        async with Client(_stdio(tmp_path)) as client:
            texts = []
            for tool, arguments in (
                    ("search", {"query": "river\x00mill"}),
                    ("search", {"query": "river", "collection": "no\x00te"}),
                    ("ask", {"question": "why?", "where": ["book=\x00"]}),
                    ("memory_add", {"conversation": "c", "speaker": "user", "turn": 1,
                                    "text": "x" * (MAX_TEXT_CHARS + 1)}),
                    ("memory_add", {"conversation": "c", "speaker": "user", "turn": 1,
                                    "text": "y" * 10_000_000})):
                result = await client.call_tool(tool, arguments)
                assert result.is_error, (tool, result)
                content = result.content[0]
                assert isinstance(content, TextContent)
                texts.append(content.text)
            read = await client.call_tool("memory_read", {"conversation": "c"})
            assert read.structured_content is not None
            assert read.structured_content["utterances"] == []  # nothing was stored
            return texts

    texts = run_async(body)
    assert all("NUL character" in t for t in texts[:3]), texts
    assert all(f"over the {MAX_TEXT_CHARS}" in t for t in texts[3:]), texts


def test_an_argument_a_tool_does_not_take_is_refused_naming_it(tmp_path: Path) -> None:
    """The SDK dropped it: `ask` with `k` answered as if `k` were not given."""
    async def body() -> list[str]:
        async with Client(_stdio(tmp_path)) as client:
            texts = []
            for tool, arguments in (("ask", {"question": "why?", "k": 3}),
                                    ("search", {"query": "river", "colection": "notes"}),
                                    ("memory_read", {"conversation": "c", "limit": 2})):
                result = await client.call_tool(tool, arguments)
                assert result.is_error, (tool, result)
                assert result.structured_content is not None
                assert result.structured_content["kind"] == "input"
                content = result.content[0]
                assert isinstance(content, TextContent)
                texts.append(content.text)
            fine = await client.call_tool("memory_read", {"conversation": "c", "last": 2})
            assert not fine.is_error, fine
            return texts

    texts = run_async(body)
    assert texts[0].startswith("k is not an argument of the tool ask: the arguments: question")
    assert texts[1].startswith("colection is not an argument of the tool search: use collection")
    assert texts[2].startswith("limit is not an argument of the tool memory_read")
