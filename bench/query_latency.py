"""Latency of the query stages of seed 001: entity recognition, expansion, top-k selection.

Run:  .venv/bin/python bench/query_latency.py [--repeat 50]

Each query of a fixed list (the seed's examples and more) runs ``--repeat`` times after one
warm-up (Kiwi's model load is not a per-query cost). Targets: entities < 10 ms, expansion
< 50 ms, top-k < 5 ms.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

from excerpt.evaluate.metrics import latency_summary
from excerpt.query.entities import EntityRecognizer
from excerpt.query.expansion import MultiStageExpander
from excerpt.query.lexicon import load_lexicon
from excerpt.query.topk import select_top_k

QUERIES = [
    "장학금 신청 방법",
    "연구년 자격 요건",
    "조교 근무 시간",
    "교원인사규정 제15조",
    "휴학 그리고 복학",
    "휴학",
    "휴학 어떻게 하나요",
    "장학금 신청 자격 요건",
    "휴학 방법 그리고 복학 절차",
    "등록금 납부 기한은 언제인가요",
    "제15조제2항제3호의 내용",
    "교원의 재임용 심사 기준과 절차",
    "성적 평가 방법",
    "졸업 요건 학점",
    "연구비 지원 신청 서류 제출 마감",
    "일반적인 문장입니다",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=50)
    args = parser.parse_args()
    lexicon = load_lexicon()
    recognizer = EntityRecognizer(lexicon)
    expander = MultiStageExpander(recognizer)
    for q in QUERIES:  # warm-up: Kiwi loads once
        expander.expand(q)
    stages: dict[str, list[float]] = {"entities": [], "expansion": [], "top_k": []}
    for _ in range(args.repeat):
        for q in QUERIES:
            t0 = time.perf_counter()
            entities = recognizer.recognize(q)
            t1 = time.perf_counter()
            expander.expand(q, entities)
            t2 = time.perf_counter()
            select_top_k(q, entities, lexicon)
            t3 = time.perf_counter()
            stages["entities"].append((t1 - t0) * 1000)
            stages["expansion"].append((t2 - t1) * 1000)
            stages["top_k"].append((t3 - t2) * 1000)
    for name, values in stages.items():
        print(json.dumps({"stage": name, "runs": len(values), **latency_summary(values)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
