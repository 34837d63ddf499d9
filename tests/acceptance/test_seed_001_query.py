"""Seed 001, TAG-001 to TAG-003: entity recognition, multi-stage expansion, adaptive top-k.

The seed's acceptance tests, under our names: RegulationEntityRecognizer -> EntityRecognizer,
MultiStageQueryExpander -> MultiStageExpander, AdaptiveTopKSelector -> select_top_k, all driven
by the packaged lexicon (query/data/regulations_ko.yaml).
"""

from __future__ import annotations

import pytest

from excerpt.query.entities import EntityRecognizer, EntityType
from excerpt.query.expansion import MultiStageExpander
from excerpt.query.lexicon import load_lexicon
from excerpt.query.topk import select_top_k

LEXICON = load_lexicon()
RECOGNIZER = EntityRecognizer(LEXICON)
EXPANDER = MultiStageExpander(RECOGNIZER)


def of_type(query: str, kind: EntityType) -> list[object]:
    return [m for m in RECOGNIZER.recognize(query) if m.entity_type == kind]


# -- TAG-001 ---------------------------------------------------------------------------------

def test_section_recognition() -> None:
    matches = RECOGNIZER.recognize("제15조의 휴학 절차")
    sections = [m for m in matches if m.entity_type == EntityType.SECTION]
    assert [m.text for m in sections] == ["제15조"]
    assert sections[0].confidence >= 0.95


def test_paragraph_and_item_after_an_article() -> None:
    kinds = [(m.text, m.entity_type) for m in RECOGNIZER.recognize("제15조제2항제3호 의 내용")]
    assert kinds == [("제15조", EntityType.SECTION), ("제2항", EntityType.PARAGRAPH),
                     ("제3호", EntityType.ITEM)]


@pytest.mark.parametrize(("query", "kind", "term"), [
    ("장학금 신청 방법", EntityType.PROCEDURE, "신청"),
    ("연구년 자격 요건", EntityType.REQUIREMENT, "자격"),
    ("연구비 지원 혜택", EntityType.BENEFIT, "지원"),
    ("등록금 납부 기한", EntityType.DEADLINE, "기한"),
])
def test_keyword_categories_expand(query: str, kind: EntityType, term: str) -> None:
    matches = of_type(query, kind)
    assert matches, f"no {kind.value} entity in {query!r}"
    assert term in matches[0].expanded_terms  # type: ignore[attr-defined]
    assert len(matches[0].expanded_terms) > 1  # type: ignore[attr-defined]


def test_hypernym_chain() -> None:
    (fee,) = [m for m in RECOGNIZER.recognize("등록금 납부") if m.text == "등록금"]
    assert fee.hypernyms == ("학사", "행정")


@pytest.mark.parametrize("sentence", ["일반적인 문장입니다", "오늘 날씨가 좋습니다",
                                      "경제 3항 이론", "그는 방법론을 공부했다"])
def test_no_false_positives(sentence: str) -> None:
    assert RECOGNIZER.recognize(sentence) == []


# -- TAG-002 ---------------------------------------------------------------------------------

def test_three_stage_expansion() -> None:
    result = EXPANDER.expand("장학금 신청 방법")
    assert result.stage1_synonyms and result.stage3_procedures
    assert len(result.stage2_hypernyms) >= 0
    assert result.final_expanded != result.original_query
    assert result.final_expanded.startswith("장학금 신청 방법 ")


def test_stage_limits() -> None:
    result = EXPANDER.expand("조교 근무 시간 신청")
    assert len(result.stage1_synonyms) <= 3
    assert len(result.stage2_hypernyms) <= 2
    assert len(result.stage3_procedures) <= 2


@pytest.mark.parametrize("query", ["very long query with many keywords", "장학금 신청 방법",
                                   "조교 근무 시간 신청 자격 요건 기한", "연구년 자격 요건"])
def test_expansion_limit(query: str) -> None:
    result = EXPANDER.expand(query)
    words = len(result.final_expanded.split())
    assert words <= 10
    every_term = result.stage1_synonyms + result.stage2_hypernyms + result.stage3_procedures
    if len(query.split()) + sum(len(t.split()) for t in every_term) > 10:
        assert words <= 7  # over 10: trimmed to the 7 most relevant


def test_formal_query_skip() -> None:
    result = EXPANDER.expand("교원인사규정 제15조")
    assert result.final_expanded == result.original_query
    assert result.confidence == 1.0 and result.formal


def test_synonym_expansion() -> None:
    result = EXPANDER.expand("장학금")
    assert "장학금 지급" in result.stage1_synonyms or "재정 지원" in result.stage1_synonyms


# -- TAG-003 ---------------------------------------------------------------------------------

@pytest.mark.parametrize(("query", "k"), [
    ("휴학", 5), ("교원인사규정", 5), ("교원인사규정 제15조", 5),
    ("휴학 어떻게 하나요", 10),
    ("장학금 신청 자격 요건", 15), ("장학금 신청 방법", 15),
    ("휴학 방법 그리고 복학 절차", 20), ("휴학 그리고 복학", 20),
])
def test_adaptive_top_k(query: str, k: int) -> None:
    assert select_top_k(query, RECOGNIZER.recognize(query), LEXICON).k == k


# -- Appendix scenarios, query side ---------------------------------------------------------

def test_scenario_1_scholarship_application() -> None:
    kinds = {(m.text, m.entity_type) for m in RECOGNIZER.recognize("장학금 신청 방법")}
    assert ("장학금", EntityType.BENEFIT) in kinds
    assert {("신청", EntityType.PROCEDURE), ("방법", EntityType.PROCEDURE)} <= kinds
    expanded = EXPANDER.expand("장학금 신청 방법")
    assert "장학금 지급" in expanded.added_terms and "절차" in expanded.added_terms


def test_scenario_2_research_year() -> None:
    kinds = {(m.text, m.entity_type) for m in RECOGNIZER.recognize("연구년 자격 요건")}
    assert ("연구년", EntityType.TOPIC) in kinds
    assert {("자격", EntityType.REQUIREMENT), ("요건", EntityType.REQUIREMENT)} <= kinds
    assert {"안식년", "교원연구년"} <= set(EXPANDER.expand("연구년 자격 요건").added_terms)


def test_scenario_3_teaching_assistant() -> None:
    assert ("조교", EntityType.TOPIC) in {(m.text, m.entity_type)
                                         for m in RECOGNIZER.recognize("조교 근무 시간")}
    assert {"교육조교", "연구조교"} <= set(EXPANDER.expand("조교 근무 시간").added_terms)
