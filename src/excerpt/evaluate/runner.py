"""Run every query of a BEIR split through the engine in-process and score the rankings."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from excerpt.engine import Engine
from excerpt.errors import InputError, NotFoundError
from excerpt.evaluate.beir import corpus_fingerprint, load_beir_dataset
from excerpt.evaluate.metrics import ir_per_query, latency_summary, mean_metrics, stage_summary
from excerpt.types import Filters, Principal, SearchMode


def ensure_ingested(engine: Engine, corpus: Path, collection: str, embedder: str = "auto",
                    progress: Callable[[str, int, int], None] | None = None) -> str:
    """The snapshot holding the corpus: one the collection's default view already holds with
    the same content (the hash of corpus.jsonl, named on the snapshot; wherever the file lay
    when it was ingested; with vectors unless ``embedder`` is "none"), else a new import of
    it."""
    fingerprint = corpus_fingerprint(corpus)
    if collection in engine.store.collections():
        for snap in engine.store.latest_snapshots(collection):
            if snap.name == fingerprint and (embedder == "none" or snap.embed_model):
                return snap.snapshot_id
    kwargs: dict[str, Any] = {"progress": progress} if progress else {}
    result = engine.ingest([corpus], collection=collection, fmt="beir",
                           source=str(corpus.resolve()), snapshot_name=fingerprint,
                           embedder=embedder, **kwargs)
    assert result.snapshot_id is not None
    return result.snapshot_id


def corpus_view(engine: Engine, collection: str, snapshot_id: str,
                principal: Principal) -> Filters:
    """The filters of an evaluation: its corpus's snapshot alone (other sources of the
    collection do not change its scores), checked to hold something ``principal`` may see."""
    filters = Filters(collection=collection, snapshot_id=snapshot_id)
    try:
        engine.resolve(filters, principal)
    except NotFoundError:
        raise InputError(f"the caller may see nothing of the corpus in {collection!r}: give "
                         "--acl-tag / --clearance, or --all-access") from None
    return filters


def evaluate(engine: Engine, folder: Path, split: str = "test", collection: str | None = None,
             mode: SearchMode = "hybrid", k: int = 100,
             progress: Callable[[str, int, int], None] | None = None,
             reranker: str | None = None, principal: Principal | None = None
             ) -> dict[str, Any]:
    """Every judged query of the split, run as ``principal`` (default: anonymous) over the
    corpus's snapshot; the report names the principal."""
    principal = principal or Principal.anonymous()
    data = load_beir_dataset(folder, split)
    collection = collection or f"beir-{Path(folder).resolve().name}"
    embedder = "none" if mode == "bm25" else "auto"  # BM25 alone needs no vectors
    snapshot_id = ensure_ingested(engine, data.corpus, collection, embedder, progress)
    filters = corpus_view(engine, collection, snapshot_id, principal)
    run: dict[str, dict[str, float]] = {}
    rows: list[dict[str, Any]] = []
    for i, (qid, text) in enumerate(data.queries.items()):
        t = time.perf_counter()
        result = engine.search(text, filters, principal, mode, max(k, 10), fetch=False,
                               reranker=reranker)
        latency = (time.perf_counter() - t) * 1000
        run[qid] = {node_id: score for node_id, score, _ in result.ranking}
        rows.append({"id": qid, "query": text, "latency_ms": latency,
                     "stages_ms": dict(result.timings_ms),
                     "ranking": [node_id for node_id, _, _ in result.ranking],
                     "relevant": sorted(d for d, r in data.qrels.get(qid, {}).items() if r > 0)})
        if progress:
            progress("queries", i + 1, len(data.queries))
    per_query = ir_per_query(data.qrels, run)
    for row in rows:
        row.update(per_query.get(row["id"], {}))
    judged = [r for r in rows if r["id"] in per_query]
    return {"queries": len(data.queries), **mean_metrics(per_query),
            "latency_ms": latency_summary([r["latency_ms"] for r in rows]),
            "stage_latency_ms": stage_summary([r["stages_ms"] for r in rows]),
            "mode": mode, "k": max(k, 10), "collection": collection, "split": split,
            "reranker": reranker or "none", "principal": principal.describe(),
            "snapshot_ids": [snapshot_id],
            "per_query": judged}
