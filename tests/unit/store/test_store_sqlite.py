"""The embedded store: runs, atomic publish, recovery, sets, the latest-snapshot view, cache."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import numpy as np
import pytest

from excerpt.errors import InputError, NotFoundError
from excerpt.store.base import SnapshotPayload
from excerpt.store.segment import write_segment
from excerpt.store.sqlite import SQLiteStore
from excerpt.types import Document, Edge, IngestIssue, Node


def payload(store: SQLiteStore, run_id: int, source: str, texts: list[str],
            snapshot_id: str | None = None) -> SnapshotPayload:
    nodes = [Node(f"{source}:{i:03d}", source, t, acl_tags=("a",) if i % 2 else ())
             for i, t in enumerate(texts)]
    staging = store.staging_dir(run_id)
    write_segment(staging, [n.id for n in nodes], [t.split() for t in texts],
                  [n.acl_tags for n in nodes], [() for _ in nodes], None, {})
    return SnapshotPayload("c", source, [Document(source, source.title(), source)], nodes,
                           [Edge(nodes[0].id, "next", nodes[-1].id)], [], staging, snapshot_id)


def test_publish_makes_everything_visible_at_once(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    run = store.begin_run("c", "book", "text")
    assert store.snapshots("c") == []
    info = store.publish(run, payload(store, run, "book", ["one two", "three four"]), 0.1)
    assert info.nodes == 2 and info.documents == 1 and info.edges == 1
    assert store.run(run).status == "completed"
    assert store.run(run).snapshot_id == info.snapshot_id
    assert [n.text for n in store.nodes_by_ordinal(info.snapshot_id, [1, 0])] == [
        "three four", "one two"]
    assert store.nodes_by_id(info.snapshot_id, ["book:001"])[0].acl_tags == ("a",)
    assert store.segment(info.snapshot_id).size == 2
    assert store.edges(info.snapshot_id)[0].relation == "next"
    assert not store.staging_dir(run).exists()


def test_latest_view_has_one_snapshot_per_source(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    ids = []
    for source, text in [("a", "x"), ("b", "y"), ("a", "z")]:
        run = store.begin_run("c", source, "text")
        ids.append(store.publish(run, payload(store, run, source, [text]), 0.0).snapshot_id)
    latest = {s.snapshot_id for s in store.latest_snapshots("c")}
    assert latest == {ids[1], ids[2]}
    assert len(store.snapshots("c")) == 3  # the older snapshot is still there, immutable


def test_abandoned_run_is_marked_and_cleaned_on_open(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    run = store.begin_run("c", "a", "text")
    payload(store, run, "a", ["half built"])
    # Pretend the run belongs to a process that no longer exists.
    store._conn.execute("UPDATE import_runs SET pid = 999999999 WHERE id = ?", (run,))
    store.close()
    reopened = SQLiteStore(tmp_path)
    assert reopened.run(run).status == "abandoned"
    assert not reopened.staging_dir(run).exists()
    assert reopened.snapshots() == []


def test_orphan_segment_without_snapshot_is_removed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    run = store.begin_run("c", "a", "text")
    p = payload(store, run, "a", ["renamed but never committed"])
    os.replace(p.segment_dir, store.segments_dir / f"run-{run}")
    store._conn.execute("UPDATE import_runs SET pid = 999999999 WHERE id = ?", (run,))
    store.close()
    reopened = SQLiteStore(tmp_path)
    assert not (reopened.segments_dir / f"run-{run}").exists()


def test_live_run_staging_survives_another_open(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    run = store.begin_run("c", "a", "text")
    payload(store, run, "a", ["still building"])
    SQLiteStore(tmp_path).close()  # another process opening the store must not touch it
    assert store.staging_dir(run).exists()
    assert store.run(run).status == "running"


def test_failed_publish_leaves_nothing(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    run = store.begin_run("c", "a", "text")
    store.publish(run, payload(store, run, "a", ["x"], snapshot_id="s1"), 0.0)
    run2 = store.begin_run("c", "a", "text")
    with pytest.raises(InputError, match="already exists"):
        store.publish(run2, payload(store, run2, "a", ["y"], snapshot_id="s1"), 0.0)
    store.fail_run(run2, "duplicate", [IngestIssue("f", "bad")], 0.0)
    assert store.run(run2).status == "failed"
    assert store.run(run2).errors == [{"path": "f", "reason": "bad"}]
    assert [s.snapshot_id for s in store.snapshots()] == ["s1"]


def test_snapshot_sets(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    ids = []
    for source in ("a", "b"):
        run = store.begin_run("c", source, "text")
        ids.append(store.publish(run, payload(store, run, source, ["t"]), 0.0).snapshot_id)
    store.create_set("c", "release", ids)
    assert store.snapshot_set("c", "release") == ids
    store.create_set("c", "release", ids[:1])
    assert store.snapshot_set("c", "release") == ids[:1]
    with pytest.raises(NotFoundError):
        store.create_set("c", "bad", ["nope"])
    with pytest.raises(NotFoundError):
        store.snapshot_set("c", "missing")
    with pytest.raises(InputError):
        store.create_set("other", "x", ids)


def test_vector_cache_round_trip(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    vec = np.arange(4, dtype=np.float32)
    store.put_many("m", {"h1": vec})
    got = store.get_many("m", ["h1", "h2"])
    assert list(got) == ["h1"]
    np.testing.assert_array_equal(got["h1"], vec)
    assert store.get_many("other", ["h1"]) == {}


def test_store_uses_wal(tmp_path: Path) -> None:
    SQLiteStore(tmp_path).close()
    mode = sqlite3.connect(tmp_path / "excerpt.db").execute("PRAGMA journal_mode").fetchone()
    assert mode[0] == "wal"


def test_metadata_filter_ordinals(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path)
    run = store.begin_run("c", "a", "text")
    p = payload(store, run, "a", ["x", "y", "z"])
    p.nodes = [Node(n.id, n.document_id, n.text, metadata={"chapter": i % 2})
               for i, n in enumerate(p.nodes)]
    info = store.publish(run, p, 0.0)
    assert store.metadata_ordinals(info.snapshot_id, "chapter", 1) == [1]
    assert store.metadata_ordinals(info.snapshot_id, "chapter", 0) == [0, 2]
