"""Dense search past an exact scan: recall and speed of quantized and graph indexes on real
vectors (issue 20 item 1).

Run:  .venv/bin/python bench/dense_ann.py --nodes 200000 [--nodes 1000000] [--queries 300]

The vectors are real: SciFact's 5,183 abstracts embedded with excerpt's MiniLM, replicated
with noise to N (each copy ``normalize(v + sigma * g)``, sigma 0.025 per component: a copy's
cosine with its original is about 0.9, so copies are near one another as real paraphrases are,
not random points); the queries are SciFact's judged queries (qrels/train.tsv, the split
../shared/data holds), embedded the same way. The exact ranking is a float32 scan over the
visible rows; each method is asked for the top 10 of the same visible rows (a mask hiding one
node in seven, as ACL tags do in bench/scale.py) and scored by recall@10 against it, with its
latency per query (one query at a time, as a search runs) and its memory. The embeddings are
cached in ``--cache`` (a file outside the repository).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import psutil

from _scifact import DATA as SHARED_DATA
from excerpt.evaluate.metrics import latency_summary
from excerpt.store.ann import INDEX_FILE, AnnConfig
from excerpt.store.ann import build as ann_build
from excerpt.store.ann import load as ann_load
from excerpt.store.ann import search as ann_search

DATA = SHARED_DATA / "scifact"
CACHE = Path("/tmp/excerpt-scifact-minilm.npz")  # scifact_vectors' file, shared by the benches
Matrix = npt.NDArray[np.float32]


def scifact_vectors(cache: Path) -> tuple[Matrix, Matrix]:
    """SciFact's corpus and judged train-query vectors (MiniLM), embedded once into ``cache``."""
    if cache.is_file():
        saved = np.load(cache)
        return saved["corpus"], saved["queries"]
    if not (DATA / "corpus.jsonl").is_file():
        sys.exit(f"SciFact is not at {DATA}: set $EXCERPT_DATA (default ../shared/data)")
    from excerpt.embed import get_embedder

    embedder = get_embedder("minilm")
    records = [json.loads(line) for line in (DATA / "corpus.jsonl").open(encoding="utf-8")]
    texts = [f"{r.get('title', '')} {r['text']}".strip() for r in records]
    wanted = judged_queries()
    corpus = np.vstack([embedder.embed_documents(texts[i:i + 256])
                        for i in range(0, len(texts), 256)]).astype(np.float32)
    asked = np.vstack([embedder.embed_query(q) for q in wanted]).astype(np.float32)
    np.savez(cache, corpus=corpus, queries=asked)
    return corpus, asked


def judged_queries() -> list[str]:
    """The texts of SciFact's judged queries (qrels/train.tsv), in queries.jsonl order: the
    queries of ``scifact_vectors``, and bench/scale_hybrid.py's query texts."""
    judged = {line.split("\t")[0] for line in (DATA / "qrels" / "train.tsv").open()
              if not line.startswith("query")}
    queries = [json.loads(line) for line in (DATA / "queries.jsonl").open(encoding="utf-8")]
    return [q["text"] for q in queries if q["_id"] in judged]


def replicate(base: Matrix, n: int, sigma: float, seed: int = 0) -> Matrix:
    rng = np.random.default_rng(seed)
    out = np.empty((n, base.shape[1]), dtype=np.float32)
    for start in range(0, n, 100_000):
        rows = np.arange(start, min(n, start + 100_000))
        block = base[rows % len(base)] + sigma * rng.standard_normal(
            (len(rows), base.shape[1]), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        out[rows] = block
    return out


def exact_top(vectors: Matrix, mask: npt.NDArray[np.bool_], query: Matrix, k: int
              ) -> npt.NDArray[np.int64]:
    scores = vectors @ query
    scores[~mask] = -np.inf
    top = np.argpartition(-scores, k)[:k]
    return top[np.argsort(-scores[top])]


def timed(search: Callable[[Matrix], npt.NDArray[np.int64]], queries: Matrix,
          truth: list[npt.NDArray[np.int64]], k: int) -> dict[str, float]:
    laps, hits = [], 0
    for q, want in zip(queries, truth, strict=True):
        t = time.perf_counter()
        got = search(q)
        laps.append((time.perf_counter() - t) * 1000)
        hits += len(set(got[:k].tolist()) & set(want.tolist()))
    lat = latency_summary(laps)
    return {"recall@10": round(hits / (k * len(queries)), 4),
            "p50_ms": round(lat["p50"], 2), "p95_ms": round(lat["p95"], 2)}


def faiss_hnsw(vectors: Matrix, mask: npt.NDArray[np.bool_], m: int, ef_build: int,
               sq8: bool) -> tuple[Any, float, int]:
    import faiss

    dim = vectors.shape[1]
    index = (faiss.IndexHNSWSQ(dim, faiss.ScalarQuantizer.QT_8bit, m, faiss.METRIC_INNER_PRODUCT)
             if sq8 else faiss.IndexHNSWFlat(dim, m, faiss.METRIC_INNER_PRODUCT))
    index.hnsw.efConstruction = ef_build
    t = time.perf_counter()
    if sq8:
        index.train(vectors[:100_000])
    index.add(vectors)
    built = time.perf_counter() - t
    size = faiss.serialize_index(index).nbytes
    return index, built, size


def faiss_search(index: Any, vectors: Matrix, mask: npt.NDArray[np.bool_], ef: int, k: int,
                 rescore: int) -> Callable[[Matrix], npt.NDArray[np.int64]]:
    """HNSW through the caller's mask, ``rescore`` candidates re-scored in float."""
    import faiss

    bitmap = np.packbits(mask, bitorder="little")
    params = faiss.SearchParametersHNSW(sel=faiss.IDSelectorBitmap(len(mask), faiss.swig_ptr(
        bitmap)), efSearch=ef)

    def search(q: Matrix) -> npt.NDArray[np.int64]:
        _, ids = index.search(q[None, :], rescore, params=params)
        found = np.sort(ids[0][ids[0] >= 0])
        return found[np.argsort(-(vectors[found] @ q))][:k]

    return search


def faiss_ivf(vectors: Matrix, nlist: int, sq8: bool) -> tuple[Any, float, int]:
    """An inverted file: k-means cells (trained on a sample), each node in its nearest. The 8-bit
    one is excerpt's own, built by excerpt.store.ann.build (4 x sqrt(N) cells; ``nlist`` is
    then unused); the float one is built here with ``nlist`` cells, for comparison."""
    import faiss

    t = time.perf_counter()
    if sq8:
        with tempfile.TemporaryDirectory() as folder:
            ann_build(Path(folder), vectors, AnnConfig(min_nodes=1))
            index = ann_load(Path(folder))
            size = (Path(folder) / INDEX_FILE).stat().st_size
        return index, time.perf_counter() - t, size
    dim = vectors.shape[1]
    quantizer = faiss.IndexFlatIP(dim)
    index = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    sample = vectors[np.random.default_rng(1).choice(len(vectors), min(len(vectors),
                                                                        nlist * 40), False)]
    index.train(sample)
    index.add(vectors)
    return index, time.perf_counter() - t, faiss.serialize_index(index).nbytes


def ivf_search(index: Any, vectors: Matrix, mask: npt.NDArray[np.bool_], nprobe: int, k: int,
               rescore: int) -> Callable[[Matrix], npt.NDArray[np.int64]]:
    """The shipped search (excerpt.store.ann.search) with these knobs."""
    config = AnnConfig(nprobe=nprobe, candidates=rescore)
    return lambda q: ann_search(index, lambda o: vectors[o], mask, q, k, config)[0][:k]


def binary_search(vectors: Matrix, mask: npt.NDArray[np.bool_], k: int, shortlist: int
                  ) -> Callable[[Matrix], npt.NDArray[np.int64]]:
    """Sign bits of the centred vectors (48 bytes a node at 384 dims), Hamming distance over
    the visible rows, the ``shortlist`` nearest re-scored with the stored float vectors."""
    centre = vectors.mean(axis=0)
    codes = np.packbits((vectors - centre) > 0, axis=1).view(np.uint64)
    hidden = np.iinfo(np.int64).max

    def search(q: Matrix) -> npt.NDArray[np.int64]:
        code = np.packbits((q - centre) > 0).view(np.uint64)
        distance = np.bitwise_count(codes ^ code).sum(axis=1, dtype=np.int64)
        distance[~mask] = hidden
        near = np.argpartition(distance, shortlist)[:shortlist]
        exact = vectors[np.sort(near)] @ q
        return np.sort(near)[np.argsort(-exact)][:k]

    return search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, action="append")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--sigma", type=float, default=0.025)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--hnsw", action="append", choices=("flat", "sq8"), default=[],
                        help="also build this faiss HNSW index (repeatable; sq8 is excerpt's)")
    parser.add_argument("--no-binary", action="store_true", help="skip the binary codes")
    parser.add_argument("--ivf", action="append", choices=("flat", "sq8"), default=[],
                        help="also build this faiss IVF index (repeatable)")
    parser.add_argument("--nlist", type=int, default=4096, help="IVF cells")
    parser.add_argument("--nprobe", type=int, action="append",
                        help="IVF cells searched (repeatable; 16, 32, 64)")
    parser.add_argument("--rescore", type=int, action="append",
                        help="candidates re-scored with the float vectors (repeatable; 100)")
    args = parser.parse_args()
    args.rescore = args.rescore or [100]
    args.nprobe = args.nprobe or [16, 32, 64]
    corpus, queries = scifact_vectors(args.cache)
    queries = queries[:args.queries]
    k = 10
    report: list[dict[str, Any]] = []
    for n in args.nodes or [200_000]:
        vectors = replicate(corpus, n, args.sigma)
        mask = np.arange(n) % 7 != 0
        truth = [exact_top(vectors, mask, q, k) for q in queries]
        exact = timed(lambda q, v=vectors, m=mask: exact_top(v, m, q, k), queries, truth, k)
        report.append({"nodes": n, "method": "exact float32 scan", **exact})
        for shortlist in () if args.no_binary else (200, 500, 1000, 2000):
            row = timed(binary_search(vectors, mask, k, shortlist), queries, truth, k)
            report.append({"nodes": n, "method": f"binary codes + rescore {shortlist}",
                           "index_mb": round(n * vectors.shape[1] / 8 / 2**20), **row})
        for kind in args.ivf:
            index, built, size = faiss_ivf(vectors, args.nlist, kind == "sq8")
            rss = psutil.Process().memory_info().rss
            for nprobe, rescore in [(p, r) for r in args.rescore for p in args.nprobe]:
                row = timed(ivf_search(index, vectors, mask, nprobe, k, rescore), queries,
                            truth, k)
                report.append({"nodes": n, "method": f"faiss IVF {kind} "
                               f"nprobe={nprobe} +rescore {rescore}", "build_s": round(built, 1),
                               "index_mb": round(size / 2**20), "rss_mb": round(rss / 2**20),
                               **row})
                print(report[-1], flush=True)
            del index
        for sq8 in [kind == "sq8" for kind in args.hnsw]:
            index, built, size = faiss_hnsw(vectors, mask, 32, 100, sq8)
            name = "faiss HNSW32" + (" SQ8" if sq8 else " flat")
            rss = psutil.Process().memory_info().rss
            for ef, rescore in [(max(e, r), r) for r in args.rescore for e in (128, 256)]:
                row = timed(faiss_search(index, vectors, mask, ef, k, rescore), queries, truth,
                            k)
                report.append({"nodes": n, "method": f"{name} ef={ef} +rescore {rescore}",
                               "build_s": round(built, 1), "index_mb": round(size / 2**20),
                               "rss_mb": round(rss / 2**20),
                               **row})
            del index
        for row in report:
            if row["nodes"] == n and not args.json:
                print(row, flush=True)
    if args.json:
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
