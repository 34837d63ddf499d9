"""The embedded store: SQLite (WAL) as the system of record, numpy segments beside it.

Layout under ``home``::

    excerpt.db             collections, import runs, snapshots, sets, nodes, edges, vector cache
    segments/run-<id>/     the search segment of the snapshot published by import run <id>
    segments/merge-<id>/   a merged segment: the rows of many snapshots (store/compaction.py)
    segments/.staging-<id> a segment being built by a running import (never read)
    segments/.merge-<pid>-<start>  a merged segment being written (never read)
    locks/                 one sync per collection at a time (store/locks.py)
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from excerpt.errors import InputError, NotFoundError, StoreError
from excerpt.store._records import RecordQueries
from excerpt.store.base import (
    OverSegments,
    SnapshotInfo,
    SnapshotList,
    SnapshotPayload,
    set_members,
)
from excerpt.store.compaction import SegmentMerges
from excerpt.store.deletion import delete_statements
from excerpt.store.locks import file_lock, lock_key, process_started
from excerpt.store.maps import OpenMaps
from excerpt.store.schema import migrate, now
from excerpt.store.segment import Segment
from excerpt.store.sources import SourceRecords
from excerpt.types import Edge, IngestIssue, Node, Principal

_T = TypeVar("_T")
MMAP_BYTES = 1 << 30
"""SQLite reads the database through a memory map of up to this many bytes (one descriptor,
the database's own): a search's hits are rows scattered over the nodes table, each a read
syscall without it (fetching 10 hits: 0.19 -> 0.05 ms at 10,000 nodes)."""
PLACES_AT_ONCE = 200
"""Nodes :meth:`SQLiteStore.nodes_at` reads per statement (an OR of this many pairs stays
far below SQLite's expression depth of 1,000)."""


def _json(raw: str, empty: str, empty_value: Any) -> Any:
    # Most nodes have no tags, labels or metadata: skip the decoder for those (hot path).
    return type(empty_value)() if raw == empty else json.loads(raw)


class SQLiteStore(SegmentMerges, SourceRecords, RecordQueries):
    """`excerpt.store.base.Store` on SQLite, with the `Segments` role besides; one instance per
    process and home.

    Each thread that uses the store gets its own connection (the service answers requests on a
    thread pool): one connection shared by threads would let a reader see another thread's
    open import transaction, and SQLite's WAL mode gives every connection its own snapshot.
    """

    def __init__(self, home: Path, open_files: int | None = None) -> None:
        """``open_files``: most segment files mapped at once (store/maps.py; default: the
        setting segment_open_files' default)."""
        self.home = Path(home)
        self._local = threading.local()
        self._all: list[sqlite3.Connection] = []
        self._all_lock = threading.Lock()
        self._watch: sqlite3.Connection | None = None  # see _generation
        self._shared: tuple[int, dict[tuple[Any, ...], Any]] = (-1, {})
        self._memo_lock = threading.RLock()  # the watch and the memo; one thread reads a change
        try:
            self.home.mkdir(parents=True, exist_ok=True)
            self.segments_dir.mkdir(exist_ok=True)
            self.applied_now = migrate(self._conn)
            self._generation()  # its connection opened now, before segments take descriptors
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open the store at {self.home}: {exc}") from exc
        self._segments: dict[str, Segment] = {}
        self.maps = OpenMaps() if open_files is None else OpenMaps(open_files)
        self.recover()

    @property
    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = sqlite3.connect(self.home / "excerpt.db", isolation_level=None, timeout=30.0,
                                   check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(f"PRAGMA mmap_size={MMAP_BYTES}")
            conn.execute("PRAGMA foreign_keys=ON")
            self._local.conn = conn
            with self._all_lock:
                self._all.append(conn)
        return conn

    @property
    def segments_dir(self) -> Path:
        return self.home / "segments"

    @property
    def ranking(self) -> OverSegments:
        """The engine ranks over this store's memory-mapped segments (SegmentAccess)."""
        return OverSegments(self)

    # -- transactions and recovery -------------------------------------------------------------

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def recover(self) -> None:
        """Mark runs of dead processes abandoned and remove every segment nobody publishes.
        The folders go while this holds the write lock: an import or a merge moves its
        folder into place inside its own write transaction, so none can be caught between
        its rename and its commit (seen unpublished and removed)."""
        self.remove_replaced()
        with self._transaction() as conn:
            for run_id, pid, started in conn.execute(
                "SELECT id, pid, pid_started FROM import_runs WHERE status = 'running'"
            ).fetchall():
                if abs(process_started(pid) - started) > 1e-3:
                    conn.execute(
                        "UPDATE import_runs SET status='abandoned', finished_at=?, message=? "
                        "WHERE id=?",
                        (now(), "the importing process died before the run completed", run_id),
                    )
            live = {
                row[0]
                for row in conn.execute("SELECT id FROM import_runs WHERE status = 'running'")
            }
            published = {row[0] for row in conn.execute("SELECT segment FROM snapshots")}
            kept = published | self.kept_folders()
            for entry in self.segments_dir.iterdir():
                run_id = self._run_of_dir(entry.name)
                if entry.name in kept or run_id in live:
                    continue
                shutil.rmtree(entry, ignore_errors=True)

    @staticmethod
    def _run_of_dir(name: str) -> int | None:
        for prefix in ("run-", ".staging-"):
            if name.startswith(prefix) and name[len(prefix) :].isdigit():
                return int(name[len(prefix) :])
        return None

    # -- import runs ----------------------------------------------------------------------------

    def begin_run(self, collection: str, source: str, fmt: str) -> int:
        pid = os.getpid()
        with self._transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO collections(name, created_at) VALUES (?, ?)",
                (collection, now()),
            )
            cur = conn.execute(
                "INSERT INTO import_runs(collection, source, format, status, pid, pid_started, "
                "started_at) VALUES (?, ?, ?, 'running', ?, ?, ?)",
                (collection, source, fmt, pid, process_started(pid), now()),
            )
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    def staging_dir(self, run_id: int) -> Path:
        return self.segments_dir / f".staging-{run_id}"

    def publish(self, run_id: int, payload: SnapshotPayload, seconds: float) -> SnapshotInfo:
        """Make the run's snapshot visible: all of it in one transaction, or none of it."""
        snapshot_id = payload.snapshot_id or f"{payload.collection}-r{run_id}"
        segment_name = f"run-{run_id}"
        if self._exists("SELECT 1 FROM snapshots WHERE id = ?", (snapshot_id,)):
            raise InputError(f"snapshot {snapshot_id!r} already exists")
        created = now()
        with self._transaction() as conn:
            conn.execute(
                "INSERT INTO snapshots(id, collection, source, run_id, name, created_at, "
                "documents, nodes, edges, embed_model, segment, content_hash) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    snapshot_id, payload.collection, payload.source, run_id, payload.name,
                    created, len(payload.documents), len(payload.nodes), len(payload.edges),
                    payload.embed_model, segment_name, payload.content_hash,
                ),
            )
            conn.execute("DELETE FROM retired_sources WHERE collection = ? AND source = ?",
                         (payload.collection, payload.source))  # a source that came back
            self._insert_content(conn, snapshot_id, payload)
            conn.execute(
                "UPDATE import_runs SET status='completed', finished_at=?, seconds=?, "
                "documents=?, nodes=?, edges=?, errors=?, snapshot_id=? WHERE id=?",
                (
                    now(), seconds, len(payload.documents), len(payload.nodes),
                    len(payload.edges), json.dumps([e.to_json() for e in payload.errors]),
                    snapshot_id, run_id,
                ),
            )
            # The segment moves into place inside the transaction: a crash before COMMIT
            # leaves a folder no snapshot names, which recover() removes.
            os.replace(payload.segment_dir, self.segments_dir / segment_name)
        return self.snapshot(snapshot_id)

    @staticmethod
    def _insert_content(conn: sqlite3.Connection, snapshot_id: str, p: SnapshotPayload) -> None:
        conn.executemany(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?)",
            (
                (snapshot_id, d.id, d.title, d.source, json.dumps(dict(d.metadata)))
                for d in p.documents
            ),
        )
        conn.executemany(
            "INSERT INTO nodes VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                (
                    snapshot_id, i, n.id, n.document_id, n.text, n.title, n.source, n.start,
                    n.end, json.dumps(list(n.acl_tags)),
                    json.dumps(list(n.classification_labels)),
                    json.dumps(dict(n.metadata), ensure_ascii=False),
                )
                for i, n in enumerate(p.nodes)
            ),
        )
        conn.executemany(
            "INSERT INTO edges VALUES (?, ?, ?, ?, ?)",
            (
                (snapshot_id, e.from_id, e.relation, e.to_id, json.dumps(dict(e.metadata)))
                for e in p.edges
            ),
        )

    def fail_run(
        self, run_id: int, message: str, errors: Sequence[IngestIssue], seconds: float
    ) -> None:
        with self._transaction() as conn:
            conn.execute(
                "UPDATE import_runs SET status='failed', finished_at=?, seconds=?, message=?, "
                "errors=? WHERE id=?",
                (now(), seconds, message, json.dumps([e.to_json() for e in errors]), run_id),
            )
        shutil.rmtree(self.staging_dir(run_id), ignore_errors=True)

    # -- snapshots and sets ---------------------------------------------------------------------

    def _generation(self) -> int:
        """How many commits of other connections one watching connection, shared by the
        store's threads and never writing, has seen: ``PRAGMA data_version`` moves when any
        other connection commits (another process, or any thread of this one, as every
        thread writes on its own connection). Equal twice means nothing was published,
        retired or deleted in between, whichever thread asks. ~5 us, one statement."""
        with self._memo_lock:
            if self._watch is None:
                self._watch = sqlite3.connect(self.home / "excerpt.db", isolation_level=None,
                                              check_same_thread=False)
            return int(self._watch.execute("PRAGMA data_version").fetchone()[0])

    def _memo(self, key: tuple[Any, ...], read: Callable[[], list[_T]]) -> list[_T]:
        """``read()``, kept for every thread until the database changes (:meth:`_generation`):
        every search resolves its view from the catalogue, and the two queries that took were
        7% of a BM25 search on SciFact; a server's threads share what one read (while a
        folder of 10,000 files synced, each thread read the 10,000 latest snapshots again
        after every commit). Read afresh inside a transaction of the caller's, which may
        still be rolled back. A copy is returned (callers may change it)."""
        found: list[_T] | None
        if self._conn.in_transaction:
            found = read()
        else:
            with self._memo_lock:  # held a few us, or while the one thread reads a change
                generation = self._generation()
                if self._shared[0] != generation:
                    self._shared = (generation, {})
                memo = self._shared[1]
                found = memo.get(key)
                if found is None:
                    found = memo[key] = read()
        if isinstance(found, SnapshotList):  # read-only: shared, not copied
            return cast(list[_T], found)
        return list(found)

    def collections(self) -> list[str]:
        return self._memo(("collections",), super().collections)

    def latest_snapshots(self, collection: str) -> list[SnapshotInfo]:
        """The default read view (store/sources.py), kept until the database changes."""
        return self._memo(("latest", collection),
                          lambda: SnapshotList(SourceRecords.latest_snapshots(self, collection)))

    def _select(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._conn.execute(sql, tuple(args)).fetchall())

    def _exists(self, sql: str, args: tuple[Any, ...]) -> bool:
        return self._conn.execute(sql, args).fetchone() is not None

    def create_set(self, collection: str, name: str, snapshot_ids: Sequence[str]) -> None:
        members = set_members(self, collection, name, snapshot_ids)
        with self._transaction() as conn:
            conn.execute(
                "DELETE FROM snapshot_set_members WHERE collection=? AND set_name=?",
                (collection, name),
            )
            conn.execute(
                "INSERT OR REPLACE INTO snapshot_sets VALUES (?, ?, ?)", (collection, name, now())
            )
            conn.executemany(
                "INSERT INTO snapshot_set_members VALUES (?, ?, ?, ?)",
                [(collection, name, i, sid) for i, sid in enumerate(members)],
            )

    def retire_sources(self, collection: str, sources: Sequence[str]) -> None:
        """Take ``sources`` out of the latest view, all in one transaction (sources.py)."""
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO retired_sources VALUES (?, ?, ?)",
                [(collection, source, now()) for source in sources])

    def sync_lock(self, collection: str, wait: bool,
                  on_wait: Callable[[str], None] | None = None
                  ) -> AbstractContextManager[None]:
        path = self.home / "locks" / f"sync-{lock_key(collection)}.lock"
        return file_lock(path, f"a sync of collection {collection!r}", wait, on_wait)

    def delete_snapshots(self, collection: str, snapshot_ids: Sequence[str],
                         drop_collection: bool = False) -> None:
        """Delete snapshots of ``collection`` (and the collection) in one transaction, then
        their segment folders (store/deletion.py)."""
        named = {sid: folder for sid, folder in self._select(
            "SELECT id, segment FROM snapshots WHERE collection = ?", (collection,))}
        with self._transaction() as conn:
            for sql, args in delete_statements(collection, snapshot_ids,
                                               ("edges", "nodes", "documents"), drop_collection):
                conn.execute(sql, args)
        gone_ids = set(snapshot_ids)
        still = {folder for sid, folder in named.items() if sid not in gone_ids}
        # a merged segment other snapshots still hold stays (their rows); its deleted rows
        # are read by no view and dropped by its next merge (store/compaction.py)
        for folder in {named[sid] for sid in snapshot_ids if sid in named} - still:
            gone = self._segments.pop(folder, None)
            if gone is not None:
                gone.close()
            shutil.rmtree(self.segments_dir / folder, ignore_errors=True)

    # -- content --------------------------------------------------------------------------------

    def segment(self, snapshot_id: str) -> Segment:
        """The segment holding the snapshot's rows: its own, or a merged one that holds other
        snapshots' too (``Segment.member_range`` says which rows are its)."""
        folder = self._folders().get(snapshot_id)
        if folder is None:
            raise NotFoundError(f"no snapshot {snapshot_id!r}")
        return self._segment_in(folder, snapshot_id)

    def segments(self, snapshot_ids: Sequence[str]) -> list[Segment]:
        folders = self._folders()
        missing = [sid for sid in snapshot_ids if sid not in folders]
        if missing:
            raise NotFoundError(f"no snapshot {missing[0]!r}")
        return [self._segment_in(folders[sid], sid) for sid in snapshot_ids]

    _NODE_COLUMNS = (
        'id, document_id, text, title, source, start, "end", acl_tags, labels, metadata'
    )

    @staticmethod
    def _node(row: Sequence[Any]) -> Node:
        return Node(
            id=row[0], document_id=row[1], text=row[2], title=row[3], source=row[4],
            start=row[5], end=row[6], acl_tags=tuple(_json(row[7], "[]", [])),
            classification_labels=tuple(_json(row[8], "[]", [])),
            metadata=_json(row[9], "{}", {}),
        )

    def nodes_by_ordinal(self, snapshot_id: str, ordinals: Sequence[int]) -> list[Node]:
        """Nodes in the order of ``ordinals`` (every ordinal must exist)."""
        if not ordinals:
            return []
        marks = ",".join("?" * len(ordinals))
        rows = self._conn.execute(
            f"SELECT ordinal, {self._NODE_COLUMNS} FROM nodes "
            f"WHERE snapshot_id = ? AND ordinal IN ({marks})",
            (snapshot_id, *[int(o) for o in ordinals]),
        ).fetchall()
        by_ordinal = {r[0]: self._node(r[1:]) for r in rows}
        return [by_ordinal[int(o)] for o in ordinals]

    def nodes_at(self, places: Sequence[tuple[str, int]]) -> list[Node]:
        found: dict[tuple[str, int], Node] = {}
        for start in range(0, len(places), PLACES_AT_ONCE):
            batch = places[start:start + PLACES_AT_ONCE]
            # an OR of (snapshot, ordinal) pairs: one index search each (a row-value IN over
            # VALUES scanned the whole table)
            test = " OR ".join(["(snapshot_id = ? AND ordinal = ?)"] * len(batch))
            rows = self._conn.execute(
                f"SELECT snapshot_id, ordinal, {self._NODE_COLUMNS} FROM nodes WHERE {test}",
                [v for sid, o in batch for v in (sid, int(o))]).fetchall()
            found.update({(r[0], r[1]): self._node(r[2:]) for r in rows})
        return [found[(sid, int(o))] for sid, o in places]

    def nodes_by_id(self, snapshot_id: str, ids: Sequence[str]) -> list[Node]:
        """Nodes that exist among ``ids``, in the order asked."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self._conn.execute(
            f"SELECT {self._NODE_COLUMNS} FROM nodes WHERE snapshot_id = ? AND id IN ({marks})",
            (snapshot_id, *ids),
        ).fetchall()
        found = {r[0]: self._node(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def metadata_ordinals(self, snapshot_id: str, key: str, value: Any) -> list[int]:
        """Ordinals whose metadata ``key`` equals ``value`` (a string, number or bool, as
        types.check_where admits) with its JSON type: true is not 1 and "1" is not 1, as in
        PostgreSQL's jsonb equality; or is a list holding such a value (a document's
        ``pages`` [11, 12] matches 12, its ``section_numbers`` ["2", "2.1"] matches "2").
        One CASE on the value's JSON type, so each row is tested for what it holds only: on
        1,751 PDF nodes a scalar filter takes 1.6 ms as equality alone did, a list one 3-7 ms
        (an OR of the two tests took 10 and 16 ms)."""
        path = f'$."{key}"'
        types: tuple[str, ...]
        value_args: tuple[Any, ...]
        if isinstance(value, bool):  # the JSON type says it all
            types = ("true",) if value else ("false",)
            equal, value_args = "", ()
        else:
            types = ("text",) if isinstance(value, str) else ("integer", "real")
            equal, value_args = " AND e.value = ?", (value,)
        listed = ", ".join(f"'{t}'" for t in types)
        whens = " ".join(f"WHEN '{t}' THEN " + ("json_extract(metadata, ?) = ?" if equal else "1")
                         for t in types)
        test = (f"CASE json_type(metadata, ?) WHEN 'array' THEN EXISTS (SELECT 1 FROM json_each("
                f"metadata, ?) AS e WHERE e.type IN ({listed}){equal}) {whens} ELSE 0 END")
        args = [path, path, *value_args, *([path, *value_args] * len(types) if equal else [])]
        rows = self._conn.execute(
            f"SELECT ordinal FROM nodes WHERE snapshot_id = ? AND {test} ORDER BY ordinal",
            (snapshot_id, *args),
        ).fetchall()
        return [r[0] for r in rows]

    def visible_rows(self, snapshot_id: str, principal: Principal) -> npt.NDArray[np.bool_]:
        """From the segment's masks, which every search reads (no row is fetched)."""
        return self.segment(snapshot_id).visible_in(snapshot_id, principal)

    def edges(self, snapshot_id: str) -> list[Edge]:
        rows = self._conn.execute(
            "SELECT from_id, relation, to_id, metadata FROM edges WHERE snapshot_id = ? "
            "ORDER BY rowid",
            (snapshot_id,),
        ).fetchall()
        return [Edge(r[0], r[1], r[2], json.loads(r[3])) for r in rows]

    # -- vector cache ---------------------------------------------------------------------------

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        out: dict[str, npt.NDArray[np.float32]] = {}
        unique = list(dict.fromkeys(hashes))
        for i in range(0, len(unique), 500):
            chunk = unique[i : i + 500]
            marks = ",".join("?" * len(chunk))
            for h, blob in self._conn.execute(
                f"SELECT hash, vector FROM vector_cache WHERE model = ? AND hash IN ({marks})",
                (model, *chunk),
            ):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def put_many(self, model: str, items: Mapping[str, npt.NDArray[np.float32]]) -> None:
        with self._transaction() as conn:
            conn.executemany(
                "INSERT OR IGNORE INTO vector_cache VALUES (?, ?, ?)",
                [
                    (model, h, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                    for h, v in items.items()
                ],
            )

    # -- evaluation runs ------------------------------------------------------------------------

    def save_eval_run(self, record: Mapping[str, Any]) -> int:
        with self._transaction() as conn:
            cur = conn.execute(
                "INSERT INTO eval_runs(created_at, kind, dataset, collection, mode, summary, "
                "data) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (now(), record["kind"], record["dataset"], record["collection"], record["mode"],
                 json.dumps(record["summary"], ensure_ascii=False),
                 json.dumps(record, ensure_ascii=False)))
        assert cur.lastrowid is not None
        return int(cur.lastrowid)

    def record_trace(self, trace: dict[str, Any]) -> None:
        """Nothing: on one machine the files under log_dir are the traces."""

    def close(self) -> None:
        with self._all_lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        with self._memo_lock:
            if self._watch is not None:
                self._watch.close()
                self._watch = None
            self._shared = (-1, {})
        self._local = threading.local()
        self.maps.close()  # the segments' open files; a later read maps them again

