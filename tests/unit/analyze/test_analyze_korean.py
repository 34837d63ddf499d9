"""Korean analysis with the real Kiwi model."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from excerpt.analyze import analyze, analyze_many


def test_query_words_match_inflected_document() -> None:
    query = analyze("장학금 신청 방법")
    document = analyze("장학금을 신청하는 방법")
    assert set(query) <= set(document)
    for word in ["장학금", "신청", "방법"]:
        assert word in query
        assert word in document


def test_particles_and_endings_are_dropped() -> None:
    assert analyze("학생이 도서관에서 책을 읽었다") == ["학생", "도서관", "책", "읽"]


def test_article_reference_is_one_token() -> None:
    assert analyze("제15조") == ["제15조"]


@pytest.mark.parametrize("reference", ["제15조의2", "제3항", "제2호", "제1장", "제4절", "제2관"])
def test_article_reference_units(reference: str) -> None:
    assert analyze(reference) == [reference]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("제14조제3항", ["제14조", "제3항"]),
        ("제 15 조", ["제15조"]),
        ("법 제17조제 1항", ["법", "제17조", "제1항"]),
        ("제15조의 규정", ["제15조", "규정"]),
        ("제15조의2에 따라", ["제15조의2", "따르"]),
    ],
)
def test_article_references_in_context(text: str, expected: list[str]) -> None:
    assert analyze(text) == expected


def test_no_reference_inside_a_word() -> None:
    assert "제3항" not in analyze("경제 3항")


def test_regulation_name_matches_and_is_kept_whole() -> None:
    query = analyze("교원인사규정")
    document = analyze("「교원인사규정」 제5조에 의하여 임용한다")
    assert "교원인사규정" in query
    assert set(query) <= set(document)
    assert {"교원", "인사", "규정", "제5조"} <= set(document)


def test_regulation_names_with_particles_and_dots_are_kept_whole() -> None:
    assert "학생상벌에관한규정" in analyze("「학생상벌에관한규정」 제16조에 따른다")
    assert "연구노트작성.관리규정" in analyze("연구노트작성․관리규정 제3조")  # ․ is NFKC "."
    ordinary = analyze("이 규정에 따라 관련 규정을 적용한다")
    assert ordinary.count("규정") == 2 and all(t == "규정" or "규정" not in t for t in ordinary)


def test_verb_and_adjective_stems() -> None:
    assert analyze("아름다운 꽃을 도왔다") == ["아름답", "꽃", "돕"]


def test_mixed_korean_and_english() -> None:
    tokens = analyze("BM25 검색과 Scholarship applications 신청")
    assert tokens == ["bm25", "검색", "scholarship", "applic", "신청"]
    assert set(analyze("Scholarship applications")) <= set(tokens)


def test_hanja_and_numbers_are_kept() -> None:
    assert analyze("學則 2025년 개정") == ["學則", "2025", "개정"]


def _regulations() -> Path:
    root = Path(os.environ.get("EXCERPT_DATA", Path(__file__).parents[3].parent / "shared/data"))
    return root / "regulations" / "dongeui_regulations_9-340_20250702.txt"


@pytest.mark.data
def test_regulation_book_lines() -> None:
    path = _regulations()
    if not path.exists():
        pytest.skip(f"regulation book not found at {path} (set EXCERPT_DATA)")
    lines = [line for line in path.read_text("utf-8").splitlines() if line.strip()][:1500]
    batch = analyze_many(lines)
    assert batch == [analyze(line) for line in lines]
    reference = re.compile(r"(?<![가-힣])제\d+[조항호장절](?:의\d+)?")
    for line, tokens in zip(lines, batch, strict=True):
        assert set(reference.findall(line)) <= set(tokens), line
