"""SciFact (train queries): rerank the first stage's top-N down to 10, side by side.

Run:  .venv/bin/python bench/rerank.py [--home bench/out/scifact-home] [--depth 30 50]
                                       [--cold 40] [--json bench/out/rerank.json]

For each first stage (excerpt ``bm25`` and ``hybrid``, default settings) every query's top
``depth`` candidates go to each reranker, which keeps 10; nDCG@10 / Recall@10 are scored with
pytrec_eval on those 10.  A reranker's free parameter (the late-interaction prior weight, the
feature weights) is chosen on the even-numbered half of the queries ("tune") and reported on
the odd half ("held") and on all of them, as bench/scifact.py does for the fusion alpha.  The
grid runs on features / MaxSim scores computed once per query; the chosen setting is then run
through ``rerank()`` itself (its latency is the one reported) and must give the same ranking.

Candidates are passed as ``title + "\n" + text`` (what a BEIR node shows).  Latency is the
reranker's own time per query, in this process: for late interaction the token vectors of the
candidates are computed once into a cache (kept in ``rerank-tokens.npz`` beside ``--home``) for
the quality run ("warm": only the query pass and MaxSim), and "cold" latency (every candidate
encoded, as in a live query without a cache) is measured on the first ``--cold`` queries.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from _scifact import HOME, scifact
from excerpt.engine import Engine
from excerpt.evaluate.metrics import ir_metrics, latency_summary
from excerpt.evaluate.runner import ensure_ingested
from excerpt.rerank import KeepOrder, RerankResult
from excerpt.rerank.base import ranked
from excerpt.rerank.features import FeatureReranker, features
from excerpt.rerank.late_interaction import LateInteractionReranker, blend_with_prior
from excerpt.types import Filters, Principal

KEEP = 10
PRIOR_WEIGHTS = (0.0, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95)
FEATURE_GRID: list[dict[str, float]] = [
    {"prior": 1.0, **{f: w for f in ("bm25", "coverage", "proximity")}}
    for w in (0.05, 0.1, 0.2, 0.4)
] + [{"prior": 1.0, f: w} for f in ("bm25", "coverage", "proximity") for w in (0.1, 0.3)] + [
    {"prior": 0.0, "bm25": 1.0, "coverage": 1.0, "proximity": 1.0}]

Rerank = Callable[[str, Sequence[str]], list[RerankResult]]


def halves(qids: Sequence[str]) -> tuple[list[str], list[str]]:
    ids = sorted(qids)
    return ids[0::2], ids[1::2]


def first_stage(engine: Engine, queries: dict[str, str], mode: str, depth: int
                ) -> tuple[dict[str, list[str]], list[float]]:
    filters, admin = Filters(collection="scifact"), Principal.admin()
    engine.search("warm up", filters, admin, mode, depth)  # type: ignore[arg-type]
    out, lat = {}, []
    for qid, text in queries.items():
        t = time.perf_counter()
        result = engine.search(text, filters, admin, mode, depth,  # type: ignore[arg-type]
                               fetch=False)
        lat.append((time.perf_counter() - t) * 1000)
        out[qid] = [node_id for node_id, _, _ in result.ranking]
    return out, lat


def as_run(ranked_ids: dict[str, list[str]]) -> dict[str, dict[str, float]]:
    return {q: {d: float(KEEP - i) for i, d in enumerate(ids[:KEEP])}
            for q, ids in ranked_ids.items()}


def rerank_all(queries: dict[str, str], cands: dict[str, list[str]], texts: dict[str, str],
               depth: int, rerank: Rerank) -> tuple[dict[str, list[str]], list[float]]:
    out, lat = {}, []
    for qid, query in queries.items():
        ids = cands[qid][:depth]
        docs = [texts[d] for d in ids]
        t = time.perf_counter()
        results = rerank(query, docs)
        lat.append((time.perf_counter() - t) * 1000)
        out[qid] = [ids[r.index] for r in results]
    return out, lat


def score(qrels: dict[str, Any], ranked_ids: dict[str, list[str]]) -> dict[str, float]:
    tune, held = halves(list(qrels))
    run = as_run(ranked_ids)
    full = ir_metrics(qrels, run)
    return {"ndcg@10": full["ndcg@10"], "recall@10": full["recall@10"],
            "ndcg@10_tune": ir_metrics({q: qrels[q] for q in tune}, run)["ndcg@10"],
            "ndcg@10_held": ir_metrics({q: qrels[q] for q in held}, run)["ndcg@10"]}


def row(stage: str, depth: int, name: str, qrels: Any, ranked_ids: dict[str, list[str]],
        lat: list[float], **extra: Any) -> dict[str, Any]:
    r = {"first_stage": stage, "depth": depth, "reranker": name, **score(qrels, ranked_ids),
         "latency_ms": latency_summary(lat), **extra}
    print(f"{stage:<7} top-{depth:<3} {name:<34} nDCG@10 {r['ndcg@10']:.4f} "
          f"(tune {r['ndcg@10_tune']:.4f}, held {r['ndcg@10_held']:.4f})  "
          f"R@10 {r['recall@10']:.4f}  p50 {r['latency_ms']['p50']:.2f} ms  "
          f"p95 {r['latency_ms']['p95']:.2f} ms", flush=True)
    return r


def pick(qrels: Any, options: Sequence[Any], rank: Callable[[Any], dict[str, list[str]]]
         ) -> Any:
    """The option whose ranking has the best nDCG@10 on the tune half of the queries."""
    tune, _ = halves(list(qrels))
    best: tuple[float, Any] | None = None
    for option in options:
        value = ir_metrics({q: qrels[q] for q in tune}, as_run(rank(option)))["ndcg@10"]
        print(f"    tune nDCG@10 {value:.4f}  {option}", flush=True)
        if best is None or value > best[0]:
            best = (value, option)
    assert best is not None
    return best[1]


def by_scores(ids: Sequence[str], scores: Sequence[float]) -> list[str]:
    return [ids[r.index] for r in ranked(scores, KEEP)]


def token_cache(path: Path, late: LateInteractionReranker, texts: dict[str, str],
                wanted: Sequence[str]) -> dict[str, Any]:
    """Token vectors of the wanted documents, by text, kept in ``path`` between runs."""
    stored: dict[str, Any] = {}
    if path.exists():
        with np.load(path) as npz:
            flat, offsets, ids = npz["flat"], npz["offsets"], [str(i) for i in npz["ids"]]
        stored = {d: flat[offsets[i]:offsets[i + 1]] for i, d in enumerate(ids)}
    missing = [d for d in wanted if d not in stored]
    if missing:
        t = time.perf_counter()
        for d, tokens in zip(missing, late.encode([texts[d] for d in missing]), strict=True):
            stored[d] = tokens
        print(f"token vectors of {len(missing)} candidates in {time.perf_counter() - t:.1f} s",
              flush=True)
        ids = sorted(stored)
        offsets = np.cumsum([0, *[len(stored[d]) for d in ids]])
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, flat=np.concatenate([stored[d] for d in ids]), offsets=offsets,
                 ids=np.array(ids))
    return {texts[d]: stored[d] for d in wanted}


def features_rerank(weights: dict[str, float]) -> Rerank:
    reranker = FeatureReranker(weights)
    return lambda q, d: reranker.rerank(q, d, KEEP)


def late_rerank(prior_weight: float, cache: dict[str, Any]) -> Rerank:
    reranker = LateInteractionReranker(prior_weight=prior_weight, cache=cache)
    reranker.rerank("warm up", ["warm up"], 1)  # the model load is not a query's latency
    return lambda q, d: reranker.rerank(q, d, KEEP)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--home", type=Path, default=HOME)
    parser.add_argument("--depth", type=int, nargs="+", default=[30, 50])
    parser.add_argument("--cold", type=int, default=40, help="Queries for cold latency.")
    parser.add_argument("--limit", type=int, default=0, help="Only the first N queries.")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    data, queries = scifact("train", args.limit)
    qrels = {q: data.qrels[q] for q in queries if q in data.qrels}
    with open(data.corpus, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    texts = {r["_id"]: (f"{r['title']}\n{r['text']}" if r.get("title") else r["text"])
             for r in records}
    engine = Engine(args.home)
    ensure_ingested(engine, data.corpus, "scifact")
    top = max(args.depth)
    stages = {mode: first_stage(engine, queries, mode, top) for mode in ("bm25", "hybrid")}
    engine.close()

    union = sorted({d for cands, _ in stages.values() for ids in cands.values() for d in ids})
    cache = token_cache(args.home.parent / "rerank-tokens.npz", LateInteractionReranker(),
                        texts, union)
    rows: list[dict[str, Any]] = []
    for stage, (cands, stage_lat) in stages.items():
        # MaxSim of a document does not depend on the other candidates: computed once at the
        # largest depth (timed: the warm latency, query pass included), sliced per depth
        late = LateInteractionReranker(cache=cache)
        late.rerank("warm up", [texts[union[0]]], 1)
        maxsims, late_lat = {}, []
        for qid, query in queries.items():
            t = time.perf_counter()
            maxsims[qid] = late.scores(query, [texts[d] for d in cands[qid][:top]])
            late_lat.append((time.perf_counter() - t) * 1000)
        for depth in args.depth:
            cut = {q: ids[:depth] for q, ids in cands.items()}
            keep = KeepOrder()
            ranked_ids, lat = rerank_all(queries, cands, texts, depth,
                                         lambda q, d, r=keep: r.rerank(q, d, KEEP))
            rows.append(row(stage, depth, "none (first stage)", qrels, ranked_ids, lat,
                            first_stage_latency_ms=latency_summary(stage_lat)))

            feats, feat_lat = {}, []
            for qid, query in queries.items():
                t = time.perf_counter()
                feats[qid] = features(query, [texts[d] for d in cut[qid]])
                feat_lat.append((time.perf_counter() - t) * 1000)

            def feature_run(weights: dict[str, float], feats: Any = feats,
                            cut: Any = cut) -> dict[str, list[str]]:
                return {q: by_scores(cut[q], [sum(w * f[name] for name, w in weights.items())
                                              for f in feats[q]]) for q in queries}

            weights = pick(qrels, FEATURE_GRID, feature_run)
            ranked_ids, lat = rerank_all(queries, cands, texts, depth, features_rerank(weights))
            assert ranked_ids == feature_run(weights), "the fast path must be rerank()'s"
            rows.append(row(stage, depth, "features", qrels, ranked_ids, lat, weights=weights))

            def late_run(w: float, cut: Any = cut, depth: int = depth,
                         maxsims: Any = maxsims) -> dict[str, list[str]]:
                return {q: by_scores(cut[q], blend_with_prior(maxsims[q][:depth], w))
                        for q in queries}

            rows.append(row(stage, depth, "late-interaction (MaxSim only)", qrels, late_run(0.0),
                            late_lat, prior_weight=0.0, cached=True))
            weight = pick(qrels, PRIOR_WEIGHTS[1:], late_run)
            ranked_ids, lat = rerank_all(queries, cands, texts, depth, late_rerank(weight, cache))
            assert ranked_ids == late_run(weight), "the fast path must be rerank()'s"
            rows.append(row(stage, depth, f"late-interaction prior {weight}", qrels,
                            ranked_ids, lat, prior_weight=weight, cached=True))

    cold_rows = []
    cold_queries = dict(list(queries.items())[: args.cold])
    uncached = LateInteractionReranker()
    uncached.rerank("warm up", ["warm up"], 1)
    for depth in args.depth:
        _, lat = rerank_all(cold_queries, stages["hybrid"][0], texts, depth,
                            lambda q, d: uncached.rerank(q, d, KEEP))
        summary = latency_summary(lat)
        cold_rows.append({"depth": depth, "queries": len(cold_queries), "latency_ms": summary})
        print(f"late-interaction cold, hybrid top-{depth}: p50 {summary['p50']:.0f} ms  "
              f"p95 {summary['p95']:.0f} ms over {len(cold_queries)} queries", flush=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"queries": len(queries), "rows": rows,
                                         "late_interaction_cold": cold_rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
