"""Load test of `excerpt serve` on loopback: concurrent clients mixing search and ask.

Run:  .venv/bin/python bench/load.py [--clients 50] [--seconds 60] [--home DIR]

The two books are ingested BM25-only into ``--home`` (collection ``books``) unless there; the
service runs in this process on a free port (uvicorn, one worker), with one reader key. Each
client loops: 4 searches then 1 ask (bm25, questions from a fixed list), for ``--seconds``.
Reported: requests, throughput, errors, and p50/p95/p99 latency per route (issue 7 goal: zero
errors, search p95 under 100 ms at 50 clients on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np

from excerpt.engine import Engine
from excerpt.server.app import create_app
from excerpt.server.keys import KeyRing

REPO = Path(__file__).resolve().parents[1]
BOOKS = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data")) / "books"
QUERIES = ["Lord Henry influence", "Achilles anger", "portrait hidden", "Hector Andromache",
           "Sibyl Vane theatre", "youth and beauty", "Priam ransom", "Basil Hallward"]
QUESTIONS = ["What does Lord Henry say about influence?", "Why does Dorian hide the portrait?",
             "How does Hector say farewell to Andromache?"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def request(url: str, key: str, body: dict[str, object] | None = None) -> int:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data, {"Authorization": f"Bearer {key}",
                                             "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as response:
            response.read()
            return response.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:
        return 0


def client(base: str, key: str, until: float, out: dict[str, list[tuple[float, int]]],
           lock: threading.Lock, seed: int) -> None:
    i = seed
    while time.monotonic() < until:
        if i % 5 == 4:
            route = "ask"
            t = time.perf_counter()
            status = request(f"{base}/v1/ask", key, {"question": QUESTIONS[i % len(QUESTIONS)],
                                                     "collection": "books", "mode": "bm25"})
        else:
            route = "search"
            q = urllib.parse.quote(QUERIES[i % len(QUERIES)])
            t = time.perf_counter()
            status = request(f"{base}/v1/search?q={q}&collection=books&mode=bm25&k=10", key)
        with lock:
            out[route].append(((time.perf_counter() - t) * 1000, status))
        i += 1


def main() -> int:
    import uvicorn

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--home", type=Path, default=None)
    args = parser.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="excerpt-load-")) / "home"
    engine = Engine(home)
    if "books" not in engine.store.collections():
        engine.ingest(BOOKS, collection="books", embedder="none")
    ring = KeyRing(home / "load-keys.yaml")
    _, key = ring.add("load")
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(engine, ring), host="127.0.0.1",
                                           port=port, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    base = f"http://127.0.0.1:{port}"
    request(f"{base}/v1/ask", key, {"question": QUESTIONS[0], "collection": "books",
                                    "mode": "bm25"})  # warm-up: Kiwi, stemmer, segments
    out: dict[str, list[tuple[float, int]]] = {"search": [], "ask": []}
    lock = threading.Lock()
    until = time.monotonic() + args.seconds
    threads = [threading.Thread(target=client, args=(base, key, until, out, lock, c))
               for c in range(args.clients)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - start
    server.should_exit = True
    report: dict[str, object] = {"clients": args.clients, "seconds": round(wall, 1)}
    for route, rows in out.items():
        ms = np.array([r[0] for r in rows])
        errors = sum(1 for r in rows if r[1] != 200)
        report[route] = {"requests": len(rows), "per_s": round(len(rows) / wall, 1),
                         "errors": errors,
                         **{f"p{p}": round(float(np.percentile(ms, p)), 1) for p in (50, 95, 99)}}
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
