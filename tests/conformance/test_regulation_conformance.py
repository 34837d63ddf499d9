"""The regulation book in both stores: the 36 hand-checked scenario queries (adaptive top-k,
entities, expansion, named articles, multi-hop citations) give the same hits, the same
analysis and the same answers from the embedded store and from PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml

from excerpt.engine import Engine
from excerpt.store.postgres import PostgresStore
from excerpt.types import Filters, Principal

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = yaml.safe_load((REPO / "examples" / "regulations" / "scenarios.yaml").read_text(
    "utf-8"))["scenarios"]


@pytest.fixture(scope="module")
def engines(shared_data: Callable[..., Path], pg_database: Callable[[], str],
            regulation_book: Path, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Engine, Engine]]:
    """The session's embedded store of the book, and the same book ingested into PostgreSQL."""
    book = shared_data("regulations", "dongeui_regulations_9-340_20250702.txt")
    scratch = tmp_path_factory.mktemp("regulation-conformance")
    pair = (Engine(regulation_book),
            Engine(scratch, store=PostgresStore(pg_database(), scratch)))
    pair[1].ingest(book, collection="reg", embedder="none")
    yield pair
    for engine in pair:
        engine.close()


def test_every_scenario_searches_the_same(engines: tuple[Engine, Engine]) -> None:
    hopped = 0
    for scenario in SCENARIOS:
        a, b = (e.search(scenario["query"], Filters("reg"), Principal.anonymous(), "bm25")
                for e in engines)
        assert [h.node.id for h in a.hits] == [h.node.id for h in b.hits], scenario["id"]
        for x, y in zip(a.hits, b.hits, strict=True):
            assert x.score == pytest.approx(y.score, rel=1e-5), (scenario["id"], x.node.id)
        assert a.analysis == b.analysis, scenario["id"]
        hopped += bool(a.analysis.get("multi_hop", {}).get("added"))
    assert hopped  # some scenarios did follow citations, in both stores


def test_named_articles_and_answers_agree(engines: tuple[Engine, Engine]) -> None:
    for query in ("교원인사규정 제15조", "「학생상벌에관한규정」 제16조제2항의 내용",
                  "장학금 신청 방법은?"):
        a, b = (e.search(query, Filters("reg"), Principal.anonymous(), "bm25") for e in engines)
        assert [h.node.id for h in a.hits] == [h.node.id for h in b.hits], query
    for scenario in SCENARIOS[:6]:
        a, b = (e.ask(scenario["query"], Filters("reg"), Principal.anonymous(), "bm25")
                for e in engines)
        assert a.to_json()["answer"] == b.to_json()["answer"], scenario["id"]
