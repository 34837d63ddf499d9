"""ask never quotes, cites, explores or mentions in provenance a passage the caller may not see."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.compose.ask import AskOptions
from excerpt.engine import Engine
from excerpt.types import Filters, Principal

PUBLIC = ("The cafeteria serves lunch from noon until two in the afternoon on weekdays. "
          "Visitors may buy a lunch ticket at the front desk of the main building.")
SECRET = ("The merger with Northwind closes in March; the board approved the lunch budget cut "
          "and the cafeteria staff reduction as part of the merger plan for the afternoon shift.")
QUESTION = "What did the board decide about the cafeteria lunch budget and the merger?"
INSIDER = Principal(frozenset({"board"}), frozenset({"secret"}))


@pytest.fixture()
def engine(tmp_path: Path) -> Engine:
    (tmp_path / "public").mkdir()
    (tmp_path / "public" / "cafeteria.txt").write_text(PUBLIC, "utf-8")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "merger.txt").write_text(SECRET, "utf-8")
    engine = Engine(tmp_path / "home")
    engine.ingest(tmp_path / "public", collection="c", embedder="none", source="public")
    engine.ingest(tmp_path / "secret", collection="c", embedder="none", source="secret",
                  acl_tags=["board"], classification_labels=["secret"])
    return engine


def everything(engine: Engine, principal: Principal, reranker: str | None) -> str:
    result = engine.ask(QUESTION, Filters("c"), principal, "bm25", AskOptions(doc_limit=5),
                        reranker, record=True)
    text = json.dumps(result.to_json(explain=True), ensure_ascii=False)
    assert result.recorder is not None
    return text + result.recorder.to_turtle()


@pytest.mark.parametrize("reranker", [None, "features"])
def test_the_secret_passage_reaches_the_insider_only(engine: Engine,
                                                     reranker: str | None) -> None:
    insider = everything(engine, INSIDER, reranker)
    outsider = everything(engine, Principal.anonymous(), reranker)
    board_only = Principal(frozenset({"board"}))  # the tag without the clearance
    for word in ("merger.txt", "Northwind", "March"):  # the question says "merger" itself
        assert word in insider
        assert word not in outsider
        assert word not in everything(engine, board_only, reranker)
    assert "cafeteria.txt" in outsider


def test_the_cli_keeps_the_secret_too(engine: Engine, tmp_path: Path) -> None:
    engine.close()
    base = ["--home", str(tmp_path / "home"), "ask", QUESTION, "--collection", "c",
            "--mode", "bm25", "--explain", "--explain-format", "turtle", "--json"]
    outsider = CliRunner().invoke(cli, base)
    insider = CliRunner().invoke(cli, [*base, "--acl-tag", "board", "--clearance", "secret"])
    assert outsider.exit_code == 0 and insider.exit_code == 0
    assert "Northwind" not in outsider.output and "merger.txt" not in outsider.output
    assert "Northwind" in insider.output
    payload = json.loads(outsider.output)
    assert {"question", "answer", "cautious", "quotes", "citations", "timings_ms",
            "provenance"} <= set(payload)
    assert [e["stage"] for e in payload["provenance"]] == [
        "question", "grounding", "exploration", "synthesis"]
    assert all(q["id"] == "cafeteria.txt:0000" for q in payload["quotes"])
    assert payload["provenance_rdf"].startswith("@prefix")
