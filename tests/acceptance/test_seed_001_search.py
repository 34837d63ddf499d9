"""Seed 001 end-to-end scenarios and characterization queries on the real regulation book."""

from __future__ import annotations

from pathlib import Path

from excerpt.engine import Engine
from excerpt.types import Filters, Principal

ADMIN = Principal.admin()


def search(home: Path, query: str) -> tuple[list[str], list[str], int, dict[str, object]]:
    result = Engine(home).search(query, Filters("reg"), ADMIN, "bm25")
    return ([h.node.id for h in result.hits], [h.node.text for h in result.hits], result.k,
            result.analysis)


def test_scenario_1_scholarship_application(regulation_book: Path) -> None:
    ids, texts, k, analysis = search(regulation_book, "장학금 신청 방법")
    assert k == 15
    assert {"text": "장학금", "type": "benefit"} in analysis["entities"]  # type: ignore[operator]
    assert any("신청" in t for t in texts) and any("절차" in t for t in texts)
    scholarship = [i for i in ids if "장학" in i]
    assert len(scholarship) >= 3, ids
    assert ids[0].startswith("장학금지급규정")


def test_formal_query_finds_the_article(regulation_book: Path) -> None:
    ids, _, k, analysis = search(regulation_book, "교원인사규정 제15조")
    assert ids[0] == "교원인사규정 제15조"
    assert k == 5 and analysis["expanded_terms"] == []


def test_single_keyword_gets_five_leave_articles(regulation_book: Path) -> None:
    ids, texts, k, _ = search(regulation_book, "휴학")
    assert k == 5 and len(ids) == 5
    assert all("휴학" in t for t in texts)


def test_scenario_3_teaching_assistant_hours(regulation_book: Path) -> None:
    ids, texts, _, analysis = search(regulation_book, "조교 근무 시간")
    assert "교육조교" in analysis["expanded_terms"]  # type: ignore[operator]
    assert any("근무" in t and "시간" in t for t in texts)
    assert any(i.startswith("조교규정") for i in ids)


def test_multi_hop_follows_relevant_citations(regulation_book: Path) -> None:
    result = Engine(regulation_book).search("휴학 기간", Filters("reg"), ADMIN, "bm25")
    report = result.analysis["multi_hop"]
    assert 1 <= report["hops_performed"] <= 2
    followed = [c for c in report["citations"] if c["followed"]]
    assert followed and all(c["relevance"] >= 0.5 for c in followed)
    assert all(c["reason"] for c in report["citations"] if not c["followed"])
    ids = [h.node.id for h in result.hits]
    assert ids[result.k:] == report["added"]  # hop results come after the k ranked hits
    assert len(set(ids)) == len(ids)
    assert "multi_hop" in result.timings_ms


def test_multi_hop_can_be_switched_off(regulation_book: Path) -> None:
    from excerpt.settings import Settings

    engine = Engine(regulation_book, Settings(multi_hop_max=0))
    result = engine.search("휴학 기간", Filters("reg"), ADMIN, "bm25")
    assert "multi_hop" not in result.analysis and len(result.hits) == result.k
