"""The store protocol's conformance suite: the same tests against every backend, the embedded
store (SQLite + segments) and PostgreSQL + pgvector on a real server, and the two must agree
on the same data (ids, order, fields).

So far the suite covers the system of record: import runs and their atomicity, abandoned runs,
snapshots and the latest-per-source view, sets, nodes, edges, metadata lookups, the vector
cache, and clear errors. Search, graph and context through PostgreSQL join it with the SQL
retrieval path (issue 8, in progress).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from excerpt.engine import Engine
from excerpt.errors import CorpusError, InputError, NotFoundError, StoreError
from excerpt.store.base import Store

BACKENDS = ["sqlite", "postgres"]
OPEN = {
    "sqlite": "from excerpt.store.sqlite import SQLiteStore; store = SQLiteStore(Path(where))",
    "postgres": "from excerpt.store.postgres import PostgresStore; "
                "store = PostgresStore(where, Path(scratch))",
}


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, str]]:
    """(kind, where): a home folder for sqlite, a fresh database URL for postgres."""
    if request.param == "postgres":
        yield "postgres", request.getfixturevalue("pg_url")
    else:
        yield "sqlite", str(tmp_path / "home")


def open_store(kind: str, where: str, scratch: Path) -> Store:
    if kind == "postgres":
        from excerpt.store.postgres import PostgresStore

        return PostgresStore(where, scratch)
    from excerpt.store.sqlite import SQLiteStore

    return SQLiteStore(Path(where))


@pytest.fixture
def engine(backend: tuple[str, str], tmp_path: Path) -> Iterator[Engine]:
    kind, where = backend
    engine = Engine(tmp_path / "engine-home", store=open_store(kind, where, tmp_path))
    yield engine
    engine.close()


def release(shared_data: Callable[..., Path], version: str = "1.0") -> Path:
    return shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{version}.zip")


def describe(store: Store, collection: str) -> dict[str, Any]:
    """Everything the system of record says about a collection, without timestamps."""
    snaps = store.snapshots(collection)
    out: dict[str, Any] = {
        "snapshots": [{k: v for k, v in s.to_json().items() if k != "created_at"}
                      for s in snaps],
        "latest": [s.snapshot_id for s in store.latest_snapshots(collection)],
        "runs": [(r.collection, r.source, r.format, r.status, r.documents, r.nodes, r.edges,
                  r.snapshot_id) for r in store.runs(collection)],
        "sets": store.snapshot_sets(collection),
    }
    for s in snaps:
        edges = store.edges(s.snapshot_id)
        ids = sorted({e.from_id for e in edges} | {"C0001", "C0005", "SQL:dbo.table_Payments"})
        out[s.snapshot_id] = {
            "nodes": [(repr(n), list(n.metadata)) for n in store.nodes_by_id(s.snapshot_id, ids)],
            "first": [n.id for n in store.nodes_by_ordinal(s.snapshot_id, [2, 0, 1])],
            "edges": [(e.from_id, e.relation, e.to_id, dict(e.metadata)) for e in edges],
            "triples": store.edge_triples(s.snapshot_id),
            "tables": store.metadata_ordinals(s.snapshot_id, "kind", "Table"),
        }
    return out


def test_both_backends_record_the_same_snapshots(shared_data: Callable[..., Path],
                                                 pg_url: str, tmp_path: Path) -> None:
    seen = []
    for kind, where in (("sqlite", str(tmp_path / "home")), ("postgres", pg_url)):
        engine = Engine(tmp_path / f"{kind}-home", store=open_store(kind, where, tmp_path))
        a = engine.ingest(release(shared_data, "1.0"), collection="code", embedder="none")
        b = engine.ingest(release(shared_data, "1.1"), collection="code", embedder="none")
        engine.snapshot_set("Fake_snapshot", [a.snapshot_id, b.snapshot_id], "code")
        seen.append(describe(engine.store, "code"))
        engine.close()
    assert seen[0] == seen[1]
    assert len(seen[0]["snapshots"]) == 2 and seen[0]["runs"][0][3] == "completed"
    assert seen[0][seen[0]["latest"][0]]["triples"]  # there were edges to compare


def test_a_failed_import_leaves_nothing_visible(engine: Engine, tmp_path: Path) -> None:
    broken = tmp_path / "Release_BROKEN.zip"
    with zipfile.ZipFile(broken, "w") as archive:
        archive.writestr("Release_BROKEN/repo_meta.json", "{not json")
    with pytest.raises(CorpusError):
        engine.ingest(broken, collection="code", embedder="none")
    [run] = engine.store.runs("code")
    assert run.status == "failed" and run.snapshot_id is None and "repo_meta" in run.message
    assert engine.store.snapshots("code") == []
    assert not engine.store.staging_dir(run.run_id).exists()


def test_a_run_whose_process_died_is_abandoned(backend: tuple[str, str],
                                               tmp_path: Path) -> None:
    kind, where = backend
    script = (f"import os; from pathlib import Path; where, scratch = {where!r}, "
              f"{str(tmp_path)!r}; {OPEN[kind]}; "
              "print(store.begin_run('c', 'src', 'text'), flush=True); os._exit(0)")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=120, check=True)
    run_id = int(done.stdout)
    store = open_store(kind, where, tmp_path)  # opening recovers
    try:
        run = store.run(run_id)
        assert run.status == "abandoned" and "died" in (run.message or "")
        assert store.snapshots("c") == []
    finally:
        store.close()


def test_a_running_import_is_not_abandoned_by_another_opener(backend: tuple[str, str],
                                                            tmp_path: Path) -> None:
    kind, where = backend
    first = open_store(kind, where, tmp_path)
    run_id = first.begin_run("c", "src", "text")
    second = open_store(kind, where, tmp_path)
    try:
        assert second.run(run_id).status == "running"
    finally:
        second.close()
        first.fail_run(run_id, "stopped by the test", [], 0.0)
        assert first.run(run_id).status == "failed"
        first.close()


def test_sets_and_their_errors(engine: Engine, shared_data: Callable[..., Path],
                               tmp_path: Path) -> None:
    a = engine.ingest(release(shared_data), collection="code", embedder="none")
    (tmp_path / "note.txt").write_text("A note in another collection.", "utf-8")
    engine.ingest(tmp_path / "note.txt", collection="other", embedder="none")
    store = engine.store
    store.create_set("code", "one", [a.snapshot_id])
    b = engine.ingest(release(shared_data, "1.1"), collection="code", embedder="none")
    store.create_set("code", "one", [b.snapshot_id, a.snapshot_id, b.snapshot_id])
    assert store.snapshot_set("code", "one") == [b.snapshot_id, a.snapshot_id]  # replaced
    with pytest.raises(NotFoundError):
        store.snapshot_set("code", "two")
    with pytest.raises(InputError, match="belongs to collection"):
        store.create_set("other", "x", [a.snapshot_id])
    with pytest.raises(NotFoundError):
        store.snapshot("nope")


def test_the_vector_cache_round_trips(backend: tuple[str, str], tmp_path: Path) -> None:
    store = open_store(*backend, tmp_path)
    try:
        vectors = {"h1": np.arange(4, dtype=np.float32), "h2": np.ones(4, dtype=np.float32)}
        store.put_many("m", vectors)
        store.put_many("m", {"h1": np.zeros(4, dtype=np.float32)})  # first write wins
        got = store.get_many("m", ["h1", "h2", "h3", "h1"])
        assert sorted(got) == ["h1", "h2"]
        assert np.array_equal(got["h1"], vectors["h1"]) and store.get_many("other", ["h1"]) == {}
    finally:
        store.close()


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    from excerpt.store.postgres import PostgresStore

    with pytest.raises(StoreError, match=r"cannot reach PostgreSQL .*excerpt pg start") as err:
        PostgresStore("postgresql://postgres:secret@127.0.0.1:1/excerpt", tmp_path)
    assert "secret" not in str(err.value)  # no password in messages


def test_a_nul_character_is_refused_alike(engine: Engine, tmp_path: Path) -> None:
    """PostgreSQL cannot store U+0000 in text: every store refuses it before anything is
    written, naming the file and the node, and the import leaves nothing visible."""
    corpus = tmp_path / "beir"
    corpus.mkdir()
    (corpus / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "ok", "text": "a clean record"}\n'
        '{"_id": "d2", "title": "bad", "text": "a NUL \\u0000 inside"}\n', "utf-8")
    with pytest.raises(CorpusError, match=r"node 'd2' contains a NUL character"):
        engine.ingest(corpus, collection="nul", fmt="beir", embedder="none")
    assert engine.store.snapshots("nul") == []
    assert engine.store.runs("nul")[0].status == "failed"


def test_evaluation_runs_are_kept_alike(backend: tuple[str, str], tmp_path: Path) -> None:
    store = open_store(*backend, tmp_path)
    try:
        record = {"kind": "beir", "dataset": "/data/scifact", "split": "test",
                  "collection": "c", "mode": "bm25", "summary": {"ndcg@10": 0.5, "queries": 1},
                  "principal": {"acl_tags_any": ["hr"], "classification_labels_all": []},
                  "settings": {"k": 100, "fusion": "blend"}, "version": "0.1.0",
                  "git_commit": None, "stage_latency_ms": {"bm25": {"p50": 1.0}},
                  "items": [{"id": "q1", "query": "장학금 ☕", "ndcg@10": 0.5, "ranking": ["d1"]}]}
        first = store.save_eval_run(record)
        second = store.save_eval_run({**record, "mode": "hybrid"})
        headers = store.eval_runs()
        assert [(h["id"], h["mode"], h["summary"], h["principal"]) for h in headers] == [
            (first, "bm25", record["summary"], record["principal"]),
            (second, "hybrid", record["summary"], record["principal"])]
        legacy = store.save_eval_run({k: v for k, v in record.items() if k != "principal"})
        assert store.eval_runs()[-1]["principal"] == {"all_access": True}  # as runs then did
        assert store.eval_run(legacy)["principal"] == {"all_access": True}
        kept = store.eval_run(first)
        assert {k: v for k, v in kept.items() if k not in ("id", "created_at")} == record
        assert list(kept["summary"]) == ["ndcg@10", "queries"]  # key order kept
        with pytest.raises(NotFoundError, match="no evaluation run"):
            store.eval_run(second + 100)
    finally:
        store.close()
