"""get_reranker by name, and the pure parts of the offline rerankers."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from excerpt.errors import InputError
from excerpt.rerank import DEFAULT_RERANKER, KeepOrder, get_reranker, reranker_names
from excerpt.rerank.base import offered_reranker, ranked
from excerpt.rerank.features import FeatureReranker, min_dist, proximity
from excerpt.rerank.late_interaction import blend_with_prior, maxsim, maxsim_many


def test_known_names() -> None:
    assert set(reranker_names()) >= {"none", "late-interaction", "features",
                                     "cross-encoder:PATH"}
    assert isinstance(get_reranker("none"), KeepOrder)
    assert isinstance(get_reranker(" Features "), FeatureReranker)


def test_default_is_a_known_name() -> None:
    assert get_reranker(DEFAULT_RERANKER).name == DEFAULT_RERANKER


def test_unknown_name_lists_the_known_ones() -> None:
    with pytest.raises(InputError, match=r"unknown reranker 'colbert'.*late-interaction"):
        get_reranker("colbert")


def test_one_instance_per_name_so_a_model_loads_once() -> None:
    assert get_reranker("features") is get_reranker(" Features ")
    assert get_reranker("late-interaction") is not get_reranker("features")


def test_cross_encoder_needs_a_path(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="give the model file"):
        get_reranker("cross-encoder:")
    with pytest.raises(InputError, match="is not a file"):
        get_reranker(f"cross-encoder:{tmp_path / 'missing.onnx'}")


def test_ranked_puts_nan_last_and_breaks_ties_by_index() -> None:
    got = ranked([1.0, math.nan, 2.0, 1.0], 4)
    assert [r.index for r in got] == [2, 0, 3, 1]


def test_maxsim_is_the_mean_best_match() -> None:
    q = np.array([[1.0, 0.0], [0.0, 1.0]])
    d = np.array([[1.0, 0.0], [0.6, 0.8]])
    assert maxsim(q, d) == pytest.approx((1.0 + 0.8) / 2)
    assert maxsim(q, np.zeros((0, 2))) == 0.0


def test_blend_with_prior() -> None:
    assert blend_with_prior([3.0, 1.0, 2.0], 0.0) == [3.0, 1.0, 2.0]
    assert blend_with_prior([3.0, 1.0, 2.0], 1.0) == [1.0, 0.5, 0.0]
    assert blend_with_prior([1.0, 3.0], 0.5) == pytest.approx([0.5, 0.5])


def test_proximity_features() -> None:
    assert min_dist({"a": [0, 9], "b": [5]}) == 4
    assert min_dist({"a": [1, 2]}) is None
    assert proximity({"a": [0], "b": [1]}) == pytest.approx(1.0)
    assert 0.0 < proximity({"a": [0], "b": [3]}) < proximity({"a": [0], "b": [2]}) < 1.0
    assert proximity({"a": [0]}) == 0.0


def test_feature_weights_are_checked() -> None:
    with pytest.raises(ValueError, match="unknown features"):
        FeatureReranker({"speed": 1.0})
    only_prior = FeatureReranker({"prior": 1.0})
    assert [r.index for r in only_prior.rerank("apple", ["x", "apple", "y"], 3)] == [0, 1, 2]


def test_maxsim_many_matches_maxsim_one_by_one() -> None:
    rng = np.random.default_rng(7)
    q = rng.standard_normal((5, 8))
    docs = [rng.standard_normal((n, 8)) for n in (3, 0, 1, 7)]
    assert maxsim_many(q, docs) == pytest.approx([maxsim(q, d) for d in docs], abs=1e-5)
    assert maxsim_many(q, []) == []
    assert maxsim_many(np.zeros((0, 8)), docs) == [0.0] * 4


def test_a_request_may_name_only_the_offered_rerankers() -> None:
    assert offered_reranker(None) is None
    assert offered_reranker(" Late-Interaction ") == "late-interaction"
    texts = set()
    for path in ("cross-encoder:/etc/passwd", "cross-encoder:/nope.onnx", "/etc/hosts"):
        with pytest.raises(InputError, match="never a model path") as refused:
            offered_reranker(path)
        texts.add(str(refused.value).replace(path, "PATH"))
    assert len(texts) == 1  # the same refusal whether the file exists or not


def test_plain_cross_encoder_is_the_configured_model(
        make_cross_encoder: Callable[..., Path]) -> None:
    with pytest.raises(InputError, match="cross_encoder_model"):
        get_reranker("cross-encoder")
    model = make_cross_encoder()
    chosen = get_reranker("cross-encoder", str(model))
    assert chosen is get_reranker(f"cross-encoder:{model}")
