"""The service layer (excerpt/service.py) is what a front door calls: a new one is a few
lines over it.  Here, a JSON-lines door (one request object per line in, one answer per line
out) answers as ``excerpt ask --json`` does, and keeps a conversation as the CLI keeps it; and
the four doors there are (the CLI, REST, MCP over HTTP through the official client, chat
through the official openai client, against a real `excerpt serve`) give the same search
hits and the same answer to the same request, and refuse the same bad request alike."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import openai
import pytest
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from openai import OpenAI
from tests.aio import run_async
from tests.http import add_keys, call, excerpt_serve

from excerpt import service
from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.errors import InputError
from excerpt.memory.backends import SQLiteBackend
from excerpt.memory.store import MemoryStore
from excerpt.types import Filters, Principal

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"


def json_lines_door(engine: Engine, memory: MemoryStore, lines: list[str]) -> list[str]:
    """A whole front door: parse, call the service, print."""
    out = []
    for line in lines:
        asked = json.loads(line)
        talk = asked.get("conversation")
        request = service.AskRequest(asked["question"], engine.ask_options(), asked["mode"],
                                     conversation=service.Conversation(talk, talk)
                                     if talk else None)
        out.append(json.dumps(service.ask_json(engine, request, Filters(asked["collection"]),
                                               Principal.anonymous(), memory)))
    return out


def without_timings(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k not in ("timings_ms", "reader")}


def test_a_new_front_door_answers_as_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="demo", embedder="none")
    memory = MemoryStore(SQLiteBackend.at_home(home), embedder=None)
    question = "How are snapshots published?"
    door = json.loads(json_lines_door(engine, memory, [json.dumps(
        {"question": question, "mode": "bm25", "collection": "demo"})])[0])
    ran = CliRunner().invoke(cli, ["--home", str(home), "ask", question, "--collection", "demo",
                                   "--mode", "bm25", "--json", "--no-llm"])
    assert ran.exit_code == 0, ran.output
    assert without_timings(door) == without_timings(json.loads(ran.output))
    assert door["citations"] and door["answer"]
    follow = [json.loads(a) for a in json_lines_door(engine, memory, [
        json.dumps({"question": q, "mode": "bm25", "collection": "demo", "conversation": "t"})
        for q in (question, "Can it be half written?")])]
    assert [a["turn"] for a in follow] == [1, 2] and follow[1]["resolution"] == "pronoun"
    assert [u.speaker for u in memory.read("t")] == ["user", "assistant"] * 2
    memory.close()


# -- the four front doors over one service: the same request, the same answer or refusal --------

VAULT = "# Board minutes\n\nThe board approved the Zephyrine merger; its price stays secret.\n"


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory,
          free_port: Callable[[], int]) -> Iterator[dict[str, Any]]:
    """A real `excerpt serve` (REST, MCP over HTTP, chat) over the handbook in "demo" and a
    board-only note in "vault"; alice's key reads public nodes only, as the CLI's default
    (anonymous) principal does."""
    folder = tmp_path_factory.mktemp("doors")
    home, board = folder / "home", folder / "board"
    board.mkdir()
    (board / "minutes.md").write_text(VAULT, encoding="utf-8")
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="demo", embedder="none")
    engine.ingest(board, collection="vault", acl_tags=["board"], embedder="none")
    engine.close()
    keys = add_keys(home, [("alice",)], revoke=())
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        yield {"home": home, "url": url, "key": keys["alice"]}


def by_cli(doors: dict[str, Any], *argv: str) -> tuple[int, str]:
    ran = CliRunner().invoke(cli, ["--home", str(doors["home"]), *argv, "--json", "--no-llm"]
                             if argv[0] == "ask" else
                             ["--home", str(doors["home"]), *argv, "--json"])
    return ran.exit_code, ran.output


def by_rest(doors: dict[str, Any], route: str, body: dict[str, Any] | None = None,
            **query: Any) -> tuple[int, Any]:
    return call(f"{doors['url']}{route}?{urlencode(query, doseq=True)}", doors["key"], body)


def by_mcp(doors: dict[str, Any], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    """Each tool call's result, through the official client over Streamable HTTP."""

    async def body() -> list[Any]:
        headers = {"Authorization": f"Bearer {doors['key']}"}
        async with (create_mcp_http_client(headers=headers) as http,
                    Client(streamable_http_client(f"{doors['url']}/mcp",
                                                  http_client=http)) as client):
            return [await client.call_tool(name, arguments) for name, arguments in calls]

    results: list[Any] = run_async(body)
    return results


def chat(doors: dict[str, Any]) -> OpenAI:
    return OpenAI(base_url=f"{doors['url']}/v1", api_key=doors["key"], max_retries=0)


def without(payload: dict[str, Any], *names: str) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k not in {"timings_ms", *names}}


def test_a_search_is_the_same_through_cli_rest_and_mcp(doors: dict[str, Any]) -> None:
    query = "How are snapshots published?"
    code, out = by_cli(doors, "search", query, "--collection", "demo", "--mode", "bm25",
                       "-k", "5")
    assert code == 0, out
    status, rest = by_rest(doors, "/v1/search", q=query, collection="demo", mode="bm25", k=5)
    assert status == 200, rest
    [mcp] = by_mcp(doors, [("search", {"query": query, "collection": "demo", "mode": "bm25",
                                       "k": 5})])
    assert not mcp.is_error, mcp
    cli_json = json.loads(out)
    assert cli_json["hits"], cli_json
    assert without(cli_json) == without(rest) == without(mcp.structured_content)
    direct = service.SearchRequest(query, "bm25", 5)  # the Python door: the same call
    engine = Engine(doors["home"])
    try:
        assert without(service.search_json(engine, direct, Filters("demo"), Principal.anonymous())
                       ) == without(rest)
    finally:
        engine.close()


def test_an_ask_and_its_follow_up_are_the_same_through_every_door(
        doors: dict[str, Any]) -> None:
    """The CLI, POST /v1/ask, MCP's ask and chat answer alike; a follow-up is read the same
    from a stored conversation (REST) as from the messages a chat client sends."""
    question, follow_up = "How are snapshots published?", "Can it be half written?"
    code, out = by_cli(doors, "ask", question, "--collection", "demo", "--mode", "bm25")
    assert code == 0, out
    status, rest = by_rest(doors, "/v1/ask", {"question": question, "collection": "demo",
                                              "mode": "bm25"})
    assert status == 200, rest
    [mcp] = by_mcp(doors, [("ask", {"question": question, "collection": "demo",
                                    "mode": "bm25"})])
    assert not mcp.is_error, mcp
    assert without(json.loads(out), "reader") == without(rest, "reader") == without(
        mcp.structured_content, "reader")
    completion = chat(doors).chat.completions.create(
        model="excerpt:demo", messages=[{"role": "user", "content": question}],
        extra_body={"excerpt": {"mode": "bm25"}})
    said = completion.model_dump()["choices"][0]["message"]
    assert said["content"].startswith(rest["answer"])
    assert said["excerpt"]["citations"] == rest["citations"]

    turns = [by_rest(doors, "/v1/ask", {"question": q, "collection": "demo", "mode": "bm25",
                                        "conversation": "doors"})[1]
             for q in (question, follow_up)]
    followed = chat(doors).chat.completions.create(
        model="excerpt:demo", extra_body={"excerpt": {"mode": "bm25"}}, messages=[
            {"role": "user", "content": question},
            {"role": "assistant", "content": turns[0]["answer"]},
            {"role": "user", "content": follow_up}]).model_dump()["choices"][0]["message"]
    assert turns[1]["resolution"] == followed["excerpt"]["resolution"] == "pronoun"
    assert turns[1]["resolved_question"] == followed["excerpt"]["resolved_question"]
    assert followed["excerpt"]["citations"] == turns[1]["citations"]


def test_a_bad_request_is_refused_alike_by_every_door(doors: dict[str, Any]) -> None:
    """k out of bounds and an unknown mode are the caller's input (CLI: a usage error, exit 2;
    REST and chat: 400; MCP: a tool error); a collection that does not exist is not found
    everywhere, in one sentence; one the caller may see nothing of shows it nothing (search)
    and is no model to it (chat); all access it may not have is forbidden."""
    bounds = "k must be between 1 and 100 (got 0)"
    with pytest.raises(InputError, match=bounds.replace("(", r"\(").replace(")", r"\)")):
        service.SearchRequest("snapshots", "bm25", 0)
    with pytest.raises(InputError, match="unknown mode"):
        service.SearchRequest("snapshots", "fuzzy")  # type: ignore[arg-type]
    code, out = by_cli(doors, "search", "snapshots", "--collection", "demo", "-k", "0")
    assert code == 2 and bounds in out, out
    code, out = by_cli(doors, "search", "snapshots", "--collection", "demo", "--mode", "fuzzy")
    assert code == 2 and "fuzzy" in out, out
    # over HTTP the error names the field at fault (the web page shows it next to that field)
    assert by_rest(doors, "/v1/search", q="snapshots", collection="demo", k=0) == (
        400, {"error": bounds, "kind": "input", "param": "k"})
    status, body = by_rest(doors, "/v1/search", q="snapshots", collection="demo", mode="fuzzy")
    assert status == 400 and body["kind"] == "input" and "mode" in body["error"]
    code, out = by_cli(doors, "search", "snapshots", "--collection", "nowhere")
    assert code == 1
    missing = json.loads(out.splitlines()[0])
    assert missing["kind"] == "not_found"
    assert by_rest(doors, "/v1/search", q="snapshots", collection="nowhere") == (404, missing)
    # A collection the key sees nothing of is answered as one that is not there: an empty
    # result would say the name exists.
    unseen = {"error": missing["error"].replace("'nowhere'", "'vault'"), "kind": "not_found"}
    assert by_rest(doors, "/v1/search", q="Zephyrine merger", collection="vault") == (
        404, unseen)
    status, refused = by_rest(doors, "/v1/search", q="snapshots", collection="demo",
                              all_access="true")
    assert status == 403 and refused["kind"] == "forbidden"

    k0, fuzzy, nowhere, vault, everything = by_mcp(doors, [
        ("search", {"query": "snapshots", "collection": "demo", "k": 0}),
        ("search", {"query": "snapshots", "collection": "demo", "mode": "fuzzy"}),
        ("search", {"query": "snapshots", "collection": "nowhere"}),
        ("search", {"query": "Zephyrine merger", "collection": "vault"}),
        ("search", {"query": "snapshots", "collection": "demo", "all_access": True})])
    assert k0.is_error and k0.structured_content == {"error": bounds, "kind": "input"}
    assert fuzzy.is_error and "fuzzy" in json.dumps(fuzzy.model_dump(mode="json"))
    assert nowhere.is_error and nowhere.structured_content == missing
    assert vault.is_error and vault.structured_content == unseen
    assert everything.is_error and everything.structured_content == refused

    client = chat(doors)
    for model, extra, status in (("excerpt:demo", {"mode": "fuzzy"}, 400),
                                 ("excerpt:nowhere", {}, 404), ("excerpt:vault", {}, 404),
                                 ("excerpt:demo", {"all_access": True}, 403)):
        with pytest.raises(openai.APIStatusError) as caught:
            client.chat.completions.create(model=model, extra_body={"excerpt": extra},
                                           messages=[{"role": "user", "content": "snapshots"}])
        assert caught.value.status_code == status, (model, extra)
    assert caught.value.body["message"] == refused["error"]  # type: ignore[index]
