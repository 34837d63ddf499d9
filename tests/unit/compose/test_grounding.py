"""Offline grounding: concept phrases, the book part a question names, its key tokens."""

from __future__ import annotations

import pytest

from excerpt.compose.grounding import concepts, key_tokens, roman_to_int, scope, search_text


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What does Lord Henry say about influence?", ["Lord Henry", "influence"]),
        ("How is Achilles' anger framed in Book 1?", ["Achilles anger framed"]),
        ("휴학 중에 장학금을 받을 수 있나요? 그리고 복학 절차는?", ["휴학", "장학금", "복학 절차"]),
        ("교원인사규정의 목적은?", ["교원인사규정 목적"]),
        ("교원인사규정 제15조", ["교원인사규정 제15조"]),  # formal: one concept
        ("What is it?", ["What is it?"]),  # nothing to ground: the question itself
    ],
)
def test_concepts(question: str, expected: list[str]) -> None:
    assert concepts(question) == expected


def test_concepts_are_at_most_four_phrases_of_three_words() -> None:
    found = concepts("alpha beta gamma delta, epsilon zeta; eta theta. iota kappa. lambda mu.")
    assert len(found) == 4 and all(len(c.split()) <= 3 for c in found)


def test_scope_reads_arabic_and_roman_numbers() -> None:
    assert scope("How is Achilles' anger framed in Book 1?") == {"book": 1}
    assert scope("What happens in book XXIV and chapter iv?") == {"book": 24, "chapter": 4}
    assert scope("Which book is best?") == {}
    assert scope("book mix") == {}  # not a numeral


def test_roman_numerals() -> None:
    assert [roman_to_int(r) for r in ("i", "iv", "ix", "xiv", "xl", "xcix")] == [
        1, 4, 9, 14, 40, 99]
    assert roman_to_int("iiii") is None and roman_to_int("vx") is None
    assert roman_to_int("abc") is None


def test_key_tokens_leave_out_the_question_frame() -> None:
    assert key_tokens("How does Dorian hide the portrait?") == {"dorian", "hide", "portrait"}
    assert key_tokens("What is it?")  # all framing words: the analyzer's tokens instead
    assert key_tokens("장학금은 어떻게 신청하나요?") >= {"장학금", "신청"}


@pytest.mark.parametrize(("question", "expected"), [
    ("Who captained the winning cricket team in 1983?", "captained winning cricket team 1983?"),
    ("Why does Dorian hide the portrait?", "Dorian hide portrait?"),
    ("What is it?", "What is it?"),  # nothing but framing words: the question as it is
    ("휴학은 통틀어 최대 몇 년까지 할 수 있나요?", "휴학은 통틀어 최대 몇 년까지 할 수 있나요?"),
])
def test_the_question_is_searched_without_its_framing_words(question: str,
                                                             expected: str) -> None:
    assert search_text(question) == expected
