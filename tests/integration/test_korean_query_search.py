"""Korean search end to end: entities, expansion and adaptive k in the search result."""

from __future__ import annotations

from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.settings import Settings
from excerpt.types import Filters, Principal

DOCS = {
    "scholarship.md": "# 장학\n\n장학금을 받으려는 학생은 정해진 기간에 신청서를 제출한다.",
    "funding.md": "# 재정\n\n재정 지원 대상자는 위원회가 심사하여 정한다.",
    "parking.md": "# 주차\n\n교내 주차장은 평일에 이용할 수 있다.",
    "leave.md": "# 휴학\n\n휴학을 하려는 학생은 휴학원을 제출하여야 한다.",
}


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("ko")
    (root / "docs").mkdir()
    for name, text in DOCS.items():
        (root / "docs" / name).write_text(text, "utf-8")
    Engine(root / "home").ingest(root / "docs", collection="ko", embedder="none")
    return root / "home"


def test_search_reports_entities_expansion_and_adaptive_k(home: Path) -> None:
    result = Engine(home).search("장학금", Filters("ko"), Principal.admin(), "bm25")
    assert result.k == 5 and result.analysis["k_reason"] == "a single keyword or a regulation name"
    assert result.analysis["entities"] == [{"text": "장학금", "type": "benefit"}]
    assert "재정 지원" in result.analysis["expanded_terms"]
    ids = [h.node.id for h in result.hits]
    assert ids[0] == "scholarship.md:0000"
    assert "funding.md:0000" in ids  # reached only through the synonym 재정 지원
    for stage in ("entities", "expansion", "top_k"):
        assert stage in result.timings_ms


def test_expansion_weighs_less_than_the_query(home: Path) -> None:
    full = Engine(home).search("장학금", Filters("ko"), Principal.admin(), "bm25")
    scores = {h.node.id: h.score for h in full.hits}
    assert scores["scholarship.md:0000"] > scores["funding.md:0000"]
    off = Engine(home, Settings(expansion_weight=0.0)).search(
        "장학금", Filters("ko"), Principal.admin(), "bm25")
    assert [h.node.id for h in off.hits] == ["scholarship.md:0000"]


def test_given_k_wins_and_english_keeps_the_default(home: Path) -> None:
    given = Engine(home).search("장학금", Filters("ko"), Principal.admin(), "bm25", 2)
    assert given.k == 2 and given.analysis["k_reason"] == "given"
    english = Engine(home).search("parking rules", Filters("ko"), Principal.admin(), "bm25")
    assert english.k == 10 and english.analysis["k_reason"] == "default"
    assert english.analysis["entities"] == []


def test_over_budget_reduces_k(home: Path) -> None:
    slow = Engine(home, Settings(search_budget_ms=0.0))
    result = slow.search("장학금 신청 방법", Filters("ko"), Principal.admin(), "bm25")
    assert result.k == 7  # complex (15) halved
    assert "reduced from 15" in result.analysis["k_reason"]


def test_plain_words_reach_a_document_that_shares_no_word_with_the_question(home: Path) -> None:
    """아파서 학교를 쉬어야 해요 asks for a leave of absence (휴학) without the word; the
    plain-word terms find the leave document (the weights: tests/unit/query/test_query_plain.py)."""
    result = Engine(home).search("아파서 학교를 쉬어야 해요", Filters("ko"), Principal.admin(),
                                 "bm25")
    assert result.analysis["expanded_terms"][:2] == ["질병 휴학", "진단서"]
    assert "plain_words" in result.timings_ms
    assert [h.node.id for h in result.hits] == ["leave.md:0000"]


def test_plain_words_rank_alike_in_postgresql(home: Path, pg_url: str,
                                             tmp_path: Path) -> None:
    """The plain-word terms and their weights reach PostgreSQL's BM25 as SQLite's."""
    docs = home.parent / "docs"
    pg = Engine(tmp_path / "scratch", store_url=pg_url)
    pg.ingest(docs, collection="ko", embedder="none")
    query = "군대 가야 해서 학교를 쉬어야 해요"
    ours, theirs = (e.search(query, Filters("ko"), Principal.admin(), "bm25")
                    for e in (Engine(home), pg))
    assert ours.analysis["expanded_terms"] == theirs.analysis["expanded_terms"]
    assert "휴학규정" in theirs.analysis["expanded_terms"]
    assert [(h.node.id, round(h.score, 4)) for h in ours.hits] == [
        (h.node.id, round(h.score, 4)) for h in theirs.hits]
    assert theirs.hits[0].node.id == "leave.md:0000"


# -- plain questions on the real book (issue 16 item 7) ---------------------------------------

PLAIN = Path(__file__).resolve().parents[2] / "examples" / "regulations" / "plain_questions.yaml"
# Reached with the packaged lexicon (bench/RESULTS.md, "Plain-words regulation questions"):
# BM25, top 5. Before the plain-word rules: regulation 0.60 / 0.40, article 0.35 / 0.20.
BARS = {"tune": (1.00, 0.75), "heldout": (1.00, 0.70)}  # (regulation, article) top-5 rates


def _regulation(node_id: str) -> str:
    return node_id.split(" ", 1)[0]


@pytest.mark.data
def test_plain_questions_find_the_governing_regulation(regulation_book: Path) -> None:
    import yaml

    questions = yaml.safe_load(PLAIN.read_text("utf-8"))["scenarios"]
    assert len(questions) >= 30 and {q["kind"] for q in questions} == {"plain"}
    engine = Engine(regulation_book)
    rates: dict[str, list[tuple[bool, bool]]] = {"tune": [], "heldout": []}
    for q in questions:
        found = engine.search(q["query"], Filters("reg"), Principal.admin(), "bm25", 5,
                              fetch=False)
        top = [node_id for node_id, _, _ in found.ranking[:5]]
        rates[q["split"]].append((
            bool({_regulation(g) for g in q["gold"]} & {_regulation(t) for t in top}),
            bool(set(q["gold"]) & set(top))))
    for split, (regulation_bar, article_bar) in BARS.items():
        hits = rates[split]
        assert len(hits) >= 15
        regulation = sum(r for r, _ in hits) / len(hits)
        article = sum(a for _, a in hits) / len(hits)
        assert regulation >= regulation_bar and article >= article_bar, (split, regulation, article)
