"""The same question through every interface of one real `excerpt serve` (issue 18 targets):
an MCP ``search`` tool call against ``GET /v1/search``, and a chat completion against
``POST /v1/ask``, on the books.

Run:  .venv/bin/python bench/interfaces.py --home DIR [--collection books] [--repeat 20]

``--home`` holds the books (``bench/qa.py --home DIR --files books`` ingests them, MiniLM).
A key is added to it, `excerpt serve` starts on a free loopback port, and each question of
QUESTIONS runs ``--repeat`` times per interface, after one warm-up call each (hybrid mode);
p50 / p95 per interface and the p95 differences (target: within 20 ms). The clients are the
ones people use: the official ``mcp`` SDK (Streamable HTTP) and ``openai``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

import anyio
from click.testing import CliRunner
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from openai import OpenAI

from _serve import free_port, wait_healthy
from excerpt.cli.main import cli
from excerpt.evaluate.metrics import latency_summary

QUESTIONS = ["What does Lord Henry say about influence?", "Who is Patroclus?",
             "Why does Dorian hide the portrait?", "How is Hector killed?"]


def rest(url: str, key: str, path: str, body: dict[str, Any] | None = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    with urllib.request.urlopen(urllib.request.Request(url + path, data, headers),
                                timeout=60) as r:
        return json.loads(r.read())


def timed(call: Any, repeat: int) -> list[float]:
    call()  # warm-up
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        out.append((time.perf_counter() - t) * 1000)
    return out


async def mcp_times(url: str, key: str, collection: str, repeat: int) -> list[float]:
    times: list[float] = []
    async with (create_mcp_http_client(headers={"Authorization": f"Bearer {key}"}) as http,
                Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
        for q in QUESTIONS:
            args = {"query": q, "collection": collection, "mode": "hybrid", "k": 10}
            await client.call_tool("search", args)  # warm-up
            for _ in range(repeat):
                t = time.perf_counter()
                await client.call_tool("search", args)
                times.append((time.perf_counter() - t) * 1000)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--collection", default="books")
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    out = CliRunner().invoke(cli, ["--home", str(args.home), "keys", "add",
                                   f"bench-{time.time_ns()}", "--json"])
    if out.exit_code != 0:
        print(out.output, file=sys.stderr)
        return 2
    key = json.loads(out.output)["key"]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(args.home),
                               "serve", "--port", str(port)], stderr=subprocess.DEVNULL)
    try:
        wait_healthy(url, server)
        c = args.collection
        search = [t for q in QUESTIONS for t in timed(lambda q=q: rest(
            url, key, "/v1/search?" + urllib.parse.urlencode(
                {"q": q, "collection": c, "mode": "hybrid", "k": 10})), args.repeat)]
        mcp = anyio.run(mcp_times, url, key, c, args.repeat)
        ask = [t for q in QUESTIONS for t in timed(lambda q=q: rest(
            url, key, "/v1/ask", {"question": q, "collection": c, "mode": "hybrid"}),
            args.repeat)]
        client = OpenAI(base_url=f"{url}/v1", api_key=key)
        chat = [t for q in QUESTIONS for t in timed(lambda q=q: client.chat.completions.create(
            model=f"excerpt:{c}", messages=[{"role": "user", "content": q}]), args.repeat)]
    finally:
        server.terminate()
        server.wait(timeout=10)
    rows = {"GET /v1/search": search, "MCP search": mcp, "POST /v1/ask": ask,
            "chat completion": chat}
    summary = {name: latency_summary(t) for name, t in rows.items()}
    report: dict[str, Any] = dict(summary)
    report["p95 difference, MCP - REST search"] = round(
        summary["MCP search"]["p95"] - summary["GET /v1/search"]["p95"], 1)
    report["p95 difference, chat - REST ask"] = round(
        summary["chat completion"]["p95"] - summary["POST /v1/ask"]["p95"], 1)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
