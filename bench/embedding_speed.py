"""Embedding speed: ``python bench/embedding_speed.py [--scifact PATH] [--korean PATH] [--quick]``.

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

from excerpt.embed.base import Embedder, FloatMatrix
from excerpt.embed.e5 import E5Embedder
from excerpt.embed.minilm import MiniLMEmbedder

DATA = Path(os.environ.get("EXCERPT_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
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


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scifact", type=Path, default=DEFAULT_SCIFACT)
    parser.add_argument("--korean", type=Path, default=DEFAULT_KOREAN)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--quick", action="store_true", help="only the chosen configurations")
    args = parser.parse_args(argv)

    docs = scifact_docs(args.scifact, args.n)
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
