"""The store's roles as test mixins (as Haystack's testing/document_store.py does for document
stores): each class holds the tests of one role of ``excerpt.store.base.Store``, written once
against the protocol; a backend's test class inherits them all and says which backend it is
(``KIND``), so a new store is one class away from the whole suite (test_store_conformance.py).

Not collected on its own: the class names do not start with ``Test``.
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from excerpt.engine import Engine
from excerpt.errors import CorpusError, InputError, NotFoundError
from excerpt.store.base import Store
from excerpt.types import Principal

from .view_helpers import corpus, open_store

OPEN = {
    "sqlite": "from excerpt.store.sqlite import SQLiteStore; store = SQLiteStore(Path(where))",
    "postgres": "from excerpt.store.postgres import PostgresStore; "
                "store = PostgresStore(where, Path(scratch))",
}

HR, SECRET = Principal(frozenset({"hr"})), Principal(clearances=frozenset({"secret"}))
RECORDS = {  # ordinals follow the ids (a snapshot's nodes are sorted by id)
    "n1": {"text": "the lunch menu", "metadata": {"kind": "menu", "day": 1}},
    "n2": {"text": "the hr lunch budget", "acl_tags": ["hr"], "metadata": {"kind": "budget"}},
    "n3": {"text": "a secret lunch", "classification_labels": ["secret"],
           "metadata": {"kind": "menu", "day": [1, 2]}},
    "n4": {"text": "the canteen opening hours", "metadata": {"kind": "notice"}},
}


def release(shared_data: Callable[..., Path], version: str = "1.0") -> Path:
    return shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{version}.zip")


def beir(engine: Engine, root: Path, source: str, records: dict[str, dict[str, object]],
         collection: str = "c") -> str:
    """``records`` imported as source ``source`` of ``collection``; the snapshot's id."""
    path = corpus(root / source / "corpus.jsonl", records)
    return engine.ingest(path, collection, "beir", embedder="none", source=source).snapshot_id


class StoreFixtures:
    """Where a backend's store lives; a concrete class sets ``KIND`` ("sqlite", "postgres")."""

    KIND: str

    @pytest.fixture
    def location(self, request: pytest.FixtureRequest, tmp_path: Path) -> str:
        """A home folder for the embedded store, a new database URL for PostgreSQL."""
        if self.KIND == "postgres":
            url: str = request.getfixturevalue("pg_url")
            return url
        return str(tmp_path / "home")

    @pytest.fixture
    def store(self, location: str, tmp_path: Path) -> Iterator[Store]:
        store = open_store(self.KIND, location, tmp_path / "scratch")
        yield store
        store.close()

    @pytest.fixture
    def engine(self, location: str, tmp_path: Path) -> Iterator[Engine]:
        engine = Engine(tmp_path / "engine-home",
                        store=open_store(self.KIND, location, tmp_path / "scratch"))
        yield engine
        engine.close()


class ImportRunsTest(StoreFixtures):
    """ImportRuns: a run publishes all of its snapshot or nothing, and a dead one is found."""

    def test_a_published_run_is_recorded(self, engine: Engine, tmp_path: Path) -> None:
        sid = beir(engine, tmp_path, "s", RECORDS)
        [run] = engine.store.runs("c")
        assert (run.status, run.snapshot_id, run.nodes, run.source) == ("completed", sid, 4, "s")
        assert engine.store.run(run.run_id) == run and engine.store.runs("other") == []
        assert not engine.store.staging_dir(run.run_id).exists()
        with pytest.raises(NotFoundError, match="no import run"):
            engine.store.run(run.run_id + 100)

    def test_a_failed_import_leaves_nothing_visible(self, engine: Engine,
                                                    tmp_path: Path) -> None:
        broken = tmp_path / "Release_BROKEN.zip"
        with zipfile.ZipFile(broken, "w") as archive:
            archive.writestr("Release_BROKEN/repo_meta.json", "{not json")
        with pytest.raises(CorpusError):
            engine.ingest(broken, collection="code", embedder="none")
        [run] = engine.store.runs("code")
        assert run.status == "failed" and run.snapshot_id is None and "repo_meta" in run.message
        assert engine.store.snapshots("code") == []
        assert not engine.store.staging_dir(run.run_id).exists()

    def test_a_nul_character_is_refused_alike(self, engine: Engine, tmp_path: Path) -> None:
        """PostgreSQL cannot store U+0000 in text: every store refuses it before anything is
        written, naming the file and the node, and the import leaves nothing visible."""
        path = tmp_path / "beir"
        path.mkdir()
        (path / "corpus.jsonl").write_text(
            '{"_id": "d1", "title": "ok", "text": "a clean record"}\n'
            '{"_id": "d2", "title": "bad", "text": "a NUL \\u0000 inside"}\n', "utf-8")
        with pytest.raises(CorpusError, match=r"node 'd2' contains a NUL character"):
            engine.ingest(path, collection="nul", fmt="beir", embedder="none")
        assert engine.store.snapshots("nul") == []
        assert engine.store.runs("nul")[0].status == "failed"

    def test_a_run_whose_process_died_is_abandoned(self, location: str,
                                                   tmp_path: Path) -> None:
        script = (f"import os; from pathlib import Path; where, scratch = {location!r}, "
                  f"{str(tmp_path)!r}; {OPEN[self.KIND]}; "
                  "print(store.begin_run('c', 'src', 'text'), flush=True); os._exit(0)")
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120, check=True)
        run_id = int(done.stdout)
        store = open_store(self.KIND, location, tmp_path)  # opening recovers
        try:
            run = store.run(run_id)
            assert run.status == "abandoned" and "died" in (run.message or "")
            assert store.snapshots("c") == []
        finally:
            store.close()

    def test_a_running_import_is_not_abandoned_by_another_opener(self, location: str,
                                                                tmp_path: Path) -> None:
        first = open_store(self.KIND, location, tmp_path)
        run_id = first.begin_run("c", "src", "text")
        second = open_store(self.KIND, location, tmp_path)
        try:
            assert second.run(run_id).status == "running"
        finally:
            second.close()
            first.fail_run(run_id, "stopped by the test", [], 0.0)
            assert first.run(run_id).status == "failed"
            first.close()


class SnapshotRecordsTest(StoreFixtures):
    """SnapshotRecords: collections, snapshots, the latest view of live sources, sets."""

    def test_sets_and_their_errors(self, engine: Engine, shared_data: Callable[..., Path],
                                   tmp_path: Path) -> None:
        a = engine.ingest(release(shared_data), collection="code", embedder="none")
        (tmp_path / "note.txt").write_text("A note in another collection.", "utf-8")
        engine.ingest(tmp_path / "note.txt", collection="other", embedder="none")
        store = engine.store
        store.create_set("code", "one", [a.snapshot_id])
        b = engine.ingest(release(shared_data, "1.1"), collection="code", embedder="none")
        store.create_set("code", "one", [b.snapshot_id, a.snapshot_id, b.snapshot_id])
        assert store.snapshot_set("code", "one") == [b.snapshot_id, a.snapshot_id]  # replaced
        assert store.snapshot_sets("code") == {"one": [b.snapshot_id, a.snapshot_id]}
        with pytest.raises(NotFoundError):
            store.snapshot_set("code", "two")
        with pytest.raises(InputError, match="belongs to collection"):
            store.create_set("other", "x", [a.snapshot_id])
        with pytest.raises(NotFoundError):
            store.snapshot("nope")

    def test_a_retired_source_leaves_the_latest_view_until_it_comes_back(
            self, engine: Engine, tmp_path: Path) -> None:
        store = engine.store
        first = beir(engine, tmp_path, "a", {"x1": {"text": "first"}})
        kept = beir(engine, tmp_path, "b", {"y1": {"text": "kept"}})
        assert store.collections() == ["c"]
        store.retire_sources("c", ["a"])
        assert [s.snapshot_id for s in store.latest_snapshots("c")] == [kept]
        assert list(store.source_states("c")) == ["b"] and store.retired_sources("c") == ["a"]
        assert store.snapshot(first).source == "a"  # history stays readable
        back = beir(engine, tmp_path / "again", "a", {"x1": {"text": "back"}})
        assert [s.snapshot_id for s in store.latest_snapshots("c")] == [kept, back]
        assert store.retired_sources("c") == []

    def test_deleted_snapshots_and_collections_are_gone(self, engine: Engine,
                                                        tmp_path: Path) -> None:
        store = engine.store
        gone = beir(engine, tmp_path, "a", {"x1": {"text": "first"}})
        kept = beir(engine, tmp_path, "b", {"y1": {"text": "kept"}})
        store.delete_snapshots("c", [gone])
        assert [s.snapshot_id for s in store.snapshots("c")] == [kept]
        assert store.nodes_by_id(gone, ["x1"]) == []
        store.delete_snapshots("c", [kept], drop_collection=True)
        assert store.collections() == [] and store.snapshots() == []

    def test_migrations_are_listed_in_order(self, store: Store) -> None:
        applied = store.migrations()
        assert applied and applied == sorted(applied)


class NodeReadsTest(StoreFixtures):
    """NodeReads: nodes by ordinal, place and id, metadata lookups, and what a principal may
    see of a snapshot, on the same records."""

    def test_nodes_are_read_by_ordinal_place_and_id(self, engine: Engine,
                                                    tmp_path: Path) -> None:
        store = engine.store
        sid = beir(engine, tmp_path, "s", RECORDS)
        other = beir(engine, tmp_path, "t", {"m1": {"text": "another"}})
        assert [n.id for n in store.nodes_by_ordinal(sid, [2, 0, 3])] == ["n3", "n1", "n4"]
        assert [n.id for n in store.nodes_at([(other, 0), (sid, 1)])] == ["m1", "n2"]
        [hr] = store.nodes_by_id(sid, ["nope", "n2"])
        assert hr.acl_tags == ("hr",) and hr.metadata["kind"] == "budget"
        assert store.node_documents(sid) == ["n1", "n2", "n3", "n4"]  # one document a record
        assert store.nodes_by_ordinal(sid, []) == [] and store.nodes_at([]) == []

    def test_metadata_lookups_match_a_value_or_a_list_holding_it(self, engine: Engine,
                                                                 tmp_path: Path) -> None:
        sid = beir(engine, tmp_path, "s", RECORDS)
        assert engine.store.metadata_ordinals(sid, "kind", "menu") == [0, 2]
        assert engine.store.metadata_ordinals(sid, "day", 2) == [2]
        assert engine.store.metadata_ordinals(sid, "day", 1) == [0, 2]
        assert engine.store.metadata_ordinals(sid, "day", "1") == []  # a string is not 1

    def test_visible_rows_follow_the_one_visibility_rule(self, engine: Engine,
                                                         tmp_path: Path) -> None:
        store = engine.store
        sid = beir(engine, tmp_path, "s", RECORDS)
        expected = {Principal.admin(): [True] * 4, Principal(): [True, False, False, True],
                    HR: [True, True, False, True], SECRET: [True, False, True, True]}
        for principal, rows in expected.items():
            visible = store.visible_rows(sid, principal)
            assert visible.dtype == np.bool_ and visible.tolist() == rows, principal
        with pytest.raises(NotFoundError):
            store.visible_rows("nope", Principal.admin())

    def test_edges_are_read_whole_as_sources_and_as_triples(
            self, engine: Engine, shared_data: Callable[..., Path]) -> None:
        sid = engine.ingest(release(shared_data), collection="code", embedder="none").snapshot_id
        edges = engine.store.edges(sid)
        assert edges and sorted(engine.store.edge_sources(sid)) == sorted(
            e.from_id for e in edges)  # one per edge, in no promised order
        assert engine.store.edge_triples(sid) == sorted(
            {(e.from_id, e.relation, e.to_id) for e in edges})


class VectorCacheTest(StoreFixtures):
    """VectorStoreCache: embeddings by (model, hash); the first write wins."""

    def test_the_vector_cache_round_trips(self, store: Store) -> None:
        vectors = {"h1": np.arange(4, dtype=np.float32), "h2": np.ones(4, dtype=np.float32)}
        store.put_many("m", vectors)
        store.put_many("m", {"h1": np.zeros(4, dtype=np.float32)})  # first write wins
        got = store.get_many("m", ["h1", "h2", "h3", "h1"])
        assert sorted(got) == ["h1", "h2"]
        assert np.array_equal(got["h1"], vectors["h1"]) and store.get_many("other", ["h1"]) == {}


class EvalRecordsTest(StoreFixtures):
    """EvalRecords: evaluation runs are kept whole, with the principal they ran as."""

    def test_evaluation_runs_are_kept_alike(self, store: Store) -> None:
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


class StoreRolesTest(ImportRunsTest, SnapshotRecordsTest, NodeReadsTest, VectorCacheTest,
                     EvalRecordsTest):
    """Every role of ``Store``: what each backend's test class inherits."""
