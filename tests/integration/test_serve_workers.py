"""`excerpt serve --workers 2` (issue 20, item 3): a real server with two worker processes on a
loopback port. Both workers answer search, ask, chat and MCP; two workers writing one
conversation at once lose and duplicate nothing (memory.db's write transactions serialise
them); a worker restarted while the other holds an upload removes only the dead worker's
leftovers. Which workers answered is read from their CPU time (a worker that served nothing
stays near zero), since a response does not (and should not) name its process.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psutil
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from tests.http import add_keys, call, wait_started

from excerpt.engine import Engine

pytestmark = pytest.mark.slow

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
QUESTION = "How are snapshots published?"
BUSY_CPU = 0.05  # seconds of CPU above which a worker surely served some of a burst


class Served:
    """A running `excerpt serve --workers 2`: its URL, keys, home and process."""

    def __init__(self, url: str, keys: dict[str, str], home: Path,
                 process: subprocess.Popen[bytes]) -> None:
        self.url, self.keys, self.home, self.process = url, keys, home, process

    def workers(self) -> list[psutil.Process]:
        """The worker processes (uvicorn's spawned children, not its resource tracker)."""
        children = psutil.Process(self.process.pid).children()
        return [c for c in children if "spawn_main" in " ".join(c.cmdline())]

    def busy(self, burst: Callable[[], object]) -> int:
        """How many workers spent CPU on ``burst``."""
        workers = self.workers()
        before = [sum(w.cpu_times()[:2]) for w in workers]
        burst()
        after = [sum(w.cpu_times()[:2]) for w in workers]
        return sum(1 for b, a in zip(before, after, strict=True) if a - b > BUSY_CPU)


def start(home: Path, port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                               "--port", str(port), "--workers", "2"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_started(f"http://127.0.0.1:{port}", server, tries=600)
    return server


def wait_for(check: Callable[[], bool], seconds: float = 60) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory,
           free_port: Callable[[], int]) -> Iterator[Served]:
    home = tmp_path_factory.mktemp("workers") / "home"
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="handbook", embedder="none")
    engine.close()
    keys = add_keys(home)
    port = free_port()
    server = start(home, port)
    try:
        assert wait_for(lambda: len(Served("", {}, home, server).workers()) == 2)
        yield Served(f"http://127.0.0.1:{port}", keys, home, server)
    finally:
        server.terminate()
        _, log = server.communicate(timeout=30)
    assert b"Traceback" not in log, log.decode()[-3000:]


def parallel(count: int, one: Callable[[int], Any], threads: int = 16) -> list[Any]:
    """``one(i)`` for i in range(count), from ``threads`` threads (each call a new
    connection, so the kernel hands them to both workers)."""
    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, range(count)))


def test_both_workers_answer_search_ask_and_chat(served: Served) -> None:
    key = served.keys["alice"]
    search = f"{served.url}/v1/search?q=snapshot+publish&collection=handbook&mode=bm25"
    expected = call(search, key)[1]["hits"]
    assert expected

    def one(i: int) -> None:
        if i % 3 == 0:
            status, body = call(f"{served.url}/v1/ask", key,
                                {"question": QUESTION, "collection": "handbook"})
            assert status == 200 and body["citations"], body
        elif i % 3 == 1:
            status, body = call(f"{served.url}/v1/chat/completions", key, {
                "model": "excerpt:handbook",
                "messages": [{"role": "user", "content": QUESTION}]})
            assert status == 200 and body["choices"][0]["message"]["content"], body
        else:
            status, body = call(search, key)
            assert status == 200 and body["hits"] == expected

    assert served.busy(lambda: parallel(300, one)) == 2


def test_a_burst_of_keep_alive_connections_is_spread_over_both_workers(served: Served) -> None:
    """40 connections opened at once, then used for many requests each (as a load balancer
    or wrk does): both workers must serve them. On one shared socket the first worker to
    wake accepted nearly all of them and the other stayed idle."""
    port = int(served.url.rsplit(":", 1)[1])
    connections = [http.client.HTTPConnection("127.0.0.1", port, timeout=30) for _ in range(40)]
    for conn in connections:
        conn.connect()
    headers = {"Authorization": f"Bearer {served.keys['alice']}"}

    def use(i: int) -> None:
        conn = connections[i]
        for _ in range(15):
            conn.request("GET", "/v1/search?q=snapshot+publish&collection=handbook&mode=bm25",
                         headers=headers)
            response = conn.getresponse()
            assert response.status == 200
            response.read()

    try:
        workers = served.workers()
        before = [sum(w.cpu_times()[:2]) for w in workers]
        parallel(len(connections), use, threads=len(connections))
        spent = [sum(w.cpu_times()[:2]) - b for w, b in zip(workers, before, strict=True)]
    finally:
        for conn in connections:
            conn.close()
    assert min(spent) > 0.25 * max(spent), spent  # neither worker idle while the other works


def test_both_workers_answer_mcp(served: Served) -> None:
    key = served.keys["alice"]

    async def session() -> list[str]:
        headers = {"Authorization": f"Bearer {key}"}
        async with (create_mcp_http_client(headers=headers) as http,
                    Client(streamable_http_client(f"{served.url}/mcp",
                                                  http_client=http)) as client):
            found = []
            for _ in range(10):
                result = await client.call_tool("search", {"query": "snapshot publish",
                                                           "collection": "handbook"})
                found.append(result.structured_content["hits"][0]["id"])
            return found

    def one(_: int) -> list[str]:
        return asyncio.run(session())

    answers: list[list[str]] = []
    assert served.busy(lambda: answers.extend(parallel(24, one, threads=8))) == 2
    assert len({hit for found in answers for hit in found}) == 1


def test_two_workers_writing_one_conversation_lose_and_duplicate_nothing(
        served: Served) -> None:
    key, count = served.keys["bob"], 240
    memory = f"{served.url}/v1/memory/shared/query"
    status, _ = call(memory, key, {"intent": "config", "data": {"buffer_size": 1000,
                                                                 "max_tokens": 1_000_000}})
    assert status == 200

    def add(i: int) -> int:
        status, body = call(memory, key, {"intent": "add", "data": {
            "speaker": "user", "turn": i, "text": f"message number {i} of the burst"}})
        assert status == 200, body
        index: int = body["utterances"][0]["utterance_index"]
        return index

    indexes: list[int] = []
    assert served.busy(lambda: indexes.extend(parallel(count, add, threads=24))) == 2
    assert sorted(indexes) == list(range(count))  # each acknowledged add got its own index
    status, body = call(memory, key, {"intent": "read", "data": {}})
    stored = body["utterances"]
    assert [u["utterance_index"] for u in stored] == list(range(count))
    assert sorted(u["turn_number"] for u in stored) == list(range(count))  # none lost, none twice
    assert all(u["text"] == f"message number {u['turn_number']} of the burst" for u in stored)
    stamps = [u["timestamp"] for u in stored]
    assert stamps == sorted(stamps)  # the order the transactions committed in


def stall_an_upload(port: int, key: str) -> socket.socket:
    """An upload that announces 1 MB and sends 64 KB of it, then waits."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=30)
    conn.sendall(f"POST /v1/ingest?filename=stalled.txt&collection=up&embedder=none HTTP/1.1\r\n"
                 f"Host: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                 f"Content-Length: {1_000_000}\r\n\r\n".encode() + b"x " * 32768)
    return conn


def test_a_restarted_worker_removes_its_leftovers_not_the_live_workers_upload(
        served: Served) -> None:
    uploads = served.home / "uploads"
    port = int(served.url.rsplit(":", 1)[1])
    conn = stall_an_upload(port, served.keys["ivy"])
    try:
        assert wait_for(lambda: any(p.stat().st_size for p in uploads.glob("*/stalled.txt")))
        (live,) = [p.parent for p in uploads.glob("*/stalled.txt")]
        holder = int(live.name.split("-")[0])
        (other,) = [w for w in served.workers() if w.pid != holder]
        leftover = uploads / f"{other.pid}-{int(other.create_time())}-0123456789abcdef"
        leftover.mkdir()  # what the other worker would leave if killed mid-upload
        os.kill(other.pid, signal.SIGKILL)
        # uvicorn starts a new worker, whose start removes what dead processes left
        assert wait_for(lambda: not leftover.exists()), "the restarted worker kept a leftover"
        assert (live / "stalled.txt").exists()  # the live worker's upload is untouched
        conn.sendall(b"x " * ((1_000_000 - 65536) // 2))
        head = conn.recv(4096).split(b"\r\n", 1)[0]
        assert b" 200 " in head, head
    finally:
        conn.close()
    assert wait_for(lambda: not live.exists())  # the finished upload removed its folder
    assert wait_for(lambda: len(served.workers()) == 2)
    assert call(f"{served.url}/v1/snapshots?collection=up", served.keys["ivy"])[0] == 200


def test_workers_take_a_new_key_and_refuse_a_revoked_one(served: Served) -> None:
    fresh = add_keys(served.home, [("nia",)], revoke=())["nia"]
    search = f"{served.url}/v1/search?q=snapshot&collection=handbook&mode=bm25"
    assert all(status == 200 for status in parallel(40, lambda _: call(search, fresh)[0]))
    add_keys(served.home, [], revoke=("nia",))
    assert all(status == 401 for status in parallel(40, lambda _: call(search, fresh)[0]))

