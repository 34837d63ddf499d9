"""The MCP server (issue 18 item 1), through the official SDK's own client: in memory (the
client connected to the server object), over stdio against a real `excerpt mcp` process, and
over Streamable HTTP against a real `excerpt serve` process — with the security matrix: a
principal or key never sees through MCP what it cannot see through /v1/search."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp_types import CallToolResult, TextContent
from tests.aio import run_async
from tests.http import add_keys, call, excerpt_serve
from tests.stores import handbook_and_secret

from excerpt import service
from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.mcp.server import build_server, fixed_rights
from excerpt.scope import Rights
from excerpt.types import Filters, Principal

SECRET = ("Snapshot retention for the board: the Northwind merger files are kept in a hidden "
          "snapshot that no import run may publish before March.")
HIDDEN = "merger.txt:0000"
QUERY = "board snapshot retention files kept before March"
TOOLS = {"search", "ask", "graph", "context", "get_nodes", "list_collections",
         "list_snapshots", "collection_overview", "memory_add", "memory_read",
         "memory_search"}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handbook (public) and one note only the board may read, in collection demo."""
    return handbook_and_secret(tmp_path_factory.mktemp("mcp"), "board", "merger.txt", SECRET)


def run(body: Callable[[], Any]) -> Any:
    return run_async(body)  # a thread of its own (tests/aio.py)


def text_of(result: CallToolResult) -> str:
    """The text content of a tool result (the SDK types it as any content block)."""
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def leaks(result: Any) -> bool:
    """Whether a tool or resource result carries anything of the hidden note's text (its id
    may be echoed where the caller gave it: unknown seeds, ids not found)."""
    text = json.dumps(result.model_dump(mode="json"), ensure_ascii=False)
    return "Northwind" in text


async def matrix(client: Client) -> dict[str, Any]:
    """One call of every read path at the hidden note; each result, by name."""
    scope = {"collection": "demo"}
    out: dict[str, Any] = {
        "search": await client.call_tool("search", {"query": QUERY, "mode": "bm25", **scope}),
        "ask": await client.call_tool("ask", {
            "question": "What does the board keep in a hidden snapshot before March?",
            "mode": "bm25", **scope}),
        "graph": await client.call_tool("graph", {"seeds": [HIDDEN], **scope}),
        "context": await client.call_tool("context", {"query": QUERY, "mode": "bm25",
                                                      "seeds": [HIDDEN], **scope}),
        "get_nodes": await client.call_tool("get_nodes", {"ids": [HIDDEN], **scope}),
        "list_snapshots": await client.call_tool("list_snapshots", scope),
        "collection_overview": await client.call_tool("collection_overview", scope),
    }
    try:
        out["resource"] = await client.read_resource(f"excerpt://demo/{HIDDEN}")
    except Exception as exc:  # the SDK raises the server's error: not found
        out["resource"] = exc
    return out


def assert_hidden(results: dict[str, Any]) -> None:
    for name, result in results.items():
        if isinstance(result, Exception):
            assert "Northwind" not in str(result) and "no node" in str(result), name
        else:
            assert not leaks(result), name
    assert HIDDEN not in [h["id"] for h in results["search"].structured_content["hits"]]
    assert results["get_nodes"].structured_content["not_found"] == [HIDDEN]
    assert results["graph"].structured_content["nodes"] == []
    assert [s["source"] for s in results["list_snapshots"].structured_content["snapshots"]
            ] == ["handbook"]


def assert_seen(results: dict[str, Any]) -> None:
    assert HIDDEN in [h["id"] for h in results["search"].structured_content["hits"]]
    assert results["get_nodes"].structured_content["nodes"][0]["text"] == SECRET
    assert results["resource"].contents[0].text == SECRET


def test_in_memory_tools_have_schemas_and_answer_as_the_engine(home: Path) -> None:
    engine = Engine(home)
    server = build_server(engine, fixed_rights(Rights(Principal())))

    async def body() -> None:
        async with Client(server) as client:
            listed = (await client.list_tools()).tools
            assert {t.name for t in listed} == TOOLS
            for tool in listed:
                assert tool.description and len(tool.description) > 40, tool.name
                assert tool.input_schema["type"] == "object", tool.name
                assert tool.output_schema and tool.output_schema["type"] == "object", tool.name
            search = next(t for t in listed if t.name == "search")
            assert search.input_schema["required"] == ["query"]
            assert search.annotations is not None and search.annotations.read_only_hint
            found = await client.call_tool("search", {"query": QUERY, "collection": "demo",
                                                      "mode": "bm25", "k": 3})
            assert not found.is_error
            direct = engine.search(QUERY, Filters("demo"), mode="bm25", k=3)
            assert ([h["id"] for h in found.structured_content["hits"]]
                    == [h.node.id for h in direct.hits])
            assert json.loads(text_of(found)) == found.structured_content
            answer = await client.call_tool("ask", {
                "question": "How is a snapshot kept from being half written?",
                "collection": "demo", "mode": "bm25"})
            got = answer.structured_content
            assert not answer.is_error and "[1]" in got["answer"]
            assert got["citations"] and got["quotes"] and got["cautious"] in (True, False)
            assert {q["id"] for q in got["quotes"]} <= {c["id"] for c in got["citations"]}
            overview = await client.call_tool("collection_overview", {"collection": "demo"})
            assert overview.structured_content == service.overview(
                engine, service.OverviewRequest("demo"), Principal())
            listed_collections = await client.call_tool("list_collections", {})
            assert listed_collections.structured_content["collections"] == [
                {"name": "demo", "snapshots": 1, "documents": 4, "nodes": 6}]
            assert_hidden(await matrix(client))

    run(body)
    engine.close()


def test_in_memory_rights_decide_and_calls_only_narrow(home: Path) -> None:
    engine = Engine(home)
    board = build_server(engine, fixed_rights(Rights(Principal(frozenset({"board"})))))

    async def body() -> None:
        async with Client(board) as client:
            assert_seen(await matrix(client))
            narrowed = await client.call_tool("search", {"query": QUERY, "collection": "demo",
                                                         "mode": "bm25", "acl_tag": ["staff"]})
            assert not leaks(narrowed)
            refused = await client.call_tool("search", {"query": QUERY, "collection": "demo",
                                                        "all_access": True})
            assert refused.is_error and refused.structured_content["kind"] == "forbidden"

    run(body)
    engine.close()


def test_tool_errors_carry_the_cli_message(home: Path) -> None:
    engine = Engine(home)
    server = build_server(engine, fixed_rights(Rights(Principal())))
    cases: list[tuple[list[str], str, dict[str, Any]]] = [
        (["search", "x", "--collection", "nowhere"], "search",
         {"query": "x", "collection": "nowhere"}),
        (["graph", "a", "--collection", "demo", "--direction", "in", "--snapshot", "s9"],
         "graph", {"seeds": ["a"], "collection": "demo", "snapshot": "s9"}),
        (["search", "x", "--collection", "demo", "--where", "acl_tags=board"], "search",
         {"query": "x", "collection": "demo", "where": ["acl_tags=board"]})]

    async def body() -> None:
        async with Client(server) as client:
            for argv, tool, arguments in cases:
                out = CliRunner().invoke(cli, ["--home", str(home), *argv, "--json"])
                assert out.exit_code == 1, out.output
                expected = json.loads(out.output.splitlines()[0])
                result = await client.call_tool(tool, arguments)
                assert result.is_error
                assert text_of(result) == expected["error"], argv
                assert result.structured_content == expected

    run(body)
    engine.close()


def stdio(home: Path, *options: str) -> StdioServerParameters:
    """A real `excerpt mcp` process over ``home``, with the principal ``options``."""
    return StdioServerParameters(command=sys.executable, cwd=str(home.parent), args=[
        "-m", "excerpt", "--home", str(home), "mcp", *options],
        env=dict(os.environ))  # the SDK passes a few variables only: PYTHONPATH too


def test_stdio_excerpt_mcp_is_anonymous_by_default(home: Path) -> None:
    async def body() -> None:
        async with Client(stdio(home)) as anonymous:
            assert {t.name for t in (await anonymous.list_tools()).tools} == TOOLS
            assert_hidden(await matrix(anonymous))
            refused = await anonymous.call_tool("search", {"query": "x", "collection": "demo",
                                                           "all_access": True})
            assert text_of(refused) == "all access needs `excerpt mcp --all-access`"

    run(body)


def test_stdio_excerpt_mcp_takes_the_principal_options_of_search(home: Path) -> None:
    async def body() -> None:
        async with Client(stdio(home, "--acl-tag", "board")) as board:
            assert_seen(await matrix(board))

    run(body)


@pytest.fixture(scope="module")
def serve(home: Path, free_port: Callable[[], int]) -> Iterator[tuple[str, dict[str, str]]]:
    """A real `excerpt serve` over ``home``: alice (public), bob (the board's too), root
    (admin), ivy (ingester); eve's key is revoked."""
    keys = add_keys(home, [("alice",), ("bob", "--acl-tag", "board"), ("root", "--role",
                                                                       "admin"), ("eve",)])
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        yield url, keys


@asynccontextmanager
async def over_http(url: str, key: str) -> AsyncIterator[Client]:
    async with (create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        yield client


def test_http_each_key_sees_through_mcp_what_it_sees_through_search(
        serve: tuple[str, dict[str, str]]) -> None:
    url, keys = serve
    rest = f"{url}/v1/search?q={QUERY.replace(' ', '+')}&collection=demo&mode=bm25"

    async def body() -> None:
        async with over_http(url, keys["alice"]) as alice:
            assert {t.name for t in (await alice.list_tools()).tools} == TOOLS | {"ingest"}
            results = await matrix(alice)
            assert_hidden(results)
            _, by_rest = call(rest, keys["alice"])
            assert ([h["id"] for h in results["search"].structured_content["hits"]]
                    == [h["id"] for h in by_rest["hits"]])
            refused = await alice.call_tool("search", {"query": "x", "collection": "demo",
                                                       "all_access": True})
            assert text_of(refused) == "all access needs an admin key"
        async with over_http(url, keys["bob"]) as bob:
            results = await matrix(bob)
            assert_seen(results)
            _, by_rest = call(rest, keys["bob"])
            assert ([h["id"] for h in results["search"].structured_content["hits"]]
                    == [h["id"] for h in by_rest["hits"]])
        async with over_http(url, keys["root"]) as root:
            everything = await root.call_tool("get_nodes", {"ids": [HIDDEN], "collection": "demo",
                                                            "all_access": True})
            assert everything.structured_content["nodes"][0]["text"] == SECRET

    run(body)


def test_http_refuses_requests_without_a_valid_key_as_the_rest_routes_do(
        serve: tuple[str, dict[str, str]]) -> None:
    url, keys = serve
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for key in (None, "exk_wrong", keys["eve"]):
        by_rest = call(f"{url}/v1/search?q=x&collection=demo", key)
        by_mcp = call(f"{url}/mcp", key, initialize, headers=headers)
        assert by_mcp == by_rest and by_mcp[0] == 401
    status, body = call(f"{url}/mcp", keys["alice"], initialize, headers=headers)
    assert status == 200 and body["result"]["serverInfo"]["name"] == "excerpt"


def test_http_conversations_are_the_keys_own(serve: tuple[str, dict[str, str]]) -> None:
    url, keys = serve

    async def body() -> None:
        async with over_http(url, keys["alice"]) as alice:
            added = await alice.call_tool("memory_add", {
                "conversation": "plans", "speaker": "user", "turn": 1,
                "text": "We keep the Kestrel notes in the handbook."})
            assert not added.is_error, added
            found = await alice.call_tool("memory_search", {"conversation": "plans",
                                                            "query": "Kestrel"})
            assert [u["text"] for u in found.structured_content["utterances"]] == [
                "We keep the Kestrel notes in the handbook."]
        async with over_http(url, keys["bob"]) as bob:
            read = await bob.call_tool("memory_read", {"conversation": "plans"})
            assert read.structured_content["utterances"] == []
        # the REST memory route reads the same conversation of the same key
        status, by_rest = call(f"{url}/v1/memory/plans/query", keys["alice"],
                               {"intent": "read", "data": {}})
        assert status == 200 and [u["text"] for u in by_rest["utterances"]] == [
            "We keep the Kestrel notes in the handbook."]

    run(body)


NOTE = "The Kestrel runbook: rotate the ingest keys every ninety days and log each rotation."


def test_stdio_ingest_only_with_ingester_and_paths_inside_the_roots(tmp_path: Path) -> None:
    """`excerpt mcp` is read-only (no ingest tool) unless --ingester; with it, a text and a
    path become snapshots that search finds; --ingest-root confines paths."""
    home, inside, outside = tmp_path / "home", tmp_path / "inside", tmp_path / "outside"
    for folder in (inside, outside):
        folder.mkdir()
        (folder / "memo.txt").write_text(f"Memo kept {folder.name}: the heron count is 41.",
                                         "utf-8")
    Engine(home).close()

    async def body() -> None:
        async with Client(stdio(home)) as reader:
            assert "ingest" not in {t.name for t in (await reader.list_tools()).tools}
        async with Client(stdio(home, "--ingester", "--ingest-root", str(inside))) as agent:
            assert "ingest" in {t.name for t in (await agent.list_tools()).tools}
            added = await agent.call_tool("ingest", {"collection": "inbox", "text": NOTE,
                                                     "filename": "runbook.md"})
            assert not added.is_error, text_of(added)
            assert added.structured_content["nodes"] >= 1
            found = await agent.call_tool("search", {"query": "rotate ingest keys ninety days",
                                                     "collection": "inbox", "mode": "bm25"})
            assert found.structured_content["hits"][0]["text"] == NOTE
            assert found.structured_content["hits"][0]["source"] == "upload:runbook.md"
            by_path = await agent.call_tool("ingest", {"collection": "inbox",
                                                       "path": str(inside / "memo.txt")})
            assert not by_path.is_error, text_of(by_path)
            refused = await agent.call_tool("ingest", {"collection": "inbox",
                                                       "path": str(outside / "memo.txt")})
            assert refused.is_error and "not inside an ingest root" in text_of(refused)
            both = await agent.call_tool("ingest", {"collection": "inbox", "text": "x",
                                                    "filename": "a.txt", "path": str(inside)})
            assert text_of(both) == "give either text (with filename) or path"
            bad_name = await agent.call_tool("ingest", {"collection": "inbox", "text": "x",
                                                        "filename": "../a.txt"})
            assert "must be a plain file name" in text_of(bad_name)

    run(body)
    assert not (home / "uploads").exists() or not any((home / "uploads").iterdir())


def test_http_ingest_follows_the_keys_role_and_its_nodes_keep_their_acl(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    """Over /mcp, ingest is a reader key's tool error with /v1/ingest's message; an ingester
    key's text becomes a snapshot (a node tagged board stays hidden from a public key); paths
    need an admin key and an ingest root."""
    home = tmp_path / "home"
    Engine(home).close()
    keys = add_keys(home, [("alice",), ("ivy", "--role", "ingester"), ("root", "--role",
                                                                       "admin")], revoke=())

    async def body(url: str) -> None:
        async with over_http(url, keys["alice"]) as alice:
            assert {t.name for t in (await alice.list_tools()).tools} == TOOLS | {"ingest"}
            refused = await alice.call_tool("ingest", {"text": NOTE, "filename": "r.md"})
            status, by_rest = call(f"{url}/v1/ingest?filename=r.md", keys["alice"],
                                   NOTE.encode())
            assert refused.is_error and text_of(refused) == by_rest["error"] and status == 403
        async with over_http(url, keys["ivy"]) as ivy:
            added = await ivy.call_tool("ingest", {"collection": "inbox", "text": NOTE,
                                                   "filename": "runbook.md",
                                                   "acl_tag": ["board"]})
            assert not added.is_error, text_of(added)
            by_path = await ivy.call_tool("ingest", {"collection": "inbox",
                                                     "path": str(tmp_path)})
            assert text_of(by_path) == "this needs a key with role admin (a server-side path)"
        async with over_http(url, keys["root"]) as root:
            no_root = await root.call_tool("ingest", {"collection": "inbox",
                                                      "path": str(tmp_path)})
            assert "not inside an ingest root" in text_of(no_root)
            seen = await root.call_tool("search", {"query": "rotate ingest keys",
                                                   "collection": "inbox", "mode": "bm25",
                                                   "all_access": True})
            assert [h["text"] for h in seen.structured_content["hits"]] == [NOTE]
        async with over_http(url, keys["alice"]) as alice:
            hidden = await alice.call_tool("search", {"query": "rotate ingest keys",
                                                      "collection": "inbox", "mode": "bm25"})
            assert not leaks(hidden) and "Kestrel" not in json.dumps(
                hidden.structured_content)

    with excerpt_serve(["--home", str(home)], free_port()) as url:
        run(lambda: body(url))


def test_ask_takes_a_reader_by_name_and_says_who_read(home: Path) -> None:
    engine = Engine(home)
    server = build_server(engine, fixed_rights(Rights(Principal())))

    async def body() -> None:
        async with Client(server) as client:
            ask = next(t for t in (await client.list_tools()).tools if t.name == "ask")
            offered = ask.input_schema["properties"]["reader"]["anyOf"][0]["enum"]
            assert offered == ["extractive", "openai", "local"]
            question = {"question": "How is a snapshot kept from being half written?",
                        "collection": "demo", "mode": "bm25"}
            answer = await client.call_tool("ask", {**question, "reader": "extractive"})
            assert not answer.is_error
            assert answer.structured_content["reader"]["name"] == "extractive"
            refused = await client.call_tool("ask", {**question, "reader": "/tmp/model.gguf"})
            assert refused.is_error
            unready = await client.call_tool("ask", {**question, "reader": "local"})
            assert unready.is_error and "reader_model" in text_of(unready)

    run(body)
    engine.close()
