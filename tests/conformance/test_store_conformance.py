"""The store protocol's conformance suite: every role's tests (store_roles.py) against each
backend, the embedded store (SQLite + segments) and PostgreSQL + pgvector on a real server,
each backend's own role besides (segments; ranking in SQL), and the two must agree on the
same data (ids, order, fields). Retrieval through each backend's ``Access`` is compared in
test_access_congruence.py and test_retrieval_conformance.py.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from excerpt.engine import Engine
from excerpt.errors import NotFoundError, StoreError
from excerpt.ingest.books.editions import diff_snapshots
from excerpt.memory import MemoryStore, SQLiteBackend
from excerpt.memory.beside import backend_beside
from excerpt.retrieve.access import SegmentAccess
from excerpt.retrieve.backends import access_for
from excerpt.settings import Settings
from excerpt.store.base import InSql, OverSegments, Store
from excerpt.store.pg_hnsw import HnswConfig
from excerpt.store.postgres import PostgresStore
from excerpt.store.sqlite import SQLiteStore
from excerpt.types import Principal

from .store_roles import HR, RECORDS, StoreRolesTest, beir, release
from .view_helpers import open_store


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


def test_an_edition_compare_reads_both_stores_alike(pg_url: str, tmp_path: Path) -> None:
    """It reads what the caller may see through NodeReads.visible_rows, not a segment (which
    PostgreSQL does not keep): a hidden node is no change on either store."""
    before = {"n1": {"text": "the lunch menu"}, "n2": {"text": "old budget", "acl_tags": ["hr"]},
              "n3": {"text": "the canteen hours"}}
    after = {"n1": {"text": "the  lunch menu"}, "n2": {"text": "new budget", "acl_tags": ["hr"]},
             "n4": {"text": "a new notice"}}
    seen = []
    for kind, where in (("sqlite", str(tmp_path / "home")), ("postgres", pg_url)):
        engine = Engine(tmp_path / f"{kind}-home", store=open_store(kind, where, tmp_path))
        ids = [beir(engine, tmp_path / kind / str(i), "s", records)
               for i, records in enumerate((before, after))]
        seen.append([diff_snapshots(engine.store, *ids, who).to_json()
                     for who in (Principal(), HR)])
        engine.close()
    assert seen[0] == seen[1]
    anonymous, hr = seen[0]
    assert (anonymous["added"], anonymous["removed"], anonymous["changed"]) == (
        ["n4"], ["n3"], [])
    assert anonymous["reformatted"] == ["n1"] and hr["changed"] == ["n2"]


class TestSQLiteStore(StoreRolesTest):
    """Every role on the embedded store, and its own: segments the engine ranks over."""

    KIND = "sqlite"

    def test_it_ranks_over_its_segments(self, engine: Engine, tmp_path: Path) -> None:
        sid = beir(engine, tmp_path, "s", RECORDS)
        store = engine.store
        assert isinstance(store, SQLiteStore)
        ranking = store.ranking
        assert isinstance(ranking, OverSegments) and ranking.store is store
        assert isinstance(access_for(store, Settings()), SegmentAccess)
        [segment] = store.segments([sid])
        assert segment is store.segment(sid) and list(segment.ids) == ["n1", "n2", "n3", "n4"]
        assert store.segment_generation == 0  # nothing merged yet
        with pytest.raises(NotFoundError):
            store.segment("nope")

    def test_conversations_are_kept_beside_it(self, store: Store, location: str) -> None:
        backend = backend_beside(store)
        assert isinstance(backend, SQLiteBackend)
        assert backend.path == Path(location) / "memory.db"
        backend.close()


class TestPostgresStore(StoreRolesTest):
    """Every role on PostgreSQL, which ranks in SQL and so keeps no segment files."""

    KIND = "postgres"

    def test_it_ranks_in_sql(self, store: Store, location: str, tmp_path: Path) -> None:
        assert isinstance(store, PostgresStore)
        ranking = store.ranking
        assert isinstance(ranking, InSql) and ranking.hnsw is None  # exact by default
        assert ranking.rows("SELECT 1", ()) == [(1,)]
        assert not hasattr(store, "segment") and not hasattr(store, "segments")
        walked = PostgresStore(location, tmp_path, dense_index=HnswConfig())
        try:
            assert walked.ranking.hnsw is walked
        finally:
            walked.close()

    def test_traces_are_kept_in_its_tables(self, store: Store) -> None:
        assert isinstance(store, PostgresStore)
        store.record_trace({"kind": "search", "stages": []})
        assert store.traces(1) == [{"kind": "search", "stages": []}]

    def test_conversations_are_kept_beside_it(self, store: Store) -> None:
        memory = MemoryStore(backend_beside(store), embedder=None)
        memory.add("trip", "user", 1, "Find me a hotel in Busan.")
        assert [u.text for u in MemoryStore(backend_beside(store), embedder=None).read("trip")
                ] == ["Find me a hotel in Busan."]


def test_an_unreachable_server_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"cannot reach PostgreSQL .*excerpt pg start") as err:
        PostgresStore("postgresql://postgres:secret@127.0.0.1:1/excerpt", tmp_path)
    assert "secret" not in str(err.value)  # no password in messages


def test_no_memory_is_guessed_for_a_store_of_another_kind() -> None:
    with pytest.raises(StoreError, match="no conversation memory is kept beside a object"):
        backend_beside(object())  # type: ignore[arg-type]
