"""The service layer (excerpt/service.py) is what a front door calls: a new one is a few
lines over it.  Here, a JSON-lines door (one request object per line in, one answer per line
out) answers as ``excerpt ask --json`` does, and keeps a conversation as the CLI keeps it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from excerpt import service
from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.memory.backends import SQLiteBackend
from excerpt.memory.store import MemoryStore
from excerpt.types import Filters, Principal

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"


def json_lines_door(engine: Engine, memory: MemoryStore, lines: list[str]) -> list[str]:
    """A whole front door: parse, call the service, print."""
    out = []
    for line in lines:
        asked = json.loads(line)
        talk = asked.get("conversation")
        request = service.AskRequest(asked["question"], engine.ask_options(), asked["mode"],
                                     conversation=service.Conversation(talk, talk)
                                     if talk else None)
        out.append(json.dumps(service.ask_json(engine, request, Filters(asked["collection"]),
                                               Principal.anonymous(), memory)))
    return out


def without_timings(payload: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in payload.items() if k not in ("timings_ms", "reader")}


def test_a_new_front_door_answers_as_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="demo", embedder="none")
    memory = MemoryStore(SQLiteBackend.at_home(home), embedder=None)
    question = "How are snapshots published?"
    door = json.loads(json_lines_door(engine, memory, [json.dumps(
        {"question": question, "mode": "bm25", "collection": "demo"})])[0])
    ran = CliRunner().invoke(cli, ["--home", str(home), "ask", question, "--collection", "demo",
                                   "--mode", "bm25", "--json", "--no-llm"])
    assert ran.exit_code == 0, ran.output
    assert without_timings(door) == without_timings(json.loads(ran.output))
    assert door["citations"] and door["answer"]
    follow = [json.loads(a) for a in json_lines_door(engine, memory, [
        json.dumps({"question": q, "mode": "bm25", "collection": "demo", "conversation": "t"})
        for q in (question, "Can it be half written?")])]
    assert [a["turn"] for a in follow] == [1, 2] and follow[1]["resolution"] == "pronoun"
    assert [u.speaker for u in memory.read("t")] == ["user", "assistant"] * 2
    memory.close()
