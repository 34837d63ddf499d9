"""Code search latency on the seed 004 release bundles: the seed's 16 queries in every mode.

Run:  .venv/bin/python bench/code_search.py [--repeat 20]

Both bundles are imported into a fresh store (MiniLM embeddings); each query runs ``--repeat``
times per mode against the primary snapshot through `Engine.search` with k 10, hit texts
fetched, all access. Latency includes query analysis and, for semantic and hybrid, the query
embedding. Then `Engine.graph` at depth 2 from every node of the primary snapshot, in each
direction (out, in, both), ``--repeat`` / 10 rounds: the issue's target is p95 under 20 ms.
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

from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.types import Filters, Principal

DATA = Path(os.environ.get("EXCERPT_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
QUERIES = [
    "Where is the application entry point and bootstrap?",
    "How does semantic search and nearest neighbors work?",
    "Which component combines BM25 and semantic search?",
    "Where is fraud risk calculated with token validation?",
    "How do we search shipments by tracking number?",
    "proc_SearchShipments_BM25", "KeywordExtractor ExtractKeywords",
    "TokenValidator ValidateToken", "table_Payments proc_ProcessPayment", "DependencyTreeExpander",
    "hybrid search BM25 semantic rerank shipments", "ACL filter before rank",
    "payments invoices VAT", "who calls stored procedure execute",
    "query routing and retrieval strategy selection", "token validation and auth",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    bundles = sorted((DATA / "fake_enterprise").glob("Release_FAKE_ENTERPRISE_*.zip"))
    if not bundles:
        print(f"no bundles under {DATA / 'fake_enterprise'} (set EXCERPT_DATA)", file=sys.stderr)
        return 1
    home = Path(tempfile.mkdtemp(prefix="excerpt-code-bench-"))
    try:
        engine = Engine(home)
        snapshots = [engine.ingest(b, collection="code").snapshot_id for b in bundles]
        first = snapshots[0]
        filters, admin = Filters("code", snapshot_id=first), Principal.admin()
        engine.search("warm up", filters, admin, "hybrid", 10)
        for mode in ("bm25", "semantic", "hybrid"):
            lat = []
            for _ in range(args.repeat):
                for q in QUERIES:
                    t = time.perf_counter()
                    engine.search(q, filters, admin, mode, 10)  # type: ignore[arg-type]
                    lat.append((time.perf_counter() - t) * 1000)
            print(json.dumps({"mode": mode, "queries": len(lat), **latency_summary(lat)}))
        seeds = engine.store.segment(str(first)).ids
        for direction in ("out", "in", "both"):
            limits = engine.graph_limits(2, direction=direction)
            lat = []
            for _ in range(max(1, args.repeat // 10)):
                for seed in seeds:
                    t = time.perf_counter()
                    engine.graph([seed], filters, admin, limits)
                    lat.append((time.perf_counter() - t) * 1000)
            print(json.dumps({"graph": direction, "depth": 2, "calls": len(lat),
                              **latency_summary(lat)}))
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
