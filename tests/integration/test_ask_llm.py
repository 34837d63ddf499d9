"""ask with an LLM through the CLI: EXCERPT_LLM_URL points at a chat-completions server run
here; the model's concepts ground the search, its answer goes through the attribution check,
and the extractive answer stands in when nothing survives."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.llm import ChatStandIn

from excerpt.cli.main import cli
from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
QUESTION = "How does excerpt keep a snapshot from being half written?"


def chat_server(replies: list[str]) -> ChatStandIn:
    """Answers each chat-completions request with the next scripted content."""
    return ChatStandIn(lambda _: replies.pop(0) if replies else "")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("llm") / "home"
    Engine(home).ingest(HANDBOOK, collection="demo", embedder="none")
    return home


def ask(home: Path, replies: list[str], monkeypatch: pytest.MonkeyPatch,
        *extra: str) -> tuple[dict[str, Any], ChatStandIn]:
    server = chat_server(replies)
    monkeypatch.setenv("EXCERPT_LLM_URL", server.url)
    monkeypatch.setenv("EXCERPT_LLM_MODEL", "scripted")
    result = CliRunner().invoke(cli, ["--home", str(home), "ask", QUESTION, "--collection",
                                      "demo", "--mode", "bm25", "--json", *extra])
    server.close()
    assert result.exit_code == 0, result.output
    return json.loads(result.output), server


def test_the_models_checked_answer_replaces_the_extractive_one(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answer = ("A snapshot becomes visible only when its import run publishes it in one "
              "transaction, so a snapshot is never half written. [1] "
              "Bananas are yellow. [1] The moon is made of cheese.")
    payload, server = ask(home, ["snapshot publishing\nimport run", answer], monkeypatch)
    assert payload["concepts"] == ["snapshot publishing", "import run"]
    assert "never half written" in payload["answer"] and "Bananas" not in payload["answer"]
    dropped = {d["text"]: d["reason"] for d in payload["synthesis"]["dropped"]}
    assert any("Bananas" in t for t in dropped) and any("cheese" in t for t in dropped)
    assert "[1]" in server.prompts[1] and "Question:" in server.prompts[1]


def test_nothing_supported_falls_back_to_the_extractive_answer(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload, _ = ask(home, ["", "Nothing here cites anything."], monkeypatch)
    assert payload["synthesis"]["answer"] == ""
    assert "[1]" in payload["answer"]  # the extractive answer, with its markers
    assert payload["concepts"]  # the offline concepts, the model gave none


def test_no_llm_flag_ignores_the_endpoint(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    payload, server = ask(home, ["x"], monkeypatch, "--no-llm")
    assert server.prompts == [] and "synthesis" not in payload
