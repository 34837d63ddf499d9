"""SciFact (train queries): quality and latency of every mode, beside bm25s and rank_bm25.

Run:  .venv/bin/python bench/scifact.py [--home bench/out/scifact-home] [--json out.json]

Everything runs in this one process on the same queries: excerpt's modes (and both hybrid
fusions), bm25s (method "lucene", same k1/b, its own stemmed tokenizer, its default
``n_threads=0`` retrieval; bench/bm25_peer.py times it against excerpt's BM25 alternating
query by query) and rank_bm25
(BM25Okapi on excerpt's tokens).  Latency is per query, in-process, query embedding included.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import bm25_peer
from _scifact import HOME, scifact
from excerpt.analyze import analyze
from excerpt.engine import Engine
from excerpt.evaluate.metrics import ir_metrics, latency_summary
from excerpt.evaluate.runner import ensure_ingested
from excerpt.settings import Settings
from excerpt.types import Filters, Principal

K1, B = 1.5, 0.75


def timed_run(queries: dict[str, str], search: Callable[[str], dict[str, float]]
              ) -> tuple[dict[str, dict[str, float]], list[float]]:
    run, lat = {}, []
    for qid, text in queries.items():
        t = time.perf_counter()
        run[qid] = search(text)
        lat.append((time.perf_counter() - t) * 1000)
    return run, lat


def halves(qrels: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split the queries in two by position: choices are made on 'tune', reported on 'held'."""
    ids = sorted(qrels)
    return ({q: qrels[q] for q in ids[0::2]}, {q: qrels[q] for q in ids[1::2]})


def report(name: str, qrels: Any, run: Any, lat: list[float]) -> dict[str, Any]:
    tune, held = halves(qrels)
    row: dict[str, Any] = {"system": name, **ir_metrics(qrels, run),
                           "latency_ms": latency_summary(lat),
                           "ndcg@10_tune": ir_metrics(tune, run)["ndcg@10"],
                           "ndcg@10_held": ir_metrics(held, run)["ndcg@10"]}
    print(f"{name:<28} nDCG@10 {row['ndcg@10']:.4f} (tune {row['ndcg@10_tune']:.4f}, "
          f"held-out {row['ndcg@10_held']:.4f})  R@100 {row['recall@100']:.4f}  "
          f"p50 {row['latency_ms']['p50']:.2f} ms  p95 {row['latency_ms']['p95']:.2f} ms",
          flush=True)
    return row


def corpus_records(path: Path) -> list[dict[str, Any]]:
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def run_peers(data: Any, queries: dict[str, str]) -> list[dict[str, Any]]:
    from rank_bm25 import BM25Okapi

    records = corpus_records(data.corpus)
    ids = [r["_id"] for r in records]
    texts = [f"{r.get('title', '')}\n{r['text']}" for r in records]
    bm25s_search = bm25_peer.bm25s_search(data.corpus)
    rows = [report("bm25s (lucene)", data.qrels, *timed_run(queries, bm25s_search))]
    okapi = BM25Okapi([analyze(t, "en") for t in texts], k1=K1, b=B)

    def okapi_search(text: str) -> dict[str, float]:
        scores = okapi.get_scores(analyze(text, "en"))
        top = np.argsort(-scores, kind="stable")[:100]
        return {ids[i]: float(scores[i]) for i in top if scores[i] > 0}

    rows.append(report("rank_bm25 (Okapi)", data.qrels, *timed_run(queries, okapi_search)))
    return rows


def run_excerpt(home: Path, data: Any, queries: dict[str, str]) -> list[dict[str, Any]]:
    rows = []
    for label, settings, mode in [
        ("excerpt bm25", Settings(), "bm25"),
        ("excerpt semantic", Settings(), "semantic"),
        ("excerpt hybrid rrf", Settings(fusion="rrf"), "hybrid"),
        *[(f"excerpt hybrid blend a={a}", Settings(fusion="blend", fusion_alpha=a), "hybrid")
          for a in (0.3, 0.4, 0.5, 0.6, 0.7)],
    ]:
        engine = Engine(home, settings)
        filters, admin = Filters(collection="scifact"), Principal.admin()
        engine.search("warm up", filters, admin, mode, 100)  # type: ignore[arg-type]

        def search(text: str, engine: Engine = engine, mode: str = mode,
                   filters: Filters = filters, admin: Principal = admin) -> dict[str, float]:
            result = engine.search(text, filters, admin, mode, 100,  # type: ignore[arg-type]
                                   fetch=False)
            return {node_id: score for node_id, score, _ in result.ranking}

        rows.append(report(label, data.qrels, *timed_run(queries, search)))
        engine.close()
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N queries.")
    parser.add_argument("--no-peers", action="store_true", help="Skip bm25s and rank_bm25.")
    args = parser.parse_args()
    data, queries = scifact("train", args.limit)
    engine = Engine(args.home)
    t = time.perf_counter()
    ensure_ingested(engine, data.corpus, "scifact")
    print(f"corpus ready in {time.perf_counter() - t:.1f} s", flush=True)
    engine.close()
    peers = [] if args.no_peers else run_peers(data, queries)
    rows = peers + run_excerpt(args.home, data, queries)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"queries": len(queries), "rows": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
