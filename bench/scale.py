"""Synthetic scale run: BM25 and hybrid search at 100k and 1M nodes.

Run:  .venv/bin/python bench/scale.py --nodes 100000 [--nodes 1000000] [--queries 200]

Nodes are synthetic: 60 tokens on average drawn from a Zipf(1.1) law over 200k words, and
random unit vectors of dimension 384 (dense quality is meaningless here; cost is not).  The
segment is built with the production writer and published through the production store; queries
are 2-5 words drawn from the same law and run through the engine, query embedding (MiniLM)
included for hybrid.  Reported: build seconds, segment bytes, search p50/p95, resident memory.

BM25 is measured twice on the same segment in one process, ``--repeat`` times alternating:
exhaustive (every match scored) and with block-max pruning (retrieve/pruning.py), and the two
rankings are checked equal (ids and scores) on every query; medians over repeats are reported.
``--modes bm25`` skips hybrid; ``semantic`` adds the dense leg alone (each mode's row has
its wall and CPU latency; ``--recall`` adds the semantic recall@10 against the exact top 10
of every stored vector). ``--query-set scifact`` asks SciFact's judged train queries instead
of synthetic words.

``--sources S`` splits the nodes into S snapshots of one collection (10M as 10 x 1M: one
segment each, published one after the other as separate imports are); ``--vectors scifact``
stores SciFact's MiniLM vectors replicated with noise (bench/dense_ann.py) instead of random
ones, ``--vectors none`` none. A segment of ``dense_index_min_nodes`` vectors or more gets its
IVF index as an import builds it (``--no-index``: not). Peak memory (VmHWM) of the build and of
the search process is reported.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import psutil

from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.retrieve import lexical
from excerpt.store.ann import AnnConfig
from excerpt.store.base import SnapshotPayload
from excerpt.store.segment import write_segment
from excerpt.store.sqlite import SQLiteStore
from excerpt.types import Document, Filters, Node, Principal

VOCAB = 200_000
DIM = 384


def words(rng: np.random.Generator, n: int) -> np.ndarray:
    return np.minimum(rng.zipf(1.1, n), VOCAB) - 1


def build(home: Path, n: int, seed: int = 0, sources: int = 1, vectors: str = "random",
          index: bool = True) -> dict[str, float]:
    """``n`` nodes in ``sources`` snapshots of one collection (one segment each), published
    one after the other as separate imports are; with ``index``, a segment of at least
    ``dense_index_min_nodes`` vectors gets its IVF index, as an import builds it."""
    store = SQLiteStore(home)
    per = [n // sources + (1 if s < n % sources else 0) for s in range(sources)]
    times = {"segment_build_s": 0.0, "build_and_publish_s": 0.0}
    t0 = time.perf_counter()
    for s, count in enumerate(per):
        t = time.perf_counter()
        run = store.begin_run("scale", f"synthetic-{s}", "synthetic")
        ids, tokens, acl, vecs = _nodes(count, seed + s, f"s{s}-" if sources > 1 else "",
                                        vectors)
        write_segment(store.staging_dir(run), ids, tokens, acl, [() for _ in ids], vecs,
                      {"analyzer": "synthetic", "embed_model": "minilm" if vecs is not None
                       else None}, ann=AnnConfig() if index else None)
        times["segment_build_s"] += time.perf_counter() - t
        nodes = [Node(ids[i], "doc", " ".join(tokens[i][:20]), acl_tags=acl[i])
                 for i in range(count)]
        del tokens, vecs
        store.publish(run, SnapshotPayload("scale", f"synthetic-{s}",
                                           [Document("doc", f"synthetic-{s}", "")], nodes, [],
                                           [], store.staging_dir(run),
                                           embed_model="minilm" if vectors != "none" else None),
                      0.0)
        del nodes
        print(json.dumps({"source": s, "nodes": count, "s": round(time.perf_counter() - t, 1)}),
              flush=True)
    times["build_and_publish_s"] = time.perf_counter() - t0
    size = sum(p.stat().st_size for p in store.segments_dir.rglob("*") if p.is_file())
    store.close()
    disk = sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
    return {**times, "segment_bytes": float(size), "home_bytes": float(disk),
            "build_peak_rss_mb": _peak_mb()}


def _nodes(n: int, seed: int, prefix: str, vectors: str
           ) -> tuple[list[str], list[list[str]], list[tuple[str, ...]], np.ndarray | None]:
    rng = np.random.default_rng(seed)
    lengths = rng.poisson(60, n).clip(5, 200)
    flat = words(rng, int(lengths.sum()))
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    vocab = np.array([f"w{i}" for i in range(VOCAB)], dtype=object)
    tokens = [list(vocab[flat[offsets[i]:offsets[i + 1]]]) for i in range(n)]
    vecs: np.ndarray | None = None
    if vectors == "random":
        vecs = rng.standard_normal((n, DIM), dtype=np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    elif vectors == "scifact":  # real MiniLM vectors replicated with noise (bench/dense_ann)
        from dense_ann import CACHE, replicate, scifact_vectors

        vecs = replicate(scifact_vectors(CACHE)[0], n, 0.025, seed)
    ids = [f"{prefix}n{i:07d}" for i in range(n)]
    acl = [("team",) if i % 7 == 0 else () for i in range(n)]
    return ids, tokens, acl, vecs


def _peak_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    return status_mb("VmHWM")


def status_mb(field: str) -> float:
    """A memory line of /proc/self/status (VmHWM, RssAnon, RssFile...), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024)
    return 0.0


def measure(home: Path, queries: list[str], mode: str) -> dict[str, Any]:
    engine = Engine(home)
    filters, who = Filters(collection="scale"), Principal(frozenset({"team"}))
    engine.search(queries[0], filters, who, mode, 10)  # type: ignore[arg-type]  # warm-up
    lat: list[float] = []
    cpu: list[float] = []
    stages: dict[str, list[float]] = {}
    rankings = []
    for q in queries:
        t, c = time.perf_counter(), time.process_time()
        result = engine.search(q, filters, who, mode, 10)  # type: ignore[arg-type]
        lat.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
        rankings.append(result.ranking)
        for stage, ms in result.timings_ms.items():
            stages.setdefault(stage, []).append(ms)
    rss = psutil.Process().memory_info().rss
    anon, mapped = status_mb("RssAnon"), status_mb("RssFile")
    engine.close()
    return {"latency_ms": latency_summary(lat), "cpu_ms": latency_summary(cpu),
            "rss_mb": rss / 2**20, "peak_rss_mb": _peak_mb(),
            "rss_anon_mb": anon, "rss_file_mb": mapped,
            "stage_p50_ms": {k: round(float(np.median(v)), 2) for k, v in stages.items()},
            "rankings": rankings}


def semantic_recall(home: Path, queries: list[str], rankings: list[list[tuple[str, float, str]]],
                    k: int = 10) -> dict[str, float]:
    """Recall@k of the semantic rankings against the exact top k: the queries' MiniLM vectors
    against every stored vector of the collection's segments, read block by block (every
    node is visible to the bench's principal)."""
    from excerpt.embed import get_embedder

    embedder = get_embedder("minilm")
    asked = np.vstack([embedder.embed_query(q) for q in queries]).astype(np.float32)
    best = np.full((len(queries), k), -np.inf, dtype=np.float32)
    best_ids: np.ndarray = np.full((len(queries), k), "", dtype=object)
    store = SQLiteStore(home)
    for info in store.latest_snapshots("scale"):
        segment = store.segment(info.snapshot_id)
        vectors, ids = segment.vectors, np.array(segment.ids, dtype=object)
        assert vectors is not None, "the bench's segments hold vectors (--vectors)"
        for start in range(0, len(vectors), 200_000):
            scores = (np.asarray(vectors[start:start + 200_000]) @ asked.T).T
            top = np.argpartition(-scores, k, axis=1)[:, :k]
            pool = np.hstack([best, np.take_along_axis(scores, top, axis=1)])
            pool_ids = np.hstack([best_ids, ids[start + top]])
            keep = np.argsort(-pool, axis=1, kind="stable")[:, :k]
            best = np.take_along_axis(pool, keep, axis=1)
            best_ids = np.take_along_axis(pool_ids, keep, axis=1)
    store.close()
    found = [len(set(best_ids[i]) & {node_id for node_id, _, _ in ranking[:k]})
             for i, ranking in enumerate(rankings)]
    return {"recall_at_10": round(sum(found) / (k * len(found)), 4),
            "min_per_query": min(found), "queries": len(found)}


def measure_bm25(home: Path, queries: list[str], repeat: int) -> dict[str, Any]:
    """Exhaustive and pruned BM25, alternating ``repeat`` times; rankings must be equal."""
    runs: dict[str, list[dict[str, Any]]] = {"bm25_exhaustive": [], "bm25": []}
    saved = lexical.PRUNE_FROM
    try:
        for _ in range(repeat):
            for name, prune_from in (("bm25_exhaustive", 2**62), ("bm25", saved)):
                lexical.PRUNE_FROM = prune_from
                runs[name].append(measure(home, queries, "bm25"))
    finally:
        lexical.PRUNE_FROM = saved
    same = all(r["rankings"] == runs["bm25_exhaustive"][0]["rankings"]
               for rs in runs.values() for r in rs)
    out: dict[str, Any] = {"pruned_equals_exhaustive": same}
    for name, rs in runs.items():
        out[name] = {
            "p50_ms": float(np.median([r["latency_ms"]["p50"] for r in rs])),
            "p95_ms": float(np.median([r["latency_ms"]["p95"] for r in rs])),
            "p50_ms_runs": [round(r["latency_ms"]["p50"], 2) for r in rs],
            "p95_ms_runs": [round(r["latency_ms"]["p95"], 2) for r in rs],
            "rss_mb": max(r["rss_mb"] for r in rs),
            "peak_rss_mb": max(r["peak_rss_mb"] for r in rs),
            "rss_anon_mb": rs[-1]["rss_anon_mb"], "rss_file_mb": rs[-1]["rss_file_mb"],
            "stage_p50_ms": rs[-1]["stage_p50_ms"]}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--nodes", type=int, action="append", default=None)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--out", type=Path, default=Path("bench/out/scale"))
    parser.add_argument("--json", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3, help="BM25 runs per variant")
    parser.add_argument("--modes", default="bm25,hybrid", help="of bm25, hybrid, semantic")
    parser.add_argument("--sources", type=int, default=1,
                        help="split the nodes into this many snapshots (segments)")
    parser.add_argument("--vectors", choices=("random", "scifact", "none"), default="random",
                        help="random unit vectors, SciFact MiniLM replicated, or none")
    parser.add_argument("--no-index", action="store_true",
                        help="no IVF index even for segments of dense_index_min_nodes+")
    parser.add_argument("--reuse", action="store_true",
                        help="Search the home a previous run built (same --nodes)")
    parser.add_argument("--query-set", choices=("synthetic", "scifact"), default="synthetic",
                        help="synthetic: 2-5 words of the corpus's law; scifact: the judged "
                             "SciFact train queries (real neighbours of --vectors scifact; "
                             "their words are not in the synthetic vocabulary)")
    parser.add_argument("--recall", action="store_true",
                        help="semantic recall@10 against the exact top 10 (reads every "
                             "vector once more)")
    args = parser.parse_args()
    rows = []
    rng = np.random.default_rng(42)
    if args.query_set == "scifact":
        from dense_ann import judged_queries

        queries = judged_queries()[:args.queries]
    else:
        queries = [" ".join(f"w{w}" for w in words(rng, int(rng.integers(2, 6))))
                   for _ in range(args.queries)]
    for n in args.nodes or [100_000]:
        home = args.out / (f"home-{n}" + (f"-x{args.sources}" if args.sources > 1 else ""))
        row: dict[str, Any] = {"nodes": n}
        if not args.reuse:
            shutil.rmtree(home, ignore_errors=True)
            row.update(build(home, n, 0, args.sources, args.vectors, not args.no_index))
        modes = args.modes.split(",")
        if "bm25" in modes:
            row.update(measure_bm25(home, queries, args.repeat))
        for mode in ("hybrid", "semantic"):
            if mode in modes:
                row[mode] = measure(home, queries, mode)
                rankings = row[mode].pop("rankings")
                if mode == "semantic" and args.recall:
                    row[mode]["recall"] = semantic_recall(home, queries, rankings)
        print(json.dumps(row), flush=True)
        rows.append(row)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
