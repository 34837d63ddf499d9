"""Conversation memory: durable add latency, search latency over 10,000 utterances, and how
many key entities of the evicted utterances the running summary keeps.

Run:  .venv/bin/python bench/memory.py [--adds 500] [--utterances 10000] [--queries 200]
                                       [--no-semantic]

* Durable add: ``MemoryStore(SQLiteBackend)`` in a temporary folder (WAL, synchronous=FULL, one
  fsynced transaction per add), default config (buffer 20, so from the 21st add on each add
  also evicts and merges the summary). Target p95 < 5 ms.
* Search: one conversation of ``--utterances`` utterances (made from the dialogue set below,
  varied), in memory; BM25 alone, then BM25 blended with MiniLM (English queries) once every
  utterance has its embedding (the one-off index and embedding times are printed apart).
  Target p95 < 20 ms.
* Retention: every conversation of tests/unit/memory/data/conversations.json (four English,
  three Korean, written for this) goes through a buffer of 4 utterances; retention is the share
  of the evicted utterances' key entities (excerpt.memory.key_entities) found in the summary,
  at the default summary limit (500 tokens) and at tighter read-time limits. Target >= 80%.
  Then all seven dialogues in one conversation (about 1,650 evicted tokens) with a stored
  summary limit of 500 and 250 tokens: the incremental merge itself must drop sentences.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from excerpt.evaluate.metrics import latency_summary
from excerpt.memory import InMemoryBackend, MemoryStore, SQLiteBackend, entity_retention
from excerpt.tokens import count_tokens

DATA = Path(__file__).resolve().parents[1] / "tests" / "unit" / "memory" / "data"
QUERIES = ["hotel in Lisbon", "charger warranty", "Middlemarch", "PostgreSQL migration",
           "train to Sintra", "press release date", "book club meeting", "DHL courier",
           "seafood restaurant", "review on Monday"]


def load_conversations() -> dict[str, list[tuple[str, int, str]]]:
    raw = json.loads((DATA / "conversations.json").read_text("utf-8"))
    return {name: [(s, int(t), x) for s, t, x in turns] for name, turns in raw.items()}


def ms(start: float) -> float:
    return (time.perf_counter() - start) * 1000.0


def bench_add(conversations: dict[str, list[tuple[str, int, str]]], adds: int) -> dict[str, float]:
    lines = [turn for turns in conversations.values() for turn in turns]
    with tempfile.TemporaryDirectory() as home:
        store = MemoryStore(SQLiteBackend.at_home(home), embedder=None)
        store.config("warm-up", buffer_size=1)  # an eviction: Kiwi loads here, not in the timing
        store.add("warm-up", "user", 0, "Warm up the token counter. 부산에 가요.")
        store.add("warm-up", "user", 0, "And Kiwi. 서울에 가요.")
        times = []
        for n in range(adds):
            speaker, turn, text = lines[n % len(lines)]
            start = time.perf_counter()
            store.add("bench", speaker, turn + n, text)
            times.append(ms(start))
        store.close()
    return latency_summary(times)


def bench_search(conversations: dict[str, list[tuple[str, int, str]]], count: int, queries: int,
                 semantic: bool) -> dict[str, object]:
    english = [t for name, turns in conversations.items() if not name.startswith("ko_")
               for t in turns]
    rng = random.Random(7)
    store = MemoryStore(InMemoryBackend(), embedder=None)
    store.config("big", buffer_size=count, max_tokens=10**9)
    for n in range(count):
        speaker, _, text = english[n % len(english)]
        words = text.split()
        rng.shuffle(words)  # same vocabulary, different utterances
        store.add("big", speaker, n, f"{' '.join(words)} (note {n})")
    report: dict[str, object] = {"utterances": len(store.read("big"))}
    build, report["bm25_ms"] = timed_searches(store, queries)
    report["index_build_ms"] = round(build, 1)
    if semantic:
        store.embedder = "auto"
        build, report["blended_ms"] = timed_searches(store, queries)
        report["embedding_build_s"] = round(build / 1000.0, 1)
    return report


def timed_searches(store: MemoryStore, queries: int) -> tuple[float, dict[str, float]]:
    """The first search's time (it builds the index or the embeddings), then the latency
    summary of ``queries`` searches."""
    start = time.perf_counter()
    store.search("big", "warm up")
    build = ms(start)
    times = []
    for n in range(queries):
        start = time.perf_counter()
        store.search("big", QUERIES[n % len(QUERIES)])
        times.append(ms(start))
    return build, latency_summary(times)


def bench_retention(conversations: dict[str, list[tuple[str, int, str]]]) -> dict[str, object]:
    per: dict[str, dict[str, float]] = {}
    limits = (None, 150, 80)
    for name, turns in conversations.items():
        store = MemoryStore(InMemoryBackend(), embedder=None)
        store.config(name, buffer_size=4)
        for speaker, turn, text in turns:
            store.add(name, speaker, turn, text)
        evicted = " ".join(text for _, _, text in turns[:len(turns) - 4])
        per[name] = {str(limit or "default"): round(entity_retention(
            evicted, store.summary(name, token_limit=limit)[0]), 3) for limit in limits}
    mean = {str(limit or "default"): round(sum(p[str(limit or "default")] for p in per.values())
                                           / len(per), 3) for limit in limits}
    # Every dialogue one after the other in one conversation: far more evicted text than the
    # stored summary may hold, so the incremental merge itself has to drop sentences.
    lines = [turn for turns in conversations.values() for turn in turns]
    evicted = " ".join(text for _, _, text in lines[:-4])
    merged: dict[str, float] = {"evicted_tokens": count_tokens(evicted)}
    for stored_limit in (500, 250):
        store = MemoryStore(InMemoryBackend(), embedder=None)
        store.config("all", buffer_size=4, summary_token_limit=stored_limit)
        for speaker, turn, text in lines:
            store.add("all", speaker, turn, text)
        merged[f"retention_at_{stored_limit}"] = round(
            entity_retention(evicted, store.summary("all")[0]), 3)
    return {"mean": mean, "per_conversation": per, "all_dialogues_in_one": merged}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--adds", type=int, default=500)
    parser.add_argument("--utterances", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--no-semantic", action="store_true")
    args = parser.parse_args(argv)
    conversations = load_conversations()
    report = {
        "command": " ".join([".venv/bin/python bench/memory.py", *(argv or sys.argv[1:])]),
        "durable_add_ms": bench_add(conversations, args.adds),
        "search": bench_search(conversations, args.utterances, args.queries,
                               not args.no_semantic),
        "summary_entity_retention": bench_retention(conversations),
    }
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
