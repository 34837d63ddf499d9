"""Embedding speed: ``python bench/embedding_speed.py [--scifact PATH] [--korean PATH] [--quick]``.

``--ort``: MiniLM docs/s under ONNX Runtime session options (arena, memory pattern, graph
level, denormals, one session on two intra-op threads), alternated over ``--rounds`` rounds on
the same documents, medians and the ratio to the shipped options; cos of each variant's vectors
to the shipped options' (1.0000: same vectors). ``--lengths``: docs/s at each maximum length.
``--quality 192,256``: SciFact dense nDCG@10 (train qrels, 809 queries, the full corpus embedded
as excerpt indexes it, ``title`` newline ``text``) at each maximum length.

MiniLM: docs/s on the first ``--n`` SciFact records (``title + " " + text``) for each variant,
ms per short query, and the cosine of each variant's vectors to the as-shipped float graph at
the same length (the quality check of the int8 rewrite).  E5: sentences/s on non-blank lines
of a Korean text file, and chunks/s on ~800-character Korean chunks.  A development tool; excerpt
itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from _scifact import DATA
from excerpt.embed.base import Embedder, FloatMatrix
from excerpt.embed.e5 import E5Embedder
from excerpt.embed.minilm import MiniLMEmbedder

DEFAULT_SCIFACT = DATA / "scifact" / "corpus.jsonl"
DEFAULT_KOREAN = DATA / "regulations" / "dongeui_regulations_9-340_20250702.txt"
QUERY_EN = "what causes cancer cell growth"
QUERY_KO = "장학금 신청 방법"


def scifact_docs(path: Path, n: int) -> list[str]:
    docs: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            docs.append(f"{record.get('title', '')} {record.get('text', '')}")
            if len(docs) == n:
                break
    return docs


def korean_lines(path: Path, n: int) -> list[str]:
    lines: list[str] = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            text = line.strip()
            if len(text) >= 10:
                lines.append(text)
                if len(lines) == n:
                    break
    return lines


def korean_chunks(path: Path, n: int, size: int = 800) -> list[str]:
    """``n`` chunks of up to ``size`` characters: consecutive non-blank lines joined."""
    chunks: list[str] = []
    current = ""
    with path.open(encoding="utf-8") as f:
        for line in f:
            text = line.strip()
            if not text:
                continue
            if current and len(current) + len(text) + 1 > size:
                chunks.append(current)
                current = ""
                if len(chunks) == n:
                    break
            current = f"{current} {text}" if current else text
    return chunks


def measure(model: Embedder, texts: Sequence[str], query: str) -> tuple[float, float, FloatMatrix]:
    """(texts/s, ms per query, vectors); one warm-up pass on a few texts first."""
    model.embed_documents(texts[:8])
    start = time.perf_counter()
    vectors = model.embed_documents(texts)
    rate = len(texts) / (time.perf_counter() - start)
    for _ in range(3):
        model.embed_query(query)
    start = time.perf_counter()
    for _ in range(20):
        model.embed_query(query)
    query_ms = (time.perf_counter() - start) / 20 * 1000
    return rate, query_ms, vectors


ORT_VARIANTS: dict[str, tuple[dict[str, object], int | None]] = {
    "shipped": ({}, None),
    "arena off": ({"enable_cpu_mem_arena": False}, None),
    "mem pattern on": ({"enable_mem_pattern": True}, None),
    "graph extended": ({"graph_optimization_level": "ORT_ENABLE_EXTENDED"}, None),
    "graph basic": ({"graph_optimization_level": "ORT_ENABLE_BASIC"}, None),
    "denormal as zero": ({"session.set_denormal_as_zero": "1"}, None),
    "intra 2 x 1 call": ({"intra_op_num_threads": 2}, 1),
    "intra 2 no spin": ({"intra_op_num_threads": 2, "session.intra_op.allow_spinning": "0"}, 1),
}


def timed(model: Embedder, docs: Sequence[str]) -> tuple[float, float, FloatMatrix]:
    """(docs/s of wall time, CPU ms per doc, vectors): on a shared machine the CPU cost is the
    figure to compare, wall time mostly measures the neighbours."""
    cpu, wall = time.process_time(), time.perf_counter()
    vectors = model.embed_documents(docs)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return len(docs) / wall, cpu / len(docs) * 1000, vectors


def ort_sweep(docs: Sequence[str], rounds: int, only: Sequence[str] = ()) -> None:
    """Each variant's docs/s and CPU ms/doc, alternated round by round; medians, ratios of
    CPU cost to the shipped options, cos to the shipped options' vectors."""
    models = {name: MiniLMEmbedder(session_options=opts, workers=workers)
              for name, (opts, workers) in ORT_VARIANTS.items()
              if not only or name in only or name == "shipped"}
    rates: dict[str, list[float]] = {name: [] for name in models}
    costs: dict[str, list[float]] = {name: [] for name in models}
    vectors: dict[str, FloatMatrix] = {}
    for name, model in models.items():
        vectors[name] = model.embed_documents(docs[:8])  # load and warm up
    for _ in range(rounds):
        for name, model in models.items():
            rate, cost, vectors[name] = timed(model, docs)
            rates[name].append(rate)
            costs[name].append(cost)
    base = float(np.median(costs["shipped"]))
    print(f"{'variant':18} {'docs/s':>7} {'cpu ms/doc':>10} {'cost ratio':>10}  "
          f"cpu ms per round       cos to shipped (min)")
    for name, got in costs.items():
        cos = np.sum(vectors[name] * vectors["shipped"], axis=1).min()
        print(f"{name:18} {np.median(rates[name]):7.1f} {np.median(got):10.1f} "
              f"{np.median(got) / base:10.2f}  {' '.join(f'{c:.1f}' for c in got):22} "
              f"{cos:.4f}", flush=True)


def length_sweep(docs: Sequence[str], rounds: int, lengths: Sequence[int]) -> None:
    """docs/s at each maximum length, alternated; how many docs each length cuts."""
    models = {n: MiniLMEmbedder(max_seq_length=n) for n in lengths}
    rates: dict[int, list[float]] = {n: [] for n in lengths}
    for model in models.values():
        model.embed_documents(docs[:8])
    uncut = MiniLMEmbedder(max_seq_length=512)._load_tokenizer()
    full = [len(e.ids) for e in uncut.encode_batch(list(docs))]
    costs: dict[int, list[float]] = {n: [] for n in lengths}
    for _ in range(rounds):
        for n, model in models.items():
            rate, cost, _ = timed(model, docs)
            rates[n].append(rate)
            costs[n].append(cost)
    print(f"{'max len':>7} {'docs/s':>7} {'cpu ms/doc':>10} {'cut':>6}  (of {len(docs)} docs; "
          f"cut: longer than the length)")
    for n, got in rates.items():
        cut = sum(1 for t in full if t > n)
        print(f"{n:>7} {np.median(got):7.1f} {np.median(costs[n]):10.1f} {cut:>6}", flush=True)


def quality(path: Path, lengths: Sequence[int], graph: str = "") -> None:
    """Dense nDCG@10 on SciFact's train queries at each maximum length (exact top 100); with
    ``graph``, under that ONNX Runtime graph level (``ORT_ENABLE_BASIC``)."""
    from excerpt.evaluate.beir import load_beir_dataset
    from excerpt.evaluate.metrics import ir_metrics

    data = load_beir_dataset(path.parent, "train")
    queries = {q: t for q, t in data.queries.items() if q in data.qrels}
    ids, texts = [], []
    with path.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            ids.append(record["_id"])
            title = record.get("title", "")
            texts.append(f"{title}\n{record['text']}" if title else record["text"])
    for n in lengths:
        options = {"graph_optimization_level": graph} if graph else None
        model = MiniLMEmbedder(max_seq_length=n, session_options=options)
        start = time.perf_counter()
        docs = model.embed_documents(texts)
        rate = len(texts) / (time.perf_counter() - start)
        run = {}
        for q, text in queries.items():
            scores = docs @ model.embed_query(text)
            top = np.argsort(-scores, kind="stable")[:100]
            run[q] = {ids[i]: float(scores[i]) for i in top}
        got = ir_metrics(data.qrels, run)
        ndcg = got.get("ndcg@10", got.get("ndcg_cut_10"))
        label = f"{n} {graph}".strip()
        print(f"max len {label}: nDCG@10 {ndcg:.4f} over {len(queries)} queries, "
              f"{len(texts)} docs at {rate:.1f} docs/s", flush=True)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT)
    parser.add_argument("--korean", type=Path, default=DEFAULT_KOREAN)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--quick", action="store_true", help="only the chosen configurations")
    parser.add_argument("--ort", action="store_true", help="only the ONNX Runtime option sweep")
    parser.add_argument("--variants", default="", help="--ort: only these (comma-separated)")
    parser.add_argument("--lengths", default="", help="only docs/s at these max lengths: 128,256")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--quality", default="", help="only SciFact nDCG@10 at these lengths")
    parser.add_argument("--graph", default="", help="--quality under this ORT graph level")
    args = parser.parse_args(argv)
    if args.quality:
        print(f"load average {os.getloadavg()[0]:.1f}")
        quality(args.scifact, [int(n) for n in args.quality.split(",")], args.graph)
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        return

    docs = scifact_docs(args.scifact, args.n)
    if args.ort or args.lengths:
        print(f"{len(docs)} SciFact docs, load average {os.getloadavg()[0]:.1f}")
        if args.ort:
            ort_sweep(docs, args.rounds, [v for v in args.variants.split(",") if v])
        if args.lengths:
            length_sweep(docs, args.rounds, [int(n) for n in args.lengths.split(",")])
        print(f"load average {os.getloadavg()[0]:.1f} at the end")
        return
    print(f"MiniLM on {len(docs)} SciFact docs (mean {np.mean([len(d) for d in docs]):.0f} chars)")
    print(
        f"{'graph':9} {'len':>4} {'batch':>5} {'wrk':>3} {'docs/s':>7} {'query ms':>8}  "
        "cos to float"
    )
    references: dict[int, FloatMatrix] = {}
    lengths = (256,) if args.quick else (128, 256)
    for max_len in lengths:
        variants: list[tuple[bool, int, int | None]] = [(False, 16, None)]
        batches = (1,) if args.quick else (1, 4, 16, 64)
        variants += [(True, b, None) for b in batches]
        if not args.quick:
            variants.append((True, 1, 1))
        for optimise, batch, workers in variants:
            model = MiniLMEmbedder(
                max_seq_length=max_len, batch_size=batch, workers=workers, optimise_graph=optimise
            )
            rate, query_ms, vectors = measure(model, docs, QUERY_EN)
            if not optimise:
                references[max_len] = vectors
            cos = np.sum(vectors * references[max_len], axis=1)
            print(
                f"{'int8+fus' if optimise else 'shipped':9} {max_len:>4} {batch:>5} "
                f"{model.workers:>3} {rate:>7.1f} {query_ms:>8.2f}  "
                f"min {cos.min():.4f} mean {cos.mean():.4f}",
                flush=True,
            )

    lines = korean_lines(args.korean, args.n)
    e5 = E5Embedder()
    rate, query_ms, _ = measure(e5, lines, QUERY_KO)
    print(
        f"E5 on {len(lines)} Korean lines (mean {np.mean([len(t) for t in lines]):.0f} chars): "
        f"{rate:.1f} sentences/s, query {query_ms:.2f} ms"
    )
    chunks = korean_chunks(args.korean, 16)
    rate, _, _ = measure(e5, chunks, QUERY_KO)
    print(
        f"E5 on {len(chunks)} Korean chunks (mean {np.mean([len(t) for t in chunks]):.0f} chars): "
        f"{rate:.2f} chunks/s"
    )


if __name__ == "__main__":
    main()
