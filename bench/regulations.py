"""The regulation book: RAG quality on the scenarios, Kiwi against whitespace tokens, latency.

Run:  .venv/bin/python bench/regulations.py [--home DIR] [--repeat 5] [--json OUT]

1. The book (``$EXCERPT_DATA/regulations/…_9-340_….txt``) is ingested BM25-only into
   ``--home`` (collection ``reg``) unless it is there already.
2. ``excerpt eval`` on ``examples/regulations/scenarios.yaml``: contextual recall, gold recall,
   faithfulness and answer relevancy (e5 judge), with adaptive k, in bm25 mode (the book's
   embedding is measured separately, bench/e5_runtime.py).
3. Tokenisation, everything else equal: bm25s (method ``lucene``, k1 1.5, b 0.75) over the same
   article nodes with Kiwi morphemes (excerpt's analyzer) and with whitespace tokens (lower-cased,
   split on white space, punctuation stripped), k = 10, scored on the scenarios' gold ids
   (pytrec_eval: nDCG@10, Recall@10, MRR@10) and reference answers (contextual recall at 10).
   excerpt's own search (Kiwi, expansion, multi-hop, adaptive k) is the third row.
4. Latency of the whole search per scenario query (median of ``--repeat`` runs each, after a
   warm-up), its p50/p95 over the queries, and the multi-hop stage alone. Budgets (seed 001):
   whole search < 500 ms (goal < 100 ms), multi-hop < 100 ms.

``--plain`` (issue 16 item 7) instead reports, for ``examples/regulations/plain_questions.yaml``
(questions in everyday words), per split (tune / heldout) and per ``--modes`` (bm25, hybrid):
how often a top-5 hit belongs to the governing regulation (the regulation of a gold id: the id
up to its first space) and how often a gold article itself is in the top 5. Hybrid needs a home
whose book was ingested with an embedder (``excerpt ingest ... --format regulations`` without
``--embedder none``); give it with ``--home``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, cast

from excerpt.analyze import analyze_many
from excerpt.engine import Engine
from excerpt.evaluate.metrics import ir_metrics, latency_summary
from excerpt.evaluate.rag import context_recall
from excerpt.evaluate.scenarios import Scenario, evaluate_scenarios, load_scenarios
from excerpt.types import Filters, Principal, SearchMode

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data"))
BOOK = DATA / "regulations" / "dongeui_regulations_9-340_20250702.txt"
SCENARIOS = REPO / "examples" / "regulations" / "scenarios.yaml"
PLAIN = REPO / "examples" / "regulations" / "plain_questions.yaml"
PLAIN_K = 5
COLLECTION = "reg"
K = 10
_PUNCT = re.compile(r"[^\w]+")

Tokenizer = Callable[[Sequence[str]], list[list[str]]]


def whitespace_tokens(texts: Sequence[str]) -> list[list[str]]:
    """Split on white space, lower-case, strip punctuation: what a BM25 without Kiwi sees."""
    out = []
    for text in texts:
        words = (_PUNCT.sub("", w) for w in text.lower().split())
        out.append([w for w in words if w])
    return out


def ensure_book(engine: Engine) -> None:
    if COLLECTION in engine.store.collections():
        return
    print(f"ingesting {BOOK.name} (BM25 only) ...", file=sys.stderr)
    t = time.perf_counter()
    engine.ingest(BOOK, collection=COLLECTION, embedder="none")
    print(f"  {time.perf_counter() - t:.1f} s", file=sys.stderr)


def book_nodes(engine: Engine) -> tuple[list[str], list[str]]:
    (snap,) = engine.store.latest_snapshots(COLLECTION)
    size = engine.store.segment(snap.snapshot_id).size
    nodes = engine.store.nodes_by_ordinal(snap.snapshot_id, list(range(size)))
    return [n.id for n in nodes], [n.text for n in nodes]


def bm25s_row(name: str, tokenize: Tokenizer, ids: list[str], texts: list[str],
              scenarios: Sequence[Scenario]) -> dict[str, Any]:
    import bm25s

    t = time.perf_counter()
    retriever = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    retriever.index(tokenize(texts), show_progress=False)
    index_s = time.perf_counter() - t
    run: dict[str, dict[str, float]] = {}
    recalls, latencies = [], []
    for s in scenarios:
        t = time.perf_counter()
        docs, scores = retriever.retrieve(tokenize([s.query]), k=K, show_progress=False)
        latencies.append((time.perf_counter() - t) * 1000)
        hits = [(ids[d], float(v)) for d, v in zip(docs[0], scores[0], strict=True) if v > 0]
        run[s.id] = dict(hits)
        recalls.append(context_recall(s.reference, [texts[ids.index(h)] for h, _ in hits]))
    qrels = {s.id: dict.fromkeys(s.gold, 1) for s in scenarios}
    return {"name": name, **ir_metrics(qrels, run), "context_recall@10": statistics.mean(recalls),
            "index_s": index_s, "latency_ms": latency_summary(latencies)}


def excerpt_row(engine: Engine, texts_by_id: dict[str, str],
                scenarios: Sequence[Scenario]) -> dict[str, Any]:
    run: dict[str, dict[str, float]] = {}
    recalls = []
    for s in scenarios:
        result = engine.search(s.query, Filters(COLLECTION), Principal.admin(), "bm25", K,
                               fetch=False)
        run[s.id] = {node_id: score for node_id, score, _ in result.ranking[:K]}
        recalls.append(context_recall(s.reference, [texts_by_id[i] for i in run[s.id]]))
    qrels = {s.id: dict.fromkeys(s.gold, 1) for s in scenarios}
    return {"name": "excerpt search (Kiwi + expansion, k 10)", **ir_metrics(qrels, run),
            "context_recall@10": statistics.mean(recalls)}


def latency(engine: Engine, scenarios: Sequence[Scenario], repeat: int) -> dict[str, Any]:
    filters, admin = Filters(COLLECTION), Principal.admin()
    for s in scenarios:  # warm-up: Kiwi, segment files, caches
        engine.search(s.query, filters, admin, "bm25")
    whole: list[float] = []
    hops: list[float] = []
    stages: dict[str, list[float]] = {}
    for s in scenarios:
        runs = []
        for _ in range(repeat):
            t = time.perf_counter()
            result = engine.search(s.query, filters, admin, "bm25")
            runs.append((time.perf_counter() - t) * 1000)
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        whole.append(statistics.median(runs))
        if "multi_hop" in result.timings_ms:
            hops.append(result.timings_ms["multi_hop"])
    return {"whole_search_ms": latency_summary(whole), "multi_hop_ms": latency_summary(hops),
            "stage_p50_ms": {k: statistics.median(v) for k, v in stages.items()},
            "queries": len(scenarios), "repeat": repeat}


def regulation_of(node_id: str) -> str:
    """The regulation of a node: its id up to the first space (휴학규정 제3조 -> 휴학규정)."""
    return node_id.split(" ", 1)[0]


def plain_rates(engine: Engine, path: Path, mode: SearchMode) -> dict[str, Any]:
    """Top-5 governing-regulation and exact-article hit rates of the plain questions, per split."""
    import yaml

    raw = yaml.safe_load(path.read_text(encoding="utf-8"))["scenarios"]
    rows: dict[str, list[tuple[bool, bool]]] = {}
    misses: dict[str, list[str]] = {}
    for item in raw:
        result = engine.search(item["query"], Filters(COLLECTION), Principal.admin(), mode,
                               PLAIN_K, fetch=False)
        top = [node_id for node_id, _, _ in result.ranking[:PLAIN_K]]
        regulation = bool({regulation_of(g) for g in item["gold"]} & set(map(regulation_of, top)))
        article = bool(set(item["gold"]) & set(top))
        rows.setdefault(item["split"], []).append((regulation, article))
        if not regulation:
            misses.setdefault(item["split"], []).append(f"{item['id']} {item['query']}")
    out: dict[str, Any] = {}
    for split, hits in sorted(rows.items()):
        out[split] = {"questions": len(hits),
                      "regulation_top5": sum(r for r, _ in hits) / len(hits),
                      "article_top5": sum(a for _, a in hits) / len(hits)}
    out["tune_misses"] = misses.get("tune", [])  # heldout misses stay unprinted while tuning
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=None,
                        help="Store to use (default: a temporary one, ingest included).")
    parser.add_argument("--scenarios", type=Path, default=SCENARIOS)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, default=None, help="Also write the report here.")
    parser.add_argument("--plain", action="store_true",
                        help="Only the plain-words questions: top-5 regulation/article rates.")
    parser.add_argument("--modes", default="bm25",
                        help="With --plain: comma-separated search modes (bm25,hybrid).")
    args = parser.parse_args()
    if not BOOK.exists():
        print(f"{BOOK} not found: set EXCERPT_DATA to the shared data folder", file=sys.stderr)
        return 2
    home = args.home or Path(tempfile.mkdtemp(prefix="excerpt-reg-")) / "home"
    engine = Engine(home)
    ensure_book(engine)
    if args.plain:
        modes = [cast(SearchMode, m) for m in args.modes.split(",")]
        plain = {mode: plain_rates(engine, PLAIN, mode) for mode in modes}
        print(json.dumps(plain, ensure_ascii=False, indent=2))
        return 0
    file = load_scenarios(args.scenarios)
    scenarios = file.scenarios
    report: dict[str, Any] = {"scenarios": len(scenarios)}
    quality = evaluate_scenarios(engine, file, COLLECTION, "bm25")
    report["rag"] = {k: v for k, v in quality.items() if k != "per_scenario"}
    report["missed"] = [(r["id"], r["missed_gold"]) for r in quality["per_scenario"]
                        if r["missed_gold"]]
    ids, texts = book_nodes(engine)
    report["tokenizers"] = [
        bm25s_row("bm25s, Kiwi morphemes", analyze_many, ids, texts, scenarios),
        bm25s_row("bm25s, whitespace tokens", whitespace_tokens, ids, texts, scenarios),
        excerpt_row(engine, dict(zip(ids, texts, strict=True)), scenarios),
    ]
    report["latency"] = latency(engine, scenarios, args.repeat)
    text = json.dumps(report, ensure_ascii=False, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
