"""Issue 16 items 3-5 through Engine.ask on both stores (SQLite + segments, PostgreSQL +
pgvector): sentences embedded with the collection's MiniLM, quotes verbatim, one number per
node in order of first appearance, and caution from the calibrated confidence."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from excerpt.compose.ask import AskOptions
from excerpt.engine import Engine
from excerpt.store.base import Store
from excerpt.types import Filters, Principal

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"


def open_store(kind: str, where: str, scratch: Path) -> Store:
    if kind == "postgres":
        from excerpt.store.postgres import PostgresStore

        return PostgresStore(where, scratch)
    from excerpt.store.sqlite import SQLiteStore

    return SQLiteStore(Path(where))


@pytest.fixture(params=["sqlite", "postgres"])
def engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    where = (request.getfixturevalue("pg_url") if request.param == "postgres"
             else str(tmp_path / "home"))
    engine = Engine(tmp_path / "engine-home", store=open_store(request.param, where, tmp_path))
    engine.ingest(HANDBOOK, collection="demo", embedder="minilm")
    yield engine
    engine.close()


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_the_demo_question_cites_each_node_once_and_quotes_verbatim(engine: Engine,
                                                                    mode: str) -> None:
    result = engine.ask("How does excerpt keep a snapshot from being half written?",
                        Filters("demo"), Principal.anonymous(), mode)  # type: ignore[arg-type]
    composed = result.composed
    assert "sem" in composed.features  # the collection's MiniLM scored the sentences
    texts = {p.node.id: p.node.text for p in result.documents}
    assert all(q.text in texts[q.node_id] for q in composed.quotes)
    cited = [int(n) for n in re.findall(r"\[(\d+)\]", composed.answer)]
    listed = [c.n for c in composed.citations]
    assert list(dict.fromkeys(cited)) == listed == list(range(1, len(listed) + 1))
    assert len({c.node_id for c in composed.citations}) == len(listed)
    assert not composed.cautious


def test_an_unanswerable_question_is_cautious_and_still_cites(engine: Engine) -> None:
    result = engine.ask("Who won the football world cup in 1954?", Filters("demo"),
                        Principal.anonymous(), "hybrid", AskOptions())
    composed = result.composed
    assert composed.cautious and composed.confidence < AskOptions().min_confidence
    assert composed.answer.startswith("Based on the available passages, they do not answer")
    assert composed.quotes and composed.citations
