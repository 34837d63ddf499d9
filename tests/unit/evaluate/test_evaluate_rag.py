"""RAG metrics on hand-made texts whose values are worked out in the comments."""

from __future__ import annotations

import pytest

from excerpt.evaluate.rag import (
    answer_relevancy,
    context_recall,
    context_recall_ids,
    faithfulness,
    statements,
    supported,
)

CONTEXTS = [
    "휴학을 하려는 학생은 휴학원을 학기 개시 전까지 제출하여야 한다.",
    "일반휴학 기간은 1년 이내로 하며 통산 3년을 넘을 수 없다.",
]


def test_statements_split_sentences_and_drop_numbers() -> None:
    text = "휴학원을 제출한다. 기간은 1년이다.\n3-1-5\n다음 학기에 복학한다"
    assert statements(text) == ["휴학원을 제출한다.", "기간은 1년이다.", "다음 학기에 복학한다"]


def test_support_is_token_overlap_recall() -> None:
    # statement tokens: 휴학원, 제출 (Kiwi) -> both in context 0 -> 2/2 >= 0.5
    assert supported("휴학원을 제출한다.", CONTEXTS)
    # tokens: 주차장, 이용, 요금 -> none in any context -> 0/3
    assert not supported("주차장 이용 요금은 무료이다.", CONTEXTS)


def test_context_recall() -> None:
    reference = ("휴학원을 학기 개시 전까지 제출한다. 휴학 기간은 통산 3년을 넘을 수 없다. "
                 "주차 요금은 무료이다.")
    # sentence 1 supported by context 0, sentence 2 by context 1, sentence 3 by none -> 2/3
    assert context_recall(reference, CONTEXTS) == pytest.approx(2 / 3)
    assert context_recall(reference, []) == 0.0
    assert context_recall("", CONTEXTS) == 0.0


def test_context_recall_ids() -> None:
    gold = ["학칙 제25조", "학칙 제26조"]
    assert context_recall_ids(gold, ["학칙 제25조", "학칙 제1조"]) == 0.5
    assert context_recall_ids(gold, [*gold, "x"]) == 1.0
    assert context_recall_ids([], ["x"]) == 0.0


def test_faithfulness() -> None:
    answer = "휴학원은 학기 개시 전까지 제출합니다. 휴학 중에는 장학금이 두 배로 지급됩니다."
    # claim 1: 휴학원, 학기, 개시, 제출 all in context 0 -> supported
    # claim 2: 휴학, 중, 장학금, 두, 배, 지급 -> only 휴학 in contexts -> 1/5 or so < 0.5
    assert faithfulness(answer, CONTEXTS) == pytest.approx(0.5)
    assert faithfulness("", CONTEXTS) == 0.0


def test_answer_relevancy_clips_the_judge() -> None:
    assert answer_relevancy("q", "a", lambda q, a: 0.83) == pytest.approx(0.83)
    assert answer_relevancy("q", "a", lambda q, a: -0.2) == 0.0
    assert answer_relevancy("q", "  ", lambda q, a: 0.9) == 0.0
