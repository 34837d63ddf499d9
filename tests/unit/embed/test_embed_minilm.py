"""MiniLM on the real int8 model: what MiniLM does alone (laziness, determinism across runs,
truncation, the rewritten graph); the contract and its sense: test_embed_conformance.py."""

from __future__ import annotations

import numpy as np
import pytest

from excerpt.embed import Embedder, MiniLMEmbedder, get_embedder


@pytest.fixture(scope="module")
def model() -> Embedder:
    return get_embedder("minilm")


def test_constructor_is_lazy() -> None:
    fresh = MiniLMEmbedder()
    assert fresh.graph_variant == "not loaded"
    assert fresh._session is None


def test_same_text_same_vector(model: Embedder) -> None:
    text = "Vitamin D supplementation and the risk of fractures in older adults."
    a = model.embed_query(text)
    b = model.embed_query(text)
    np.testing.assert_array_equal(a, b)
    c = model.embed_documents([text, "something else entirely"])
    d = model.embed_documents([text, "something else entirely"])
    np.testing.assert_array_equal(c, d)
    # one text per run by default: a vector depends on its text alone, not on its neighbours
    np.testing.assert_array_equal(c[0], a)


def test_order_is_restored_after_length_sorting(model: Embedder) -> None:
    texts = [f"{'word ' * n}topic {n}" for n in (40, 3, 25, 1, 60, 10)]
    together = model.embed_documents(texts)
    alone = np.stack([model.embed_query(t) for t in texts])
    np.testing.assert_array_equal(together, alone)
    batched = MiniLMEmbedder(batch_size=4).embed_documents(texts)
    sims = batched @ alone.T
    assert list(np.argmax(sims, axis=1)) == list(range(len(texts)))
    assert float(np.diag(sims).min()) > 0.98


def test_truncates_at_max_seq_length(model: Embedder) -> None:
    head = "cells " * 300  # > 256 word pieces
    a, b = model.embed_documents([head + "alpha beta gamma", head + "completely different ending"])
    np.testing.assert_allclose(a, b, atol=1e-6)


def test_rewritten_graph_matches_the_shipped_one() -> None:
    texts = [
        "A man is eating food.",
        "Microstructural development of human newborn cerebral white matter.",
        "The quick brown fox jumps over the lazy dog " * 10,
    ]
    fast = MiniLMEmbedder()
    plain = MiniLMEmbedder(optimise_graph=False)
    got = fast.embed_documents(texts)
    want = plain.embed_documents(texts)
    assert fast.graph_variant.startswith("int8")
    assert plain.graph_variant == "as shipped"
    assert float(np.sum(got * want, axis=1).min()) > 0.98


def test_bad_arguments() -> None:
    with pytest.raises(ValueError):
        MiniLMEmbedder(max_seq_length=1000)
    with pytest.raises(ValueError):
        MiniLMEmbedder(batch_size=0)
