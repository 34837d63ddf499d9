"""Open files of a server over a collection of many synced files, and the warm search latency.

Run:  .venv/bin/python bench/open_files.py [--files 1000] [--queries 300] [--embedder none]

Writes ``--files`` small Markdown files, syncs them into a collection (one snapshot, so one
segment, per file), then

* starts a real ``excerpt serve`` (RLIMIT_NOFILE raised to the hard limit, so that a server
  without the bound does not fail before it is counted), searches the collection, another
  collection and ``/v1/models``, and counts its open descriptors (``/proc/PID/fd``) and
  memory maps (``/proc/PID/maps``) before and after;
* times ``--queries`` warm BM25 and hybrid searches in this process (``--embedder``: minilm,
  or none, when hybrid is BM25 alone), p50 and p95, and counts this process's descriptors and
  segment maps after them, three ways (store/maps.py): as the store runs (``default``: these
  segments' arrays are small, so read into memory), every array mapped and none ever dropped
  (``mapped_unbounded``: what the code did before the bound, on this code), and every array
  mapped under the bound of 256 (``mapped_bound``: the worst case of the least-recently-used
  set, a view of more mapped files than it keeps, so every search maps most again).

Prints one JSON object. Run on a checkout without store/maps.py, it measures ``default`` only.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from _serve import free_port, wait_healthy
from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.sync import SyncOptions
from excerpt.types import Filters, Principal

WORDS = ["river", "stone", "lantern", "harbor", "meadow", "copper", "violet", "thunder",
         "orchard", "signal", "quiet", "ember", "falcon", "marble", "willow", "canyon"]
QUERIES = ["river lantern", "copper falcon", "quiet meadow willow", "ember signal",
           "marble canyon thunder", "orchard stone", "violet harbor"]


def write_folder(folder: Path, files: int, words: int) -> None:
    rng = random.Random(0)
    folder.mkdir(parents=True)
    for i in range(files):
        body = " ".join(rng.choices(WORDS, k=words))
        (folder / f"note-{i:05d}.md").write_text(f"# Note {i}\n\n{body} token{i}.\n", "utf-8")


def descriptors(pid: int | str = "self") -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def maps(pid: int | str = "self") -> int:
    with open(f"/proc/{pid}/maps", encoding="utf-8") as fh:
        return sum(1 for line in fh if "/segments/" in line)


def get(url: str, key: str) -> int:
    sent = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(sent, timeout=60) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return exc.code


def serve(home: Path, key: str) -> dict[str, Any]:
    """A real server's open descriptors and segment maps before and after searches."""
    port = free_port()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "excerpt", "--home", str(home), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard)))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, server)
        out: dict[str, Any] = {"fds_started": descriptors(server.pid)}
        statuses = []
        for query in QUERIES:
            q = urllib.parse.quote(query)
            statuses.append(get(f"{url}/v1/search?q={q}&collection=notes&mode=bm25", key))
            statuses.append(get(f"{url}/v1/search?q={q}&collection=other&mode=bm25", key))
        statuses.append(get(f"{url}/v1/models", key))
        out.update(fds_after_searches=descriptors(server.pid), maps_after_searches=maps(
            server.pid), statuses=sorted(set(statuses)))
        return out
    finally:
        server.terminate()
        server.wait(timeout=10)


def latency(home: Path, queries: int, bound: tuple[int, int] | None = None) -> dict[str, Any]:
    """Warm search latency; ``bound``: (most maps, bytes under which an array is read)."""
    engine = Engine(home)
    if bound is not None:
        engine.store.maps.limit, engine.store.maps.read_below = bound  # type: ignore[attr-defined]
    filters, admin = Filters(collection="notes"), Principal.admin()
    out: dict[str, Any] = {}
    for mode in ("bm25", "hybrid"):
        for query in QUERIES:  # warm: segments opened, caches filled
            engine.search(query, filters, admin, mode, 10)
        times = []
        for i in range(queries):
            started = time.perf_counter()
            engine.search(QUERIES[i % len(QUERIES)], filters, admin, mode, 10)
            times.append((time.perf_counter() - started) * 1000)
        summary = latency_summary(times)
        out[mode] = {"p50_ms": round(summary["p50"], 2), "p95_ms": round(summary["p95"], 2)}
    out.update(fds=descriptors(), maps=maps())
    engine.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--embedder", default="minilm", choices=("minilm", "none"))
    args = parser.parse_args()
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    with tempfile.TemporaryDirectory(prefix="excerpt-bench-open-files-") as tmp:
        folder, home = Path(tmp) / "notes", Path(tmp) / "home"
        write_folder(folder, args.files, 60)
        engine = Engine(home)
        started = time.perf_counter()
        engine.sync(folder, SyncOptions(collection="notes", embedder=args.embedder))
        synced = time.perf_counter() - started
        write_folder(Path(tmp) / "other", 1, 60)
        engine.sync(Path(tmp) / "other", SyncOptions(collection="other", embedder=args.embedder))
        engine.close()
        made = subprocess.run([sys.executable, "-m", "excerpt", "--home", str(home), "keys",
                               "add", "bench", "--json"], capture_output=True, check=True)
        key = json.loads(made.stdout)["key"]
        result = {"files": args.files, "embedder": args.embedder, "sync_s": round(synced, 1),
                  "server": serve(home, key), "default": latency(home, args.queries)}
        if importlib.util.find_spec("excerpt.store.maps"):
            result["mapped_unbounded"] = latency(home, args.queries, (10**9, 0))
            result["mapped_bound"] = latency(home, args.queries, (256, 0))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
