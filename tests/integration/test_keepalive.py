"""Kept-alive connections to `excerpt serve` (issue 28, item 15): a client that reuses its
connection (browsers, the `openai` and `mcp` clients) must not wait out the client's delayed
ACK on every response. uvicorn writes a response's head and body in two sends; on a socket
without TCP_NODELAY, Nagle's algorithm holds the body until the head is acknowledged, and a
client on a kept-alive connection delays that ACK by 40 ms or more (a new connection is
acknowledged at once, so it hides the stall). `--workers 2` served every kept-alive request
46 ms late this way.

The test compares, on the same server and interleaved, a request on one kept-alive
connection with a request on a new connection each: equal work, so the kept-alive one may not
be tens of milliseconds slower whatever the machine's speed.
"""

from __future__ import annotations

import http.client
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from tests.aio import run_async
from tests.http import add_keys, wait_started

from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
SEARCH = "/v1/search?q=snapshot+publish&collection=handbook&mode=bm25&k=10"
ROUNDS = 30
STALL_MS = 20.0  # the delayed-ACK stall is 40 ms at least (Linux's minimum ACK delay)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    home = tmp_path_factory.mktemp("keepalive") / "home"
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="handbook", embedder="none")
    engine.close()
    return home, add_keys(home, [("alice",)], revoke=())["alice"]


def get(conn: http.client.HTTPConnection, key: str) -> float:
    """One search on ``conn``: its milliseconds, from sending to the body's last byte."""
    start = time.perf_counter()
    conn.request("GET", SEARCH, headers={"Authorization": f"Bearer {key}"})
    response = conn.getresponse()
    body = response.read()
    assert response.status == 200 and b'"hits"' in body, body[:300]
    return (time.perf_counter() - start) * 1000


@pytest.fixture(params=[1, 2], ids=["1-worker", "2-workers"])
def served(request: pytest.FixtureRequest, home: tuple[Path, str],
           free_port: Callable[[], int]) -> Iterator[tuple[int, str]]:
    """A real `excerpt serve --workers N` on a free port: its port and a reader's key."""
    path, key = home
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(path), "serve",
                               "--port", str(port), "--workers", str(request.param)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_started(f"http://127.0.0.1:{port}", server, tries=600)
        yield port, key
    finally:
        server.terminate()
        _, log = server.communicate(timeout=30)
    assert b"Traceback" not in log, log.decode()[-3000:]


def test_a_kept_alive_connection_is_not_held_by_the_delayed_ack(
        served: tuple[int, str]) -> None:
    port, key = served
    kept = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for _ in range(3):  # warm-up: every worker's first search loads its segments
            get(kept, key)
            fresh = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            get(fresh, key)
            fresh.close()
        kept_ms, fresh_ms = [], []
        for _ in range(ROUNDS):
            kept_ms.append(get(kept, key))
            fresh = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            fresh_ms.append(get(fresh, key))
            fresh.close()
    finally:
        kept.close()
    kept_median, fresh_median = statistics.median(kept_ms), statistics.median(fresh_ms)
    assert kept_median < fresh_median + STALL_MS, (
        f"kept-alive median {kept_median:.1f} ms, new connection {fresh_median:.1f} ms: "
        "the response waited for the client's delayed ACK (no TCP_NODELAY)")


def test_the_workers_socket_gives_accepted_connections_tcp_nodelay(
        free_port: Callable[[], int]) -> None:
    """The mechanism itself, timed by nothing: asyncio (as uvicorn's workers run it) serving on
    `reuse_port_socket` sets TCP_NODELAY on every connection it accepts (with protocol 0 it did
    not, and the kept-alive responses waited for the delayed ACK)."""
    import asyncio
    import socket

    from excerpt.server.workers import reuse_port_socket

    async def accepted_nodelay() -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_connect(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            sock = writer.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        listening = reuse_port_socket("127.0.0.1", free_port())
        server = await asyncio.start_server(on_connect, sock=listening)
        async with server:
            _, writer = await asyncio.open_connection(*listening.getsockname()[:2])
            value = await asyncio.wait_for(seen, 10)
            writer.close()
        return value

    assert run_async(accepted_nodelay) != 0  # its own thread: see tests/aio.py
