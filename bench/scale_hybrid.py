"""The whole engine at 1M nodes on real vectors: hybrid, BM25 and semantic search through
``Engine.search`` on a snapshot built by the ingest path (issue 20 item 1).

Run:  .venv/bin/python bench/scale_hybrid.py --nodes 1000000 [--queries 300] [--reuse]

The corpus: N BEIR records, record i a noisy copy of SciFact abstract ``i % 5183`` — its title
and a window of 30-50 words of its abstract at a random place (so copies differ, as their
vectors do) — and its vector the SciFact MiniLM vector of that abstract replicated with noise
as bench/dense_ann.py does it (cosine ~0.9 with the original). One record in seven carries the
ACL tag "team"; the searches run as a caller without it, so one node in seven is hidden.

The snapshot is built the way a user gets it: ``Engine.ingest(folder, fmt="beir")`` with the
default settings (so the IVF index is built at ingest, the snapshot being over
``dense_index_min_nodes``), the embedding model replaced by a table of the precomputed
vectors (MiniLM at ~60 nodes/s would take hours; every other stage is the shipped one: load,
analysis, the vector cache, the segment writer, the publish).

The searches run in a fresh process (``--measure``), so its memory is the search's alone:
SciFact's judged train queries, through ``Engine.search`` with k 10 and hit texts fetched,
real MiniLM query embedding included. Per query, alternating: hybrid (first, so it pays the
query's embedding), BM25, semantic. VmHWM / VmRSS are read from /proc/self/status after
those. Beside each wall-clock latency, the process CPU time of the same searches (``cpu_ms``):
on a machine shared with other work it is close to what the search costs alone. Then, the
IVF index set aside (the segment's ``ann`` attribute emptied: the exact
scan the engine runs without an index), semantic and hybrid once more: recall@10 of the
semantic top 10, and how much of the hybrid top 10 is the same as with the exact dense leg.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import replace
from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dense_ann import CACHE, DATA, judged_queries, replicate, scifact_vectors
from excerpt.embed.minilm import MODEL_NAME
from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.settings import Settings
from excerpt.types import Filters, Principal
from scale import status_mb

COLLECTION = "scale"
Matrix = npt.NDArray[np.float32]


class Precomputed:
    """The ingest's embedder: each text's vector is the one written beside it in the corpus
    (the real MiniLM vector of its SciFact original, replicated with noise)."""

    name = MODEL_NAME
    dim = 384

    def __init__(self, rows: dict[str, int], vectors: Matrix) -> None:
        self.rows, self.vectors = rows, vectors

    def embed_documents(self, texts: Sequence[str]) -> Matrix:
        return self.vectors[[self.rows[t] for t in texts]]

    def embed_query(self, text: str) -> Matrix:
        raise RuntimeError("the ingest embeds no query")


def write_corpus(folder: Path, n: int, seed: int = 0) -> dict[str, int]:
    """``folder/corpus.jsonl`` of ``n`` copies; index text (title, newline, text) -> row."""
    records = [json.loads(line) for line in (DATA / "corpus.jsonl").open(encoding="utf-8")]
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, int] = {}
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as out:
        for i in range(n):
            original = records[i % len(records)]
            words = original["text"].split() or [original["title"]]
            width = int(rng.integers(30, 51))
            start = int(rng.integers(0, max(1, len(words) - width)))
            text = " ".join(words[start:start + width])
            record: dict[str, Any] = {"_id": f"c{i:07d}", "title": original["title"],
                                      "text": text}
            if i % 7 == 0:
                record["acl_tags"] = ["team"]
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            rows.setdefault(f"{original['title']}\n{text}" if original["title"] else text, i)
    return rows


def build(home: Path, scratch: Path, n: int, cache: Path, settings: Settings
          ) -> dict[str, Any]:
    corpus, _ = scifact_vectors(cache)
    t = time.perf_counter()
    rows = write_corpus(scratch, n)
    vectors = replicate(corpus, n, 0.025)
    prepared = time.perf_counter() - t
    engine = Engine(home, settings)
    engine._embedders["minilm"] = Precomputed(rows, vectors)
    t = time.perf_counter()
    stages: dict[str, float] = {}

    def progress(stage: str, done: int, total: int) -> None:
        stages.setdefault(stage, time.perf_counter())

    result = engine.ingest(scratch, COLLECTION, fmt="beir", embedder="minilm", progress=progress)
    seconds = time.perf_counter() - t
    engine.close()
    marks = [*sorted(stages.items(), key=lambda kv: kv[1]), ("end", t + seconds)]
    folder = next((home / "segments").iterdir())
    return {"nodes": n, "prepare_s": round(prepared, 1), "ingest_s": round(seconds, 1),
            "stage_s": {a[0]: round(b[1] - a[1], 1) for a, b in pairwise(marks)},
            "segment_mb": round(sum(p.stat().st_size for p in folder.iterdir()) / 2**20),
            "index_mb": round((folder / "vectors.ivf").stat().st_size / 2**20)
            if (folder / "vectors.ivf").exists() else 0,
            "home_mb": round(sum(p.stat().st_size for p in home.rglob("*") if p.is_file())
                             / 2**20),
            "snapshot": result.snapshot_id, "embedded": result.embedded}


def memory() -> dict[str, float]:
    return {f"{k.lower()}_mb": status_mb(k) for k in ("VmHWM", "VmRSS", "RssAnon", "RssFile")}


def measure(home: Path, limit: int) -> dict[str, Any]:
    """Run in a fresh process: latency and memory with the index, then recall against the
    engine's exact scan."""
    queries = judged_queries()[:limit]
    engine = Engine(home)
    filters, who = Filters(collection=COLLECTION), Principal.anonymous()

    cpu: dict[str, list[float]] = {}

    def search(q: str, mode: str) -> tuple[list[str], float, dict[str, float], list[str]]:
        t, c = time.perf_counter(), time.process_time()
        result = engine.search(q, filters, who, mode, 10)  # type: ignore[arg-type]
        ms = (time.perf_counter() - t) * 1000
        cpu.setdefault(mode, []).append((time.process_time() - c) * 1000)
        return ([h[0] for h in result.ranking], ms, result.timings_ms,
                result.analysis["notes"])

    search("warm up the model and the view", "hybrid")
    modes = ("hybrid", "bm25", "semantic")
    lat: dict[str, list[float]] = {m: [] for m in modes}
    stages: dict[str, dict[str, list[float]]] = {m: {} for m in modes}
    got: dict[str, list[list[str]]] = {m: [] for m in modes}
    notes: set[str] = set()
    for q in queries:
        for mode in modes:
            ids, ms, timings, said = search(q, mode)
            lat[mode].append(ms)
            got[mode].append(ids)
            notes.update(said)
            for stage, v in timings.items():
                stages[mode].setdefault(stage, []).append(v)
    out: dict[str, Any] = {"queries": len(queries), "memory_after_queries": memory(),
                           "approximate_noted": any("approximate" in n for n in notes)}
    for mode in modes:
        out[mode] = {**latency_summary(lat[mode]),
                     "cpu_ms": latency_summary(cpu[mode][-len(queries):]),
                     "stage_p50_ms": {k: round(float(np.median(v)), 2)
                                      for k, v in stages[mode].items()}}
    out["exact"] = exact_comparison(engine, queries, got, search)
    engine.close()
    return out


def exact_comparison(engine: Engine, queries: list[str], got: dict[str, list[list[str]]],
                     search: Any) -> dict[str, Any]:
    """The same searches with the segments' IVF index set aside: recall@10 of the semantic
    top 10 and overlap of the hybrid top 10 with the exact-leg ones."""
    segments = [engine.store.segment(s.snapshot_id) for s in engine.store.snapshots(COLLECTION)]
    assert all(seg.ann is not None for seg in segments), "the snapshot has no IVF index"
    for seg in segments:
        seg.__dict__["ann"] = None  # cached_property: the engine now scans exactly
    found: dict[str, float] = {}
    lat: list[float] = []
    for mode in ("semantic", "hybrid"):
        hits = total = 0
        for q, approx in zip(queries, got[mode], strict=True):
            exact, ms, _, _ = search(q, mode)
            if mode == "semantic":
                lat.append(ms)
            hits += len(set(exact) & set(approx))
            total += len(exact)
        found[f"{mode}_recall@10"] = round(hits / max(total, 1), 4)
    return {**found, "semantic_exact_latency": latency_summary(lat)}


def compare_nprobe(home: Path, limit: int, probes: list[int]) -> dict[str, Any]:
    """Semantic and hybrid with each number of probed cells, alternating query by query in
    one process (the query's vector is embedded once, before, so only the search differs);
    recall@10 of each against the engine's exact scan."""
    queries = judged_queries()[:limit]
    engine = Engine(home)
    filters, who = Filters(collection=COLLECTION), Principal.anonymous()
    for q in queries:  # the query vectors, kept by the engine (embed/queries.CachedQueries)
        engine.search(q, filters, who, "semantic", 10, fetch=False)
    lat: dict[str, list[float]] = {}
    got: dict[str, list[list[str]]] = {}
    base = engine.access.ann  # type: ignore[attr-defined]  # the settings' (segments only)
    for q in queries:
        for probe in probes:
            engine.access.ann = replace(base, nprobe=probe)  # type: ignore[attr-defined]
            for mode in ("semantic", "hybrid"):
                t = time.perf_counter()
                ranking = engine.search(q, filters, who, mode, 10).ranking  # type: ignore[arg-type]
                lat.setdefault(f"{mode} nprobe {probe}", []).append(
                    (time.perf_counter() - t) * 1000)
                got.setdefault(f"{mode} nprobe {probe}", []).append([r[0] for r in ranking])
    for seg in [engine.store.segment(s.snapshot_id) for s in engine.store.snapshots(COLLECTION)]:
        seg.__dict__["ann"] = None
    exact = {mode: [[r[0] for r in engine.search(q, filters, who, mode, 10).ranking]
                    for q in queries] for mode in ("semantic", "hybrid")}
    engine.close()
    out: dict[str, Any] = {}
    for name, rankings in got.items():
        truth = exact[name.split()[0]]
        hits = sum(len(set(a) & set(b)) for a, b in zip(rankings, truth, strict=True))
        out[name] = {**latency_summary(lat[name]),
                     "recall@10": round(hits / max(1, sum(map(len, truth))), 4)}
    return out


def compare_rows(home: Path, limit: int) -> dict[str, Any]:
    """Semantic search with the re-scored rows read from the file (the shipped
    Segment.vector_rows) and through the memory map, alternating query by query."""
    queries = judged_queries()[:limit]
    engine = Engine(home)
    filters, who = Filters(collection=COLLECTION), Principal.anonymous()
    for q in queries:  # the query vectors, kept by the engine
        engine.search(q, filters, who, "semantic", 10, fetch=False)
    segments = [engine.store.segment(s.snapshot_id) for s in engine.store.snapshots(COLLECTION)]
    ways: dict[str, list[float]] = {"read": [], "mapped": []}
    for q in queries:
        for way, laps in ways.items():
            for seg in segments:
                if way == "mapped":
                    seg.vector_rows = lambda o, v=seg.vectors: v[o]  # type: ignore[method-assign]
                else:
                    seg.__dict__.pop("vector_rows", None)
            t = time.perf_counter()
            engine.search(q, filters, who, "semantic", 10)
            laps.append((time.perf_counter() - t) * 1000)
    engine.close()
    return {way: latency_summary(laps) for way, laps in ways.items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", type=Path, default=Path("bench/out/scale-hybrid"))
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--reuse", action="store_true", help="search the home built before")
    parser.add_argument("--index-min", type=int, default=None,
                        help="dense_index_min_nodes for the build (default: the setting's)")
    parser.add_argument("--compare-nprobe", default=None,
                        help="e.g. 128,256: semantic/hybrid with each, alternating (--reuse)")
    parser.add_argument("--compare-rows", action="store_true",
                        help="semantic with rows read from the file / mapped (--reuse)")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.queries)), flush=True)
        return 0
    home, scratch = args.out / f"home-{args.nodes}", args.out / f"corpus-{args.nodes}"
    if args.compare_rows:
        print(json.dumps(compare_rows(home, args.queries)), flush=True)
        return 0
    if args.compare_nprobe:
        probes = [int(p) for p in args.compare_nprobe.split(",")]
        print(json.dumps(compare_nprobe(home, args.queries, probes)), flush=True)
        return 0
    row: dict[str, Any] = {"nodes": args.nodes}
    if not args.reuse:
        shutil.rmtree(home, ignore_errors=True)
        settings = (Settings() if args.index_min is None
                    else Settings(dense_index_min_nodes=args.index_min))
        row["build"] = build(home, scratch, args.nodes, args.cache, settings)
        shutil.rmtree(scratch, ignore_errors=True)
        print(json.dumps(row), flush=True)
    child = subprocess.run([sys.executable, __file__, "--measure", str(home), "--queries",
                            str(args.queries)], capture_output=True, text=True, check=True)
    row["search"] = json.loads(child.stdout.strip().splitlines()[-1])
    print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
