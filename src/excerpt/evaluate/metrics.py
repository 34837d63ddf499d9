"""IR metrics through pytrec_eval (trec_eval's own code), and latency percentiles.

MRR@10 is trec_eval's ``recip_rank`` on runs cut to their first 10 results.

trec_eval orders tied scores by document id *descending*, excerpt by id ascending. So that every
metric scores the ranking excerpt returned, each run is first put in excerpt's order (score
descending, then id) and its scores replaced by strictly decreasing rank scores.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

Qrels = Mapping[str, Mapping[str, int]]
Run = Mapping[str, Mapping[str, float]]


def _ranked(run: Run, depth: int | None = None) -> dict[str, dict[str, float]]:
    """Each query's documents in excerpt's order, scored n, n-1, ..., 1 (no ties left)."""
    out = {}
    for qid, docs in run.items():
        order = sorted(docs.items(), key=lambda kv: (-kv[1], kv[0]))[:depth]
        out[qid] = {doc: float(len(order) - i) for i, (doc, _) in enumerate(order)}
    return out


METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10")


def ir_per_query(qrels: Qrels, run: Run) -> dict[str, dict[str, float]]:
    """nDCG@10, Recall@10, Recall@100 and MRR@10 of every judged query.

    A judged query missing from ``run`` (or with no results) scores 0 on every metric.
    """
    import pytrec_eval

    judged = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items() if docs}
    if not judged:
        raise ValueError("no judged queries")
    full = _ranked({q: dict(run.get(q, {})) or {"__none__": 0.0} for q in judged})
    ev = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recall.10,100"})
    per_q = ev.evaluate(full)
    ev_rr = pytrec_eval.RelevanceEvaluator(judged, {"recip_rank"})
    per_q_rr = ev_rr.evaluate(_ranked(full, 10))
    return {q: {"ndcg@10": per_q[q]["ndcg_cut_10"], "recall@10": per_q[q]["recall_10"],
                "recall@100": per_q[q]["recall_100"], "mrr@10": per_q_rr[q]["recip_rank"]}
            for q in judged}


def ir_metrics(qrels: Qrels, run: Run) -> dict[str, float]:
    """The per-query metrics of :func:`ir_per_query`, averaged over the judged queries."""
    return mean_metrics(ir_per_query(qrels, run))


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    return {m: sum(q[m] for q in per_query.values()) / len(per_query) for m in METRICS}


def stage_summary(timings: Sequence[Mapping[str, float]]) -> dict[str, dict[str, float]]:
    """Latency percentiles of every pipeline stage that appears in ``timings`` (one mapping of
    stage -> ms per query), in the order the stages first appear."""
    stages = list(dict.fromkeys(stage for t in timings for stage in t))
    return {stage: latency_summary([t[stage] for t in timings if stage in t])
            for stage in stages}


def latency_summary(milliseconds: Sequence[float]) -> dict[str, float]:
    if not milliseconds:
        return {"p50": 0.0, "p95": 0.0, "max": 0.0}
    arr = np.asarray(milliseconds, dtype=np.float64)
    return {
        "p50": float(np.percentile(arr, 50)),
        "p95": float(np.percentile(arr, 95)),
        "max": float(arr.max()),
    }
