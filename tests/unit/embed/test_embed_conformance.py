"""What every Embedder must do, run against each real model excerpt ships: the contract
(shapes, normalisation, determinism, order) and sense in the model's own languages (a near
text scores above a far one; a question finds its passage).  What one model does alone (E5's
prefixes, MiniLM's graph rewrite and truncation) is in its own test file."""

from __future__ import annotations

import numpy as np
import pytest

from excerpt.embed import E5Embedder, Embedder, MiniLMEmbedder, get_embedder

TEXTS = ["A man is eating food.", "", "x" * 5000, "장학금을 신청하는 절차", "Ünïcödé ☃ text"]


SENSE = {
    "minilm": {
        "kind": MiniLMEmbedder, "name": "all-MiniLM-L6-v2-int8",
        # (query, near, far, least near score, least margin)
        "near": ("A man is eating food.", "A man is eating a piece of bread.",
                 "A man is riding a horse.", 0.65, 0.25),
        "passages": ["The parking garage is open from 7 am to 11 pm on weekdays.",
                     "Students can apply for a scholarship through the online portal each "
                     "semester.",
                     "Photosynthesis converts light energy into chemical energy in plants."],
        "question": "how do I apply for a scholarship",
    },
    "e5": {
        "kind": E5Embedder, "name": "multilingual-e5-small-q4",
        "near": ("장학금 신청 방법", "장학금을 신청하는 절차", "주차장 이용 요금", -1.0, 0.05),
        "passages": ["교내 주차장은 평일 오전 7시부터 오후 11시까지 이용할 수 있다.",
                     "장학금을 받으려는 학생은 매 학기 정해진 기간에 신청서를 제출하여야 한다.",
                     "도서관 자료는 1인당 10권까지 대출할 수 있다."],
        "question": "장학금은 언제 신청하나요",
    },
}


@pytest.fixture(scope="module", params=sorted(SENSE))
def model(request: pytest.FixtureRequest) -> Embedder:
    return get_embedder(request.param)


def case(model: Embedder) -> dict:  # type: ignore[type-arg]
    return next(c for c in SENSE.values() if isinstance(model, c["kind"]))


def test_is_an_embedder_with_a_stable_name_and_dimension(model: Embedder) -> None:
    assert isinstance(model, Embedder)
    assert model.name == case(model)["name"]
    assert model.dim == 384


def test_a_near_text_scores_above_a_far_one(model: Embedder) -> None:
    text, near, far, least, margin = case(model)["near"]
    query = model.embed_query(text)
    close, away = model.embed_documents([near, far])
    assert float(query @ close) > least
    assert float(query @ close) > float(query @ away) + margin


def test_a_question_finds_its_passage(model: Embedder) -> None:
    scores = model.embed_documents(case(model)["passages"]) @ model.embed_query(
        case(model)["question"])
    assert int(np.argmax(scores)) == 1


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
