"""What every Embedder must do, run against each real model excerpt ships."""

from __future__ import annotations

import numpy as np
import pytest

from excerpt.embed import Embedder, get_embedder

TEXTS = ["A man is eating food.", "", "x" * 5000, "장학금을 신청하는 절차", "Ünïcödé ☃ text"]


@pytest.fixture(scope="module", params=["minilm", "e5"])
def model(request: pytest.FixtureRequest) -> Embedder:
    return get_embedder(request.param)


def test_is_an_embedder_with_a_name_and_dimension(model: Embedder) -> None:
    assert isinstance(model, Embedder)
    assert model.name
    assert model.dim == 384


def test_empty_input_has_shape_zero_by_dim(model: Embedder) -> None:
    out = model.embed_documents([])
    assert out.shape == (0, model.dim)
    assert out.dtype == np.float32


def test_vectors_are_normalised_float32(model: Embedder) -> None:
    docs = model.embed_documents(TEXTS)
    assert docs.shape == (len(TEXTS), model.dim)
    assert docs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-5)
    query = model.embed_query(TEXTS[0])
    assert query.shape == (model.dim,)
    assert query.dtype == np.float32
    assert abs(float(np.linalg.norm(query)) - 1.0) < 1e-5


def test_deterministic_and_independent_of_batch_neighbours(model: Embedder) -> None:
    text = "Vitamin D supplementation and the risk of fractures in older adults."
    alone = model.embed_documents([text])
    together = model.embed_documents(["a much longer neighbour " * 20, text, "short"])
    np.testing.assert_allclose(alone[0], together[1], atol=1e-5)
    np.testing.assert_array_equal(model.embed_query(text), model.embed_query(text))


def test_rows_follow_input_order(model: Embedder) -> None:
    texts = [f"{'word ' * n}topic {n}" for n in (40, 3, 25, 1, 60, 10)]
    together = model.embed_documents(texts)
    alone = np.concatenate([model.embed_documents([t]) for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-5)
