"""Load test of `excerpt serve` on loopback: 50 concurrent clients mixing search and ask.

Run:  .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--think-ms 0 500]
                                     [--home DIR] [--workers 1 2] [--client asyncio|wrk]
                                     [--route mix|search] [--connection keep-alive new]

The two books are ingested BM25-only into ``--home`` (collection ``books``) unless there. The
service is the real command, ``excerpt serve``, in its own process on a free port with one
reader key; the clients run in this process (asyncio, one keep-alive HTTP/1.1 connection
each), so client and server share the 2 cores but not a GIL. Each client loops: 4 searches
then 1 ask (bm25, fixed query lists), waiting an exponentially distributed think time of mean
``--think-ms`` between requests (0: a closed loop, each client sends its next request as soon
as the last is answered, which measures saturation). One run per think time.
Reported per run: requests, throughput, errors, p50/p95/p99 per route, the server's CPU use.
Issue 7 goal: zero errors, search p95 under 100 ms at 50 clients on 2 cores.

``--workers 1 2`` repeats everything for ``excerpt serve --workers N`` with each N (issue 20:
two workers at least 1.7 times one at saturation, zero errors). ``--client wrk`` measures
saturation only, with wrk (the Debian package: C, one thread, so the load generator takes a
sliver of the 2 cores the workers need, where the asyncio clients take a good part of one):
searches alone, then asks alone, each a closed loop of ``--clients`` connections.

Latency per request (issue 28: two workers served every kept-alive request 46 ms late, the
client's delayed ACK, which 50 connections at saturation hid): ``--route search`` sends only
searches, ``--clients 1 4`` runs each count in turn, and ``--connection keep-alive new`` runs
each with kept-alive connections, then with a new connection per request (closed by the
client after the response). For example::

    bench/load.py --workers 1 2 --route search --clients 1 4 --think-ms 0 --seconds 15 \
        --connection keep-alive new
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import psutil

from _serve import free_port, wait_healthy

REPO = Path(__file__).resolve().parents[1]
BOOKS = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data")) / "books"
EXCERPT = Path(sys.executable).with_name("excerpt")
QUERIES = ["Lord Henry influence", "Achilles anger", "portrait hidden", "Hector Andromache",
           "Sibyl Vane theatre", "youth and beauty", "Priam ransom", "Basil Hallward"]
QUESTIONS = ["What does Lord Henry say about influence?", "Why does Dorian hide the portrait?",
             "How does Hector say farewell to Andromache?"]


class Connection:
    """One keep-alive HTTP/1.1 connection: request in, status and body out."""

    def __init__(self, port: int, key: str, fresh: bool = False) -> None:
        self.port, self.key, self.fresh = port, key, fresh  # fresh: one connection a request
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
        if self.fresh:
            self.close()
        return int(status_line.split()[1])

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.reader = self.writer = None


async def client(port: int, key: str, until: float, think_ms: float, seed: int,
                 out: dict[str, list[tuple[float, int]]], route_mix: str = "mix",
                 fresh: bool = False) -> None:
    rng, conn, i = random.Random(seed), Connection(port, key, fresh), seed
    try:
        while time.monotonic() < until:
            if think_ms:
                await asyncio.sleep(rng.expovariate(1000 / think_ms))
            if i % 5 == 4 and route_mix == "mix":
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
                status, conn = 0, Connection(port, key, fresh)
            out[route].append(((time.perf_counter() - t) * 1000, status))
            i += 1
    finally:
        conn.close()


async def run(port: int, key: str, clients: int, seconds: float, think_ms: float,
              route_mix: str = "mix", fresh: bool = False) -> dict[str, list[tuple[float, int]]]:
    out: dict[str, list[tuple[float, int]]] = {"search": [], "ask": []}
    until = time.monotonic() + seconds
    await asyncio.gather(*(client(port, key, until, think_ms, c, out, route_mix, fresh)
                           for c in range(clients)))
    return {route: rows for route, rows in out.items() if rows}


def start_server(home: Path, port: int, workers: int = 1) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([str(EXCERPT), "--home", str(home), "serve", "--port", str(port),
                               "--keys", str(home / "load-keys.yaml"),
                               "--workers", str(workers)])
    wait_healthy(f"http://127.0.0.1:{port}", server)
    return server


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


def server_cpu(server: psutil.Process) -> float:
    """CPU seconds of the server and its worker processes so far."""
    processes = [server, *server.children(recursive=True)]
    return sum(sum(p.cpu_times()[:2]) for p in processes)


SEARCH_TARGET = "/v1/search?q=Achilles%20anger&collection=books&mode=bm25&k=10"
WRK_SCRIPT = """
wrk.method = "{method}"
wrk.headers["Authorization"] = "Bearer {key}"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{body}'
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('WRK {{"requests": %d, "seconds": %f, "errors": %d, "p50": %f, '
    .. '"p95": %f, "p99": %f}}\\n', summary.requests, summary.duration / 1e6,
    e.connect + e.read + e.write + e.status + e.timeout, latency:percentile(50) / 1e3,
    latency:percentile(95) / 1e3, latency:percentile(99) / 1e3))
end
"""


def run_wrk(port: int, key: str, route: str, clients: int, seconds: float) -> dict[str, float]:
    """One closed-loop wrk run of ``route`` (search or ask): requests/s, errors, p50/p95/p99 ms."""
    if route == "search":
        script = WRK_SCRIPT.format(method="GET", key=key, body="")
        target = SEARCH_TARGET
    else:
        body = json.dumps({"question": QUESTIONS[0], "collection": "books", "mode": "bm25"})
        script = WRK_SCRIPT.format(method="POST", key=key, body=body)
        target = "/v1/ask"
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as lua:
        lua.write(script)
    try:
        out = subprocess.run(["wrk", "-t1", f"-c{clients}", f"-d{seconds:g}s", "--timeout", "10s",
                              "-s", lua.name, f"http://127.0.0.1:{port}{target}"],
                             capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(lua.name)
    found = json.loads(out[out.index("WRK ") + 4:].splitlines()[0])
    return {"per_s": round(found["requests"] / found["seconds"], 1),
            "requests": found["requests"], "errors": found["errors"],
            **{p: round(found[p], 1) for p in ("p50", "p95", "p99")}}


def runs(args: argparse.Namespace) -> list[tuple[int, str, float, str]]:
    """The runs ``args`` ask for: clients, route, think time and connection of each."""
    if args.client == "wrk":  # wrk keeps its connections alive
        return [(c, route, 0.0, "keep-alive") for c in args.clients for route in ("search", "ask")]
    return [(c, args.route, t, connection) for c in args.clients for t in args.think_ms
            for connection in args.connection]


def measure(home: Path, key: str, workers: int, args: argparse.Namespace) -> None:
    """Every run of ``args`` against one ``excerpt serve --workers`` process, a JSON line each."""
    port = free_port()
    server = start_server(home, port, workers)
    try:
        process = psutil.Process(server.pid)
        # warm-up: many connections, so that every worker has loaded its segments
        asyncio.run(run(port, key, 8 * workers, 3.0, 0.0))
        for clients, route, think_ms, connection in runs(args):
            cpu_before, start = server_cpu(process), time.perf_counter()
            if args.client == "wrk":
                row: dict[str, object] = {"route": route, "clients": clients,
                                          **run_wrk(port, key, route, clients, args.seconds)}
                wall = time.perf_counter() - start
            else:
                out = asyncio.run(run(port, key, clients, args.seconds, think_ms, route,
                                      connection == "new"))
                wall = time.perf_counter() - start
                row = {"route": route, "connection": connection,
                       **report(out, wall, 0.0, clients, think_ms)}
            row["server_cpu_percent"] = round(100 * (server_cpu(process) - cpu_before) / wall)
            print(json.dumps({"workers": workers, **row,
                              "load_average": os.getloadavg()[0]}), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, nargs="+", default=[50])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--think-ms", type=float, nargs="+", default=[0.0, 500.0])
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--workers", type=int, nargs="+", default=[1])
    parser.add_argument("--client", choices=("asyncio", "wrk"), default="asyncio")
    parser.add_argument("--route", choices=("mix", "search"), default="mix",
                        help="mix: 4 searches then 1 ask per client; search: searches only")
    parser.add_argument("--connection", choices=("keep-alive", "new"), nargs="+",
                        default=["keep-alive"],
                        help="new: a new connection per request (asyncio clients only)")
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
    for workers in args.workers:
        measure(home, key, workers, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
