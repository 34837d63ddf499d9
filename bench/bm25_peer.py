"""BM25 beside bm25s on SciFact, as people run bm25s: same queries, one process, one run.

Run:  .venv/bin/python bench/bm25_peer.py [--rounds 5] [--json out.json]

bm25s runs its default path (``retrieve(..., k=100)`` with ``n_threads=0``: no thread pool),
tokenizing each query with its own stemmed, stopworded tokenizer; method "lucene" with
excerpt's k1/b so both rank by the same formula.  excerpt runs ``Engine.search`` in mode bm25,
k 100, ``fetch=False`` (no hit texts: bm25s returns none either), over a store holding SciFact
without vectors.  Each round times every query once per system, the systems alternating per
query so that both see the same machine load; per system the p50/p95 of each round are
reported with their median over rounds, and the ratio excerpt / bm25s of the p50s.

Only the train qrels ship with SciFact here (809 queries with judgements), so those are the
queries; nDCG@10 is computed on them for both systems.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _scifact import scifact
from excerpt.engine import Engine
from excerpt.evaluate.metrics import ir_metrics, latency_summary
from excerpt.evaluate.runner import ensure_ingested
from excerpt.types import Filters, Principal

K1, B = 1.5, 0.75
HOME = Path("bench/out/bm25-peer-home")
Search = Callable[[str], dict[str, float]]


def bm25s_search(corpus: Path) -> Search:
    """bm25s indexed on SciFact (title + text), searched on its default path (``n_threads=0``:
    ``n_threads=1`` sends it through a thread pool, 2.5x slower per query, which flattered
    excerpt in bench/scifact.py before issue 20). bench/scifact.py runs this one too."""
    import bm25s
    import Stemmer

    with open(corpus, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    ids = [r["_id"] for r in records]
    stemmer = Stemmer.Stemmer("english")
    retriever = bm25s.BM25(method="lucene", k1=K1, b=B)
    texts = [f"{r.get('title', '')}\n{r['text']}" for r in records]
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False),
                    show_progress=False)

    def search(text: str) -> dict[str, float]:
        toks = bm25s.tokenize([text], stopwords="en", stemmer=stemmer, show_progress=False)
        docs, scores = retriever.retrieve(toks, k=100, show_progress=False)
        return {ids[d]: float(s) for d, s in zip(docs[0], scores[0], strict=True) if s > 0}

    return search


def excerpt_search(engine: Engine) -> Search:
    filters, admin = Filters(collection="scifact"), Principal.admin()

    def search(text: str) -> dict[str, float]:
        result = engine.search(text, filters, admin, "bm25", 100, fetch=False)
        return {node_id: score for node_id, score, _ in result.ranking}

    return search


def one_round(queries: dict[str, str], systems: dict[str, Search]
              ) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, list[float]]]:
    runs: dict[str, dict[str, dict[str, float]]] = {name: {} for name in systems}
    lat: dict[str, list[float]] = {name: [] for name in systems}
    order = list(systems.items())
    for i, (qid, text) in enumerate(queries.items()):
        for name, search in order if i % 2 == 0 else order[::-1]:
            t = time.perf_counter()
            runs[name][qid] = search(text)
            lat[name].append((time.perf_counter() - t) * 1000)
    return runs, lat


def compare(queries: dict[str, str], qrels: Any, systems: dict[str, Search],
            rounds: int) -> dict[str, Any]:
    for search in systems.values():  # warm-up: first-touch of mapped files, memo tables
        for text in list(queries.values())[:50]:
            search(text)
    p50: dict[str, list[float]] = {name: [] for name in systems}
    p95: dict[str, list[float]] = {name: [] for name in systems}
    runs: dict[str, Any] = {}
    for _ in range(rounds):
        runs, lat = one_round(queries, systems)
        for name, values in lat.items():
            summary = latency_summary(values)
            p50[name].append(summary["p50"])
            p95[name].append(summary["p95"])
    rows: dict[str, dict[str, Any]] = {name: {"ndcg@10": ir_metrics(qrels, runs[name])["ndcg@10"],
                   "p50_ms": statistics.median(p50[name]), "p95_ms": statistics.median(p95[name]),
                   "p50_ms_rounds": [round(v, 4) for v in p50[name]],
                   "p95_ms_rounds": [round(v, 4) for v in p95[name]]} for name in systems}
    return {"queries": len(queries), "rounds": rounds, "systems": rows,
            "ratio_p50": rows["excerpt"]["p50_ms"] / rows["bm25s"]["p50_ms"],
            "ratio_p95": rows["excerpt"]["p95_ms"] / rows["bm25s"]["p95_ms"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=0, help="Only the first N queries.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    data, queries = scifact("train", args.limit)
    engine = Engine(args.home)
    ensure_ingested(engine, data.corpus, "scifact", embedder="none")
    out = compare(queries, data.qrels, {"bm25s": bm25s_search(data.corpus),
                                        "excerpt": excerpt_search(engine)}, args.rounds)
    engine.close()
    for name, row in out["systems"].items():
        print(f"{name:<8} nDCG@10 {row['ndcg@10']:.4f}  p50 {row['p50_ms']:.3f} ms  "
              f"p95 {row['p95_ms']:.3f} ms  (p50 per round {row['p50_ms_rounds']})")
    print(f"excerpt / bm25s: p50 x{out['ratio_p50']:.2f}  p95 x{out['ratio_p95']:.2f} "
          f"({out['queries']} queries, median of {out['rounds']} rounds)")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
