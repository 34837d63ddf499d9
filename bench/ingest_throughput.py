"""Ingestion throughput in nodes per second, with and without embeddings.

Run:  .venv/bin/python bench/ingest_throughput.py [--book PATH] [--repeat 1]

Ingests an English book (default: The Picture of Dorian Gray, 666 nodes of ~800 characters)
into a fresh store three ways: BM25 only (--embedder none), with MiniLM embeddings from a cold
vector cache, and again with a warm cache (re-import of unchanged content embeds nothing).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from excerpt.engine import Engine

DATA = Path(os.environ.get("EXCERPT_DATA", Path(__file__).resolve().parents[2] / "shared/data"))


def one(home: Path, book: Path, embedder: str, source: str) -> dict[str, Any]:
    engine = Engine(home)
    t = time.perf_counter()
    result = engine.ingest([book], collection="bench", fmt="gutenberg", embedder=embedder,
                           source=source)
    seconds = time.perf_counter() - t
    engine.close()
    return {"embedder": embedder, "nodes": result.nodes, "embedded": result.embedded,
            "seconds": round(seconds, 2), "nodes_per_s": round(result.nodes / seconds, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--book", type=Path, default=DATA / "books" / "pg174_dorian_gray.txt")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if not args.book.exists():
        print(f"{args.book} not found (set EXCERPT_DATA)", file=sys.stderr)
        return 1
    home = Path(tempfile.mkdtemp(prefix="excerpt-ingest-bench-"))
    try:
        from excerpt.analyze import analyze
        from excerpt.embed import get_embedder

        analyze("warm up the analyzers")
        get_embedder("minilm").embed_query("warm up the model")  # load time is not ingestion
        rows = [
            {"run": "bm25 only", **one(home / "a", args.book, "none", "a")},
            {"run": "minilm, cold cache", **one(home / "b", args.book, "minilm", "b")},
            {"run": "minilm, warm cache", **one(home / "b", args.book, "minilm", "b2")},
        ]
    finally:
        shutil.rmtree(home, ignore_errors=True)
    for row in rows:
        print(json.dumps(row), flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
