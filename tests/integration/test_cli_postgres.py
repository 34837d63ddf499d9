"""The CLI against PostgreSQL (`--store URL`): migrate, ingest, search, graph, context, ask in
a conversation (memory in PostgreSQL) and memory, on a real server; bad URLs refused."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.store.pg_schema import MIGRATIONS


def run(home: Path, url: str, *args: str) -> Any:
    out = CliRunner().invoke(cli, ["--home", str(home), "--store", url, *args, "--json"])
    assert out.exit_code == 0, out.output
    return json.loads(out.output)


def test_every_command_runs_on_postgresql(pg_url: str, tmp_path: Path,
                                          shared_data: Callable[..., Path]) -> None:
    home = tmp_path / "scratch"
    first = run(home, pg_url, "migrate")
    names = [name for name, _ in MIGRATIONS]
    assert first == {"store": "postgresql", "applied_now": names, "migrations": names}
    assert run(home, pg_url, "migrate")["applied_now"] == []
    bundle = shared_data("fake_enterprise", "Release_FAKE_ENTERPRISE_1.0.zip")
    done = run(home, pg_url, "ingest", str(bundle), "--collection", "code", "--embedder", "none",
               "--no-progress")
    assert done["status"] == "completed" and done["nodes"] == 291
    assert not (home / "excerpt.db").exists()  # nothing of the store is kept locally
    found = run(home, pg_url, "search", "ShipmentService SearchByTracking", "--collection",
                "code", "--mode", "bm25", "-k", "3")
    assert found["hits"][0]["id"] == "C0025"
    tree = run(home, pg_url, "graph", "C0025", "--collection", "code")
    assert [n["id"] for n in tree["nodes"]] == ["C0025", "C0026"]
    texts = run(home, pg_url, "context", "--seed", "C0025", "--collection", "code")
    assert texts["node_texts"][0]["id"] == "C0025"
    asked = run(home, pg_url, "ask", "How are shipments searched by tracking number?",
                "--collection", "code", "--mode", "bm25", "--conversation", "c1")
    assert "[1]" in asked["answer"]
    again = run(home, pg_url, "ask", "And what does it call?", "--collection", "code",
                "--mode", "bm25", "--conversation", "c1")
    assert again["conversation"] == "c1" and again["turn"] == 2
    memory = run(home, pg_url, "memory", "c1", "read")
    assert [u["speaker"] for u in memory["utterances"]] == ["user", "assistant"] * 2
    assert not (home / "memory.db").exists()  # conversations live in PostgreSQL too


def test_a_url_that_is_not_postgresql_is_refused(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["--home", str(tmp_path), "--store", "mysql://x/y",
                                   "snapshots"])
    assert out.exit_code == 1 and "postgresql://" in out.output
    out = CliRunner().invoke(cli, ["--home", str(tmp_path), "--store",
                                   "postgresql://postgres@127.0.0.1:1/excerpt", "snapshots"])
    assert out.exit_code == 1 and "cannot reach PostgreSQL" in out.output


def test_the_service_runs_on_postgresql(pg_url: str, tmp_path: Path,
                                        serving: Callable[[Any], Any]) -> None:
    import urllib.request

    from excerpt.edge.keys import KeyRing
    from excerpt.engine import Engine
    from excerpt.server.app import create_app

    engine = Engine(tmp_path, store_url=pg_url)
    (tmp_path / "notes.txt").write_text("The cafeteria serves lunch at noon.", "utf-8")
    engine.ingest(tmp_path / "notes.txt", collection="c", embedder="none")
    ring = KeyRing(tmp_path / "keys.yaml")
    _, key = ring.add("ana")
    ring.save()

    def call(path: str, body: dict[str, Any] | None = None) -> Any:
        request = urllib.request.Request(
            url + path, json.dumps(body).encode() if body else None,
            {"Authorization": f"Bearer {key}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    with serving(create_app(engine, KeyRing.load(tmp_path / "keys.yaml"))) as url:
        hits = call("/v1/search?q=lunch&collection=c&mode=bm25")["hits"]
        assert [h["id"] for h in hits] == ["notes.txt:0000"]
        call("/v1/memory/talk/query", {"intent": "add", "data": {
            "speaker": "user", "turn": 1, "text": "When is lunch?"}})
        read = call("/v1/memory/talk/query", {"intent": "read", "data": {}})
        assert [u["text"] for u in read["utterances"]] == ["When is lunch?"]
    stored = engine.store.query("SELECT conversation FROM utterances")  # type: ignore[attr-defined]
    assert len(stored) == 1 and stored[0][0].startswith("key:")  # the key's, by its identity,
    assert stored[0][0].endswith("/talk")  # kept in PostgreSQL
    engine.close()
