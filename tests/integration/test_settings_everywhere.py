"""Settings mean the same everywhere (issue 18 item 3): one settings file (ask_doc_limit,
ask_max_quotes, reranker) gives the same answer through the CLI, the Python API, and a real
`excerpt serve` process's REST route, MCP tool (the official SDK client over Streamable HTTP)
and chat completion (the official openai client); before, `serve` and the Python API used
hard-coded defaults."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from openai import OpenAI
from tests.aio import run_async
from tests.http import add_keys, call, excerpt_serve

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.settings import load_settings
from excerpt.types import Filters

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
QUESTION = "How does excerpt keep a snapshot from being half written?"
SETTINGS = "ask_doc_limit: 2\nask_max_quotes: 1\nreranker: features\n"


def essence(payload: dict[str, Any]) -> tuple[Any, ...]:
    return (payload["answer"], [d["id"] for d in payload["documents"]], payload["reranker"],
            [c["id"] for c in payload["citations"]])


def test_one_settings_file_one_answer_through_cli_http_and_python(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    home, settings = tmp_path / "home", tmp_path / "settings.yml"
    settings.write_text(SETTINGS, encoding="utf-8")
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="demo", embedder="none")
    engine.close()
    base = ["--home", str(home), "--settings", str(settings)]
    out = CliRunner().invoke(cli, [*base, "ask", QUESTION, "--collection", "demo",
                                   "--mode", "bm25", "--json"])
    assert out.exit_code == 0, out.output
    by_cli = json.loads(out.output)
    assert len(by_cli["documents"]) == 2 and len(by_cli["citations"]) == 1
    assert by_cli["reranker"] == "features"

    python = Engine(home, load_settings(settings)).ask(QUESTION, Filters("demo"),
                                                       mode="bm25").to_json()
    key = add_keys(home, [("alice",)], revoke=())["alice"]
    with excerpt_serve(base, free_port()) as url:
        status, by_http = call(f"{url}/v1/ask", key,
                               {"question": QUESTION, "collection": "demo", "mode": "bm25"})
        assert status == 200, by_http
        by_mcp = run_async(lambda: mcp_ask(url, key))
        chat = OpenAI(base_url=f"{url}/v1", api_key=key).chat.completions.create(
            model="excerpt:demo", messages=[{"role": "user", "content": QUESTION}],
            extra_body={"excerpt": {"mode": "bm25"}})
    assert essence(by_http) == essence(by_cli)
    assert essence(python) == essence(by_cli)
    assert by_mcp["answer"] == by_cli["answer"]
    assert [c["id"] for c in by_mcp["citations"]] == [c["id"] for c in by_cli["citations"]]
    assert [d["id"] for d in by_mcp["documents"]] == [d["id"] for d in by_cli["documents"]]
    message = chat.choices[0].message
    assert (message.content or "").startswith(by_cli["answer"])
    extra = message.model_extra or {}
    assert [c["id"] for c in extra["excerpt"]["citations"]] == [
        c["id"] for c in by_cli["citations"]]


async def mcp_ask(url: str, key: str) -> dict[str, Any]:
    async with (create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        result = await client.call_tool("ask", {"question": QUESTION, "collection": "demo",
                                                "mode": "bm25"})
        assert not result.is_error, result
        found: dict[str, Any] = result.structured_content or {}
        return found
