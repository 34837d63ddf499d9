"""What a new user hit (issue 28, items 9, 10, 11 and 14), through the real interfaces: the
CLI (click's runner, and real processes where a signal or a port is involved), a real
`excerpt serve` and the MCP tools through the official SDK's client.

- An import interrupted (Ctrl-C, or killed) before its first snapshot leaves no collection:
  every command says the same "no collection" (exit 1) instead of "no hits" (exit 0).
- A source a sync retired (its file deleted) is marked ``"retired": true`` by `snapshots`,
  `GET /v1/snapshots` and MCP `list_snapshots`; `collections` and MCP `list_collections` count
  the same documents and nodes (the current view's).
- One bound per count (:mod:`excerpt.limits`) and one sentence refusing it on the CLI (exit 2),
  over HTTP (400) and in MCP (a tool error).
- A global option after the command says where it goes; `serve` on a busy port fails in one
  line before announcing a URL; an unknown field of a body names the field to use.
"""

from __future__ import annotations

import json
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from mcp import Client
from mcp_types import CallToolResult, TextContent
from tests.aio import run_async
from tests.http import add_keys, call, excerpt_serve

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.mcp.server import build_server, fixed_rights
from excerpt.scope import Rights
from excerpt.types import Principal

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
WORDS = ["river", "stone", "lantern", "harbor", "meadow", "copper", "violet", "thunder"]
GONE = "no collection 'fresh'; ingest something first"


def run(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["--home", str(home), *args], obj={"json": False})


def ok(home: Path, *args: str) -> Any:
    result = run(home, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def tool(home: Path, name: str, arguments: dict[str, Any]) -> CallToolResult:
    """One MCP tool call through the SDK's client, as an anonymous local caller."""
    engine = Engine(home)
    server = build_server(engine, fixed_rights(Rights(Principal())))

    async def body() -> CallToolResult:
        async with Client(server) as client:
            return await client.call_tool(name, arguments)

    try:
        return run_async(body)  # type: ignore[no-any-return]
    finally:
        engine.close()


def text_of(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


# -- the store every test but the interrupted import reads -------------------------------------


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """'demo': the handbook; 'docs': a synced folder of five one-line files, two of which were
    then deleted and synced again (their sources retired)."""
    root = tmp_path_factory.mktemp("newcomer")
    home = root / "home"
    ok(home, "ingest", str(HANDBOOK), "--collection", "demo", "--embedder", "none",
       "--no-progress")
    folder = root / "notes"
    folder.mkdir()
    for i in range(1, 6):
        (folder / f"f{i}.txt").write_text(f"Note {i} is about lanterns by the river.\n", "utf-8")
    ok(home, "sync", str(folder), "--collection", "docs", "--embedder", "none", "--no-progress")
    (folder / "f4.txt").unlink()
    (folder / "f5.txt").unlink()
    synced = ok(home, "sync", str(folder), "--collection", "docs", "--embedder", "none",
                "--no-progress")
    assert synced["deleted"] == 2
    return home


@pytest.fixture(scope="module")
def service(home: Path, free_port: Callable[[], int]) -> Iterator[tuple[str, str]]:
    """A real `excerpt serve` over ``home`` and a reader key."""
    keys = add_keys(home, [("reader",)], revoke=())
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        yield url, keys["reader"]


# -- item 9: an interrupted first import -------------------------------------------------------


def write_corpus(folder: Path, files: int) -> None:
    """Enough text that an import takes seconds (about 2 s for 2,500 files, BM25 only)."""
    rng = random.Random(28)
    folder.mkdir(parents=True)
    for i in range(files):
        paragraphs = [" ".join(rng.choices(WORDS, k=70)) + "." for _ in range(5)]
        (folder / f"doc{i:05d}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")


def wait_running(database: Path, process: subprocess.Popen[str]) -> None:
    """Waits until the import run of ``process`` has begun (its row says 'running')."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, "the import ended before it could be interrupted"
        try:
            with sqlite3.connect(database, timeout=1) as db:
                if db.execute("SELECT 1 FROM import_runs WHERE status = 'running'").fetchone():
                    return
        except sqlite3.OperationalError:  # not created yet
            pass
        time.sleep(0.02)
    pytest.fail("the import never began")


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGKILL], ids=["ctrl-c", "kill"])
def test_an_interrupted_first_import_leaves_no_collection(tmp_path: Path,
                                                          stop: signal.Signals) -> None:
    corpus = tmp_path / "corpus"
    write_corpus(corpus, 2500)
    home = tmp_path / "home"
    process = subprocess.Popen(
        [sys.executable, "-m", "excerpt", "--home", str(home), "ingest", str(corpus),
         "--collection", "fresh", "--embedder", "none", "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        # a shell's background job ignores SIGINT, and Python keeps an inherited SIG_IGN
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    wait_running(home / "excerpt.db", process)
    process.send_signal(stop)
    _, stderr = process.communicate(timeout=60)
    if stop == signal.SIGINT:
        assert process.returncode == 130, stderr
        assert "interrupted: the import was not published" in stderr
        assert "Traceback" not in stderr
    for command in (["search", "river"], ["ask", "What about the river?"], ["snapshots"],
                    ["context", "--query", "river"], ["graph", "doc00001.txt:0000"]):
        result = run(home, *command, "--collection", "fresh", "--json")
        assert result.exit_code == 1, (command, result.output)
        assert json.loads(result.stdout) == {"error": GONE, "kind": "not_found"}, command
    assert ok(home, "collections", "--all-access")["collections"] == []
    listed = tool(home, "list_collections", {"all_access": False})
    assert listed.structured_content is not None
    assert listed.structured_content["collections"] == []
    searched = tool(home, "search", {"query": "river", "collection": "fresh"})
    assert searched.is_error and text_of(searched) == GONE
    again = ok(home, "ingest", str(corpus), "--collection", "fresh", "--embedder", "none",
               "--no-progress")
    assert again["status"] == "completed" and again["documents"] == 2500
    assert ok(home, "search", "river", "--collection", "fresh", "-k", "3")["hits"]


# -- item 10: retired sources ------------------------------------------------------------------


def retired_marks(listing: dict[str, Any]) -> dict[str, bool]:
    return {s["source"]: s["retired"] for s in listing["snapshots"]}


MARKS = {"sync:notes/f1.txt": False, "sync:notes/f2.txt": False, "sync:notes/f3.txt": False,
         "sync:notes/f4.txt": True, "sync:notes/f5.txt": True}


def test_snapshots_mark_retired_sources_everywhere(home: Path,
                                                   service: tuple[str, str]) -> None:
    cli_listing = ok(home, "snapshots", "--collection", "docs")
    assert retired_marks(cli_listing) == MARKS
    assert retired_marks(ok(home, "snapshots", "--collection", "demo")) == {
        str(HANDBOOK): False}
    table = run(home, "snapshots", "--collection", "docs")
    assert table.exit_code == 0 and table.stdout.count("retired") == 3  # header + two rows
    url, key = service
    status, http_listing = call(f"{url}/v1/snapshots?collection=docs", key)
    assert status == 200 and http_listing == cli_listing
    mcp_listing = tool(home, "list_snapshots", {"collection": "docs"})
    assert not mcp_listing.is_error and mcp_listing.structured_content == cli_listing


def test_every_listing_of_collections_counts_the_current_view(home: Path) -> None:
    expected = [{"name": "demo", "snapshots": 1, "documents": 4, "nodes": 6},
                {"name": "docs", "snapshots": 5, "documents": 3, "nodes": 3}]
    assert ok(home, "collections")["collections"] == expected
    listed = tool(home, "list_collections", {})
    assert listed.structured_content is not None
    assert listed.structured_content["collections"] == expected
    hits = ok(home, "search", "lanterns river", "--collection", "docs", "--mode", "bm25")
    assert len(hits["hits"]) == 3  # what the counts say a search reads


# -- item 11: one limit, one message -----------------------------------------------------------


QUESTION = "What is a snapshot?"


@pytest.mark.parametrize(("argv", "tool_name", "arguments", "sentence"), [
    (["search", "snapshot", "-k", "1000000"], "search", {"query": "snapshot", "k": 1000000},
     "k must be between 1 and 100 (got 1000000)"),
    (["search", "snapshot", "-k", "0"], "search", {"query": "snapshot", "k": 0},
     "k must be between 1 and 100 (got 0)"),
    (["ask", QUESTION, "--doc-limit", "500"], "ask", {"question": QUESTION, "doc_limit": 500},
     "doc_limit must be between 1 and 100 (got 500)"),
    (["ask", QUESTION, "--fetch-limit", "301"], "ask",
     {"question": QUESTION, "fetch_limit": 301}, "fetch_limit must be between 1 and 300 (got 301)"),
    (["ask", QUESTION, "--max-quotes", "21"], "ask", {"question": QUESTION, "max_quotes": 21},
     "max_quotes must be between 1 and 20 (got 21)"),
    (["context", "--query", "snapshot", "-k", "101"], "context", {"query": "snapshot", "k": 101},
     "k must be between 1 and 100 (got 101)"),
    (["graph", "01-snapshots.md:0000", "--max-depth", "11"], "graph",
     {"seeds": ["01-snapshots.md:0000"], "max_depth": 11},
     "max_depth must be between 0 and 10 (got 11)"),
])
def test_a_count_is_refused_alike_on_the_cli_http_and_mcp(
        home: Path, service: tuple[str, str], argv: list[str], tool_name: str,
        arguments: dict[str, Any], sentence: str) -> None:
    result = run(home, *argv, "--collection", "demo")
    assert result.exit_code == 2 and result.stderr.splitlines()[-1] == f"Error: {sentence}"
    url, key = service
    scoped = {**arguments, "collection": "demo"}
    if tool_name == "search":
        status, body = call(f"{url}/v1/search?q=snapshot&collection=demo&k={arguments['k']}",
                            key)
    else:
        status, body = call(f"{url}/v1/{tool_name}", key, scoped)
    # over HTTP the error names the field at fault too (the web page shows it there)
    field = sentence.split()[0]
    assert (status, body) == (400, {"error": sentence, "kind": "input", "param": field})
    refused = tool(home, tool_name, scoped)
    assert refused.is_error and text_of(refused) == sentence
    assert refused.structured_content == {"error": sentence, "kind": "input"}


def test_the_limit_itself_is_served_everywhere(home: Path, service: tuple[str, str]) -> None:
    cli_hits = ok(home, "search", "snapshot", "--collection", "demo", "-k", "100")["hits"]
    url, key = service
    status, body = call(f"{url}/v1/search?q=snapshot&collection=demo&k=100", key)
    assert status == 200 and [h["id"] for h in body["hits"]] == [h["id"] for h in cli_hits]
    found = tool(home, "search", {"query": "snapshot", "collection": "demo", "k": 100})
    assert not found.is_error and found.structured_content is not None
    assert [h["id"] for h in found.structured_content["hits"]] == [h["id"] for h in cli_hits]


# -- item 14: saying what to do ----------------------------------------------------------------


@pytest.mark.parametrize(("given", "hint"), [
    (["--home", "elsewhere"], "excerpt --home DIR search …"),
    (["--home=elsewhere"], "excerpt --home DIR search …"),
    (["--settings", "settings.toml"], "excerpt --settings FILE search …"),
    (["--log-dir", "logs"], "excerpt --log-dir DIR search …"),
    (["--store", "postgresql://db/x"], "excerpt --store URL search …"),
])
def test_a_global_option_after_the_command_says_where_it_goes(home: Path, given: list[str],
                                                              hint: str) -> None:
    result = run(home, "search", "snapshot", "--collection", "demo", *given)
    option = given[0].split("=")[0]
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        f"Error: {option} is a global option: put it before the command: {hint}")


def test_a_global_option_after_a_subcommand_of_a_group_too(home: Path) -> None:
    result = run(home, "memory", "chat", "read", "--home", "elsewhere")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-1] == (
        "Error: --home is a global option: put it before the command: "
        "excerpt --home DIR memory …")
    unknown = run(home, "search", "snapshot", "--bogus")
    assert unknown.exit_code == 2 and "No such option" in unknown.stderr  # others as before


def test_serve_on_a_busy_port_fails_in_one_line_before_any_url(home: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                               "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"excerpt: port {port} is in use: another program listens on 127.0.0.1:{port}; "
        "stop it or choose another --port"]


@pytest.mark.parametrize(("route", "body", "start"), [
    ("/v1/ask", {"question": "What is a snapshot?", "k": 3},
     "k is not a field of POST /v1/ask: use doc_limit (the fields: "),
    ("/v1/ask", {"question": "What is a snapshot?", "query": "snapshots"},
     "query is not a field of POST /v1/ask: use question (the fields: "),
    ("/v1/ask/stream", {"question": "What is a snapshot?", "colection": "demo"},
     "colection is not a field of POST /v1/ask/stream: use collection (the fields: "),
    ("/v1/graph", {"seeds": ["x"], "depth": 2},
     "depth is not a field of POST /v1/graph: use max_depth (the fields: "),
    ("/v1/context", {"query": "snapshot", "top_k": 3},
     "top_k is not a field of POST /v1/context: use k (the fields: "),
    ("/v1/memory/chat/query", {"intent": "read", "zzz": 1},
     "zzz is not a field of POST /v1/memory/chat/query: the fields: intent, data"),
])
def test_an_unknown_field_names_the_field_to_use(service: tuple[str, str], route: str,
                                                 body: dict[str, Any], start: str) -> None:
    url, key = service
    status, answer = call(url + route, key, body)
    assert status == 400 and answer["kind"] == "input", answer
    assert answer["error"].startswith(start), answer["error"]
    if "(the fields: " in start:  # every field of the body, the one meant among them
        fields = answer["error"].split("(the fields: ")[1].rstrip(")").split(", ")
        meant = start.split(": use ")[1].split(" ")[0]
        assert meant in fields and "collection" in fields and not set(body) <= set(fields)


def test_chat_options_name_the_unknown_field(service: tuple[str, str]) -> None:
    url, key = service
    status, answer = call(f"{url}/v1/chat/completions", key, {
        "model": "excerpt:demo", "messages": [{"role": "user", "content": QUESTION}],
        "excerpt": {"k": 3, "mode": "bm25"}})
    assert status == 400, answer
    assert (answer["error"]["param"], answer["error"]["message"]) == ("excerpt.k", (
        "excerpt.k: k is not a field: the fields: mode, reader, snapshot, snapshot_set, where, "
        "acl_tag, clearance, all_access"))
