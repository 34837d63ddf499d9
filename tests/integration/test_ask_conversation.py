"""ask --conversation: a follow-up is resolved from the previous turn, both turns recorded."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.engine import Engine
from excerpt.memory.backends import SQLiteBackend
from excerpt.memory.store import MemoryStore

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"


def ask(home: Path, question: str) -> dict[str, object]:
    result = CliRunner().invoke(cli, ["--home", str(home), "ask", question, "--collection",
                                      "demo", "--mode", "bm25", "--conversation", "c", "--json",
                                      "--no-llm"])
    assert result.exit_code == 0, result.output
    payload: dict[str, object] = json.loads(result.output)
    return payload


def test_a_follow_up_is_resolved_and_both_turns_are_recorded(tmp_path: Path) -> None:
    home = tmp_path / "home"
    Engine(home).ingest(HANDBOOK, collection="demo", embedder="none")
    first = ask(home, "How are snapshots published?")
    assert first["resolution"] is None and first["turn"] == 1
    second = ask(home, "Can it be half written?")
    assert second["resolution"] == "pronoun" and second["turn"] == 2
    resolved = str(second["resolved_question"])
    assert resolved.startswith("Can snapshots") and " it " not in resolved
    store = MemoryStore(SQLiteBackend.at_home(home), embedder=None)
    turns = [(u.speaker, u.turn_number, u.text) for u in store.read("c")]
    store.close()
    assert [t[:2] for t in turns] == [("user", 1), ("assistant", 1), ("user", 2),
                                      ("assistant", 2)]
    assert turns[2][2] == "Can it be half written?"  # recorded as asked
    assert turns[3][2] == second["answer"]
