"""Language detection, and properties that hold for any text."""

from __future__ import annotations

import unicodedata

from hypothesis import given, settings
from hypothesis import strategies as st

from excerpt.analyze import ANALYZER_VERSION, analyze, analyze_many, detect_language


def test_detect_korean_english_mixed() -> None:
    assert detect_language("장학금 신청 방법") == "ko"
    assert detect_language("How do I apply for a scholarship?") == "en"
    assert detect_language("The BM25 ranking of the university regulations (학칙)") == "ko"
    assert detect_language("ㅋㅋ") == "ko"
    assert detect_language("學則 第1條") == "en"
    assert detect_language("") == "en"


def test_analyze_detects_the_language() -> None:
    for text in ["장학금을 신청하는 방법", "running dogs", "BM25 검색"]:
        assert analyze(text) == analyze(text, language=detect_language(text))


def test_analyze_many_keeps_order_and_matches_analyze() -> None:
    texts = ["장학금을 신청하는 방법", "The running dogs", "", "제15조", "SearchFacade 클래스"]
    assert analyze_many(texts) == [analyze(t) for t in texts]
    assert analyze_many([]) == []


def test_analyzer_version_is_a_nonempty_string() -> None:
    assert isinstance(ANALYZER_VERSION, str) and ANALYZER_VERSION


_hangul = st.characters(min_codepoint=0xAC00, max_codepoint=0xD7A3)
_mixed = st.text(
    alphabet=st.one_of(
        _hangul, st.sampled_from("제조항호의 _.-()「」0123456789aZxY\n"), st.characters()
    ),
    max_size=60,
)


@settings(deadline=None, max_examples=150)
@given(st.one_of(st.text(max_size=60), _mixed))
def test_analyze_is_deterministic_and_tokens_are_nonempty(text: str) -> None:
    first = analyze(text)
    assert analyze(text) == first
    assert analyze_many([text]) == [first]
    assert all(token and not any(c.isspace() for c in token) for token in first)


@given(st.one_of(st.text(max_size=20), _mixed))
def test_detection_is_the_same_before_and_after_normalisation(text: str) -> None:
    assert detect_language(text) == detect_language(unicodedata.normalize("NFKC", text))
