"""Latency of `excerpt ask` on the two books, per reranker, without an LLM (issue 5 target:
p95 under 300 ms, reranking included).

Run:  .venv/bin/python bench/ask.py [--home DIR] [--repeat 3] [--mode hybrid]

The books (``$EXCERPT_DATA/books``) are ingested with MiniLM embeddings into ``--home``
(collection ``books``) unless they are there. Each question runs once to warm up (model loads
are not per-question costs), then ``--repeat`` times; the median of each question's runs is
one sample. Reported per reranker: p50/p95/max of the whole ask and p50 of each stage, and the
answers' word and sentence counts (seed 000: 2-4 sentences, ~100-140 words).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from excerpt.compose.ask import AskOptions
from excerpt.compose.sentences import split_sentences, strip_citation_marks
from excerpt.engine import Engine
from excerpt.evaluate.metrics import latency_summary
from excerpt.types import Filters, Principal, SearchMode

REPO = Path(__file__).resolve().parents[1]
BOOKS = Path(os.environ.get("EXCERPT_DATA", REPO.parent / "shared" / "data")) / "books"
QUESTIONS = [
    "What does Lord Henry say about influence?",
    "How is Achilles' anger framed in Book 1?",
    "Why does Dorian hide the portrait?",
    "What does Basil Hallward think of Dorian's beauty?",
    "How does Hector say farewell to Andromache?",
    "What happens to Sibyl Vane after Dorian leaves her?",
    "Who kills Patroclus?",
    "What does the portrait look like at the end of the novel?",
    "Why does Agamemnon quarrel with Achilles?",
    "How does Lord Henry describe youth?",
    "What gifts does Priam bring to Achilles?",
    "What is the boiling point of liquid nitrogen?",
]
RERANKERS = [None, "features", "late-interaction"]


def ensure_books(engine: Engine) -> None:
    if "books" in engine.store.collections():
        return
    print("ingesting the books with MiniLM embeddings ...", file=sys.stderr)
    t = time.perf_counter()
    engine.ingest(BOOKS, collection="books", embedder="minilm")
    print(f"  {time.perf_counter() - t:.1f} s", file=sys.stderr)


def run(engine: Engine, reranker: str | None, mode: SearchMode, repeat: int) -> dict[str, Any]:
    filters, who = Filters("books"), Principal.anonymous()
    for q in QUESTIONS:
        engine.ask(q, filters, who, mode, AskOptions(), reranker)
    totals, stages, words, sentences = [], {}, [], []
    for q in QUESTIONS:
        runs = []
        for _ in range(repeat):
            t = time.perf_counter()
            result = engine.ask(q, filters, who, mode, AskOptions(), reranker)
            runs.append((time.perf_counter() - t) * 1000)
            for stage, ms in result.timings_ms.items():
                stages.setdefault(stage, []).append(ms)
        totals.append(statistics.median(runs))
        words.append(len(result.composed.answer.split()))
        sentences.append(len(split_sentences(strip_citation_marks(result.composed.answer))))
    return {"reranker": reranker or "none", "mode": mode, "ask_ms": latency_summary(totals),
            "stage_p50_ms": {k: round(statistics.median(v), 2) for k, v in stages.items()},
            "words": [min(words), statistics.median(words), max(words)],
            "sentences": [min(sentences), max(sentences)]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--mode", default="hybrid", choices=["bm25", "semantic", "hybrid"])
    args = parser.parse_args()
    if not BOOKS.exists():
        print(f"{BOOKS} not found: set EXCERPT_DATA to the shared data folder", file=sys.stderr)
        return 2
    engine = Engine(args.home or Path(tempfile.mkdtemp(prefix="excerpt-ask-")) / "home")
    ensure_books(engine)
    for reranker in RERANKERS:
        print(json.dumps(run(engine, reranker, args.mode, args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
