"""MMR (Carbonell & Goldstein 1998) properties."""

from __future__ import annotations

import numpy as np
import pytest

from excerpt.rerank import mmr


def _vecs() -> np.ndarray:
    # 0 and 1 are near-duplicates; 2 is about something else; 3 a third direction
    return np.array([[1.0, 0.0, 0.0], [0.99, 0.01, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])


def test_lambda_one_is_pure_relevance_order() -> None:
    rel = [0.3, 0.9, 0.5, 0.7]
    assert mmr(None, _vecs(), rel, k=4, lambda_=1.0) == [1, 3, 2, 0]


def test_near_duplicates_are_pushed_down() -> None:
    rel = [0.9, 0.89, 0.6, 0.1]
    assert mmr(None, _vecs(), rel, k=4, lambda_=1.0)[:2] == [0, 1]
    order = mmr(None, _vecs(), rel, k=4, lambda_=0.7)
    assert order[0] == 0
    assert order.index(2) < order.index(1), "the duplicate should come after a new topic"


def test_ties_go_to_the_lower_index() -> None:
    vecs = np.eye(4)
    assert mmr(None, vecs, [0.5, 0.5, 0.5, 0.5], k=4) == [0, 1, 2, 3]


def test_relevance_defaults_to_cosine_with_the_query() -> None:
    query = np.array([0.0, 1.0, 0.1])
    assert mmr(query, _vecs(), None, k=1)[0] == 2


def test_k_bounds() -> None:
    assert mmr(None, _vecs(), [1, 2, 3, 4], k=0) == []
    assert sorted(mmr(None, _vecs(), [1, 2, 3, 4], k=10)) == [0, 1, 2, 3]
    assert mmr(None, np.zeros((0, 3)), [], k=5) == []


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="lambda_"):
        mmr(None, _vecs(), [1, 2, 3, 4], k=2, lambda_=1.5)
    with pytest.raises(ValueError, match="relevance scores"):
        mmr(None, _vecs(), [1, 2], k=2)
    with pytest.raises(ValueError, match="query_vec"):
        mmr(None, _vecs(), None, k=2)
    with pytest.raises(ValueError, match="k must be"):
        mmr(None, _vecs(), [1, 2, 3, 4], k=-1)
