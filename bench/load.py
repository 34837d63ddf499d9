"""Load test of `excerpt serve` on loopback: 50 concurrent clients mixing search and ask.

Run:  .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--think-ms 0 500]
                                     [--home DIR]

The two books are ingested BM25-only into ``--home`` (collection ``books``) unless there. The
service is the real command, ``excerpt serve``, in its own process on a free port with one
reader key; the clients run in this process (asyncio, one keep-alive HTTP/1.1 connection
each), so client and server share the 2 cores but not a GIL. Each client loops: 4 searches
then 1 ask (bm25, fixed query lists), waiting an exponentially distributed think time of mean
``--think-ms`` between requests (0: a closed loop, each client sends its next request as soon
as the last is answered, which measures saturation). One run per think time.
Reported per run: requests, throughput, errors, p50/p95/p99 per route, the server's CPU use.
Issue 7 goal: zero errors, search p95 under 100 ms at 50 clients on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import psutil

REPO = Path(__file__).resolve().parents[1]
BOOKS = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data")) / "books"
EXCERPT = Path(sys.executable).with_name("excerpt")
QUERIES = ["Lord Henry influence", "Achilles anger", "portrait hidden", "Hector Andromache",
           "Sibyl Vane theatre", "youth and beauty", "Priam ransom", "Basil Hallward"]
QUESTIONS = ["What does Lord Henry say about influence?", "Why does Dorian hide the portrait?",
             "How does Hector say farewell to Andromache?"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class Connection:
    """One keep-alive HTTP/1.1 connection: request in, status and body out."""

    def __init__(self, port: int, key: str) -> None:
        self.port, self.key = port, key
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def call(self, method: str, target: str, body: bytes = b"") -> int:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = (f"{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Authorization: Bearer {self.key}\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n")
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        await self.reader.readexactly(length)
        return int(status_line.split()[1])

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


async def client(port: int, key: str, until: float, think_ms: float, seed: int,
                 out: dict[str, list[tuple[float, int]]]) -> None:
    rng, conn, i = random.Random(seed), Connection(port, key), seed
    try:
        while time.monotonic() < until:
            if think_ms:
                await asyncio.sleep(rng.expovariate(1000 / think_ms))
            if i % 5 == 4:
                route, method, target = "ask", "POST", "/v1/ask"
                body = json.dumps({"question": QUESTIONS[i % len(QUESTIONS)],
                                   "collection": "books", "mode": "bm25"}).encode()
            else:
                route, method, body = "search", "GET", b""
                target = (f"/v1/search?q={urllib.parse.quote(QUERIES[i % len(QUERIES)])}"
                          "&collection=books&mode=bm25&k=10")
            t = time.perf_counter()
            try:
                status = await conn.call(method, target, body)
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                status, conn = 0, Connection(port, key)
            out[route].append(((time.perf_counter() - t) * 1000, status))
            i += 1
    finally:
        conn.close()


async def run(port: int, key: str, clients: int, seconds: float,
              think_ms: float) -> dict[str, list[tuple[float, int]]]:
    out: dict[str, list[tuple[float, int]]] = {"search": [], "ask": []}
    until = time.monotonic() + seconds
    await asyncio.gather(*(client(port, key, until, think_ms, c, out) for c in range(clients)))
    return out


def start_server(home: Path, port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([str(EXCERPT), "--home", str(home), "serve", "--port", str(port),
                               "--keys", str(home / "load-keys.yaml")])
    for _ in range(600):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/-/health", timeout=1):
                return server
        except OSError:
            time.sleep(0.1)
    server.kill()
    raise SystemExit("excerpt serve did not start")


def report(out: dict[str, list[tuple[float, int]]], wall: float, cpu: float,
           clients: int, think_ms: float) -> dict[str, object]:
    row: dict[str, object] = {"clients": clients, "think_ms": think_ms,
                              "seconds": round(wall, 1), "server_cpu_percent": round(cpu)}
    for route, rows in out.items():
        ms = np.array([r[0] for r in rows])
        row[route] = {"requests": len(rows), "per_s": round(len(rows) / wall, 1),
                      "errors": sum(1 for r in rows if r[1] != 200),
                      **{f"p{p}": round(float(np.percentile(ms, p)), 1) for p in (50, 95, 99)}}
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think-ms", type=float, nargs="+", default=[0.0, 500.0])
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="excerpt-load-")) / "home"
    listed = subprocess.run([str(EXCERPT), "--home", str(home), "snapshots", "--collection",
                             "books"], capture_output=True)
    if listed.returncode != 0:
        subprocess.run([str(EXCERPT), "--home", str(home), "ingest", str(BOOKS),
                        "--collection", "books", "--embedder", "none"], check=True)
    (home / "load-keys.yaml").unlink(missing_ok=True)
    added = subprocess.run([str(EXCERPT), "--home", str(home), "keys", "add", "load", "--json",
                            "--keys", str(home / "load-keys.yaml")],
                           check=True, capture_output=True, text=True)
    key = json.loads(added.stdout)["key"]
    port = free_port()
    server = start_server(home, port)
    try:
        process = psutil.Process(server.pid)
        asyncio.run(run(port, key, 1, 2.0, 0.0))  # warm-up: Kiwi, stemmer, segments
        for think_ms in args.think_ms:
            cpu_before, start = process.cpu_times(), time.perf_counter()
            out = asyncio.run(run(port, key, args.clients, args.seconds, think_ms))
            wall = time.perf_counter() - start
            cpu_after = process.cpu_times()
            cpu = 100 * (cpu_after.user + cpu_after.system - cpu_before.user
                         - cpu_before.system) / wall
            print(json.dumps(report(out, wall, cpu, args.clients, think_ms)), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
