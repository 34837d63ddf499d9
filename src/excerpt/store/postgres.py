"""The PostgreSQL + pgvector backend of the store protocol (store/base.py), for when one
machine's embedded store is not enough. It plays every role of ``Store`` and ranks in SQL
(``ranking``: retrieve/sql.py), so it keeps no segment files and has no ``Segments`` role.

    store = PostgresStore("postgresql://user@host:5432/excerpt", scratch=Path(".excerpt"))

Connections come from a pool (psycopg_pool). An import run builds its segment arrays in a local
scratch folder, as the embedded store does, and ``publish`` copies everything (snapshot, nodes
with security arrays, lengths and embeddings, postings, edges, the run's completion) in one
transaction: nothing partial is ever visible. A running import holds a session advisory lock
on its run id; a run left ``running`` whose lock is free belongs to a dead process and is
marked ``abandoned`` when a store is next opened, as the embedded store does with pids.
Errors are excerpt's: an unreachable server or a missing pgvector is a StoreError saying so.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.errors import BusyError, DependencyError, InputError, StoreError
from excerpt.store._records import RecordQueries
from excerpt.store.ann import AnnConfig
from excerpt.store.base import InSql, SnapshotInfo, SnapshotPayload, set_members
from excerpt.store.deletion import delete_statements
from excerpt.store.locks import lock_key
from excerpt.store.pg_hnsw import HnswConfig, ensure_indexes
from excerpt.store.pg_where import metadata_test
from excerpt.store.segment import Segment
from excerpt.store.sources import SourceRecords
from excerpt.types import Edge, IngestIssue, Node, Principal

RUN_LOCK = 7_316_002  # first key of the advisory lock an import run holds: (RUN_LOCK, run_id)
SYNC_LOCK = 7_316_003  # first key of a sync's lock on its collection: (SYNC_LOCK, digest)


def _iso(column: str) -> str:
    """A timestamptz column as the ISO text SQLite stores (UTC, milliseconds)."""
    return (f"to_char({column} AT TIME ZONE 'UTC', "
            "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+00:00\"')")


_NODE_COLUMNS = 'id, document_id, text, title, source, start, "end", acl_tags, labels, metadata'


def _psycopg() -> Any:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise DependencyError("the PostgreSQL store needs psycopg: pip install "
                              "'psycopg[binary]==3.3.9' psycopg-pool==3.3.3") from None
    return psycopg, psycopg_pool


class PostgresStore(SourceRecords, RecordQueries):
    """The store protocol on PostgreSQL; ``scratch`` is a local folder for runs being built;
    ``dense_index`` (store/pg_hnsw.py) makes semantic search walk an HNSW index, built when
    the store opens and after each import, instead of scanning every vector (None: exact)."""

    def __init__(self, url: str, scratch: Path, max_connections: int = 10,
                 dense_index: HnswConfig | None = None) -> None:
        psycopg, pool = _psycopg()
        self.url, self.scratch, self.dense_index = url, scratch, dense_index
        self._errors = psycopg.Error
        try:  # one plain connection first: a refused or unknown server fails fast and clearly
            with psycopg.connect(url, autocommit=True, connect_timeout=10) as conn:
                self._check_pgvector(conn)
                from excerpt.store.pg_schema import migrate

                self.applied_now = migrate(conn)
                if dense_index is not None:
                    self._build_indexes(conn)
        except psycopg.Error as exc:
            reason = " ".join(str(exc).split())
            raise StoreError(f"cannot reach PostgreSQL at {_safe(url)}: {reason} (is the server "
                             "running? `excerpt pg start --dir DIR` starts a local one)") from None
        self._pool = pool.ConnectionPool(url, min_size=1, max_size=max_connections,
                                         kwargs={"autocommit": True}, open=True, timeout=30,
                                         configure=_binary_lists)
        self._run_locks: dict[int, Any] = {}
        self.recover()

    # -- connections ----------------------------------------------------------------------------

    @contextmanager
    def _conn(self) -> Iterator[Any]:
        try:
            with self._pool.connection() as conn:
                yield conn
        except self._errors as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    def _build_indexes(self, conn: Any) -> None:
        """The HNSW index of each dimension (store/pg_hnsw.py); a failure says so, not that
        the server is unreachable."""
        assert self.dense_index is not None
        try:
            ensure_indexes(conn, self.dense_index)
        except self._errors as exc:
            reason = " ".join(str(exc).split())
            raise StoreError(f"building the HNSW index of node_vectors failed: {reason} "
                             "(pg_dense_index: exact searches without it)") from None

    def _check_pgvector(self, conn: Any) -> None:
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
                        ).fetchone() is None:
            raise StoreError(f"the server at {_safe(self.url)} has no pgvector extension: "
                             "install pgvector 0.8 there (CREATE EXTENSION vector)")

    @property
    def ranking(self) -> InSql:
        """PostgreSQL ranks (retrieve/sql.py), on this store's pooled connections, walking
        the HNSW index when ``dense_index`` is set."""
        return InSql(self.query, self if self.dense_index is not None else None)

    RUN_COLUMNS = RecordQueries.RUN_COLUMNS.replace(
        "started_at, finished_at", f"{_iso('started_at')}, {_iso('finished_at')}")
    SNAPSHOT_COLUMNS = RecordQueries.SNAPSHOT_COLUMNS.replace("created_at", _iso("created_at"))
    CREATED_AT = _iso("created_at")
    PRINCIPAL = "data -> 'principal'"

    @contextmanager
    def transaction(self) -> Iterator[Any]:
        """A pooled connection inside one transaction (committed when the block ends)."""
        with self._conn() as conn, conn.transaction():
            yield conn

    def _select(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.query(sql.replace("?", "%s"), args)  # the shared reads use ? placeholders

    def query(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of one statement on a pooled connection (excerpt's errors, not psycopg's)."""
        with self._conn() as conn:
            return list(conn.execute(sql, args).fetchall())

    def query_with(self, settings: Sequence[str], sql: str,
                   args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of ``sql`` after ``settings`` (``SET LOCAL`` statements), in one transaction
        so the settings end with it and never leak to the pooled connection's next user."""
        with self.transaction() as conn:
            for statement in settings:
                conn.execute(statement)
            return list(conn.execute(sql, args).fetchall())

    # -- import runs ----------------------------------------------------------------------------

    def recover(self) -> None:
        """Mark runs whose importing process is gone (its advisory lock is free) abandoned."""
        with self._conn() as conn:
            for (run_id,) in conn.execute(
                    "SELECT id FROM import_runs WHERE status = 'running'").fetchall():
                if run_id in self._run_locks:
                    continue
                if conn.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                (RUN_LOCK, run_id)).fetchone()[0]:
                    conn.execute("UPDATE import_runs SET status = 'abandoned', finished_at = "
                                 "now(), message = %s WHERE id = %s AND status = 'running'",
                                 ("the importing process died before the run completed",
                                  run_id))
                    conn.execute("SELECT pg_advisory_unlock(%s, %s)", (RUN_LOCK, run_id))

    def begin_run(self, collection: str, source: str, fmt: str) -> int:
        psycopg, _ = _psycopg()
        with self._conn() as conn, conn.transaction():
            conn.execute("INSERT INTO collections(name) VALUES (%s) ON CONFLICT DO NOTHING",
                         (collection,))
            run_id = int(conn.execute(
                "INSERT INTO import_runs(collection, source, format, status) "
                "VALUES (%s, %s, %s, 'running') RETURNING id", (collection, source, fmt)
            ).fetchone()[0])
        lock = psycopg.connect(self.url, autocommit=True)  # held for the run's lifetime
        lock.execute("SELECT pg_advisory_lock(%s, %s)", (RUN_LOCK, run_id))
        self._run_locks[run_id] = lock
        return run_id

    def _end_run(self, run_id: int) -> None:
        lock = self._run_locks.pop(run_id, None)
        if lock is not None:
            lock.close()  # the session lock goes with the session
        shutil.rmtree(self.staging_dir(run_id), ignore_errors=True)

    def staging_dir(self, run_id: int) -> Path:
        return self.scratch / "pg-staging" / f"run-{run_id}"

    def merge(self, collection: str, ann: AnnConfig | None = None,
              progress: Callable[[str, int, int], None] | None = None,
              factor: int = 10, tidy: bool = True) -> int:
        """Nothing to merge: PostgreSQL keeps a collection's rows in its tables, whatever the
        number of snapshots (its per-source costs: bench/many_sources.py)."""
        return 0

    @contextmanager
    def sync_lock(self, collection: str, wait: bool,
                  on_wait: Callable[[str], None] | None = None) -> Iterator[None]:
        """A session advisory lock on (SYNC_LOCK, the collection's digest), on a connection
        of its own: every machine syncing into this database sees it, and the server drops
        it when the holder's session ends, killed or not (store/locks.py)."""
        psycopg, _ = _psycopg()
        key = int(lock_key(collection)[:7], 16)  # fits the lock's int4 second key
        what = f"a sync of collection {collection!r}"
        try:
            conn = psycopg.connect(self.url, autocommit=True)
        except self._errors as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc
        try:
            if not conn.execute("SELECT pg_try_advisory_lock(%s, %s)",
                                (SYNC_LOCK, key)).fetchone()[0]:
                holder = self._lock_holder(conn, key)
                if not wait:
                    raise BusyError(f"{what} is already running ({holder}); try again when "
                                    "it ends")
                if on_wait is not None:
                    on_wait(f"waiting for {what} to end ({holder})")
                conn.execute("SELECT pg_advisory_lock(%s, %s)", (SYNC_LOCK, key))
            yield
        finally:
            conn.close()  # the session lock goes with the session

    @staticmethod
    def _lock_holder(conn: Any, key: int) -> str:
        row = conn.execute(
            "SELECT a.pid, coalesce(host(a.client_addr), 'local'), "
            f"{_iso('a.backend_start')} FROM pg_locks l JOIN pg_stat_activity a "
            "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.classid = %s "
            "AND l.objid = %s AND l.granted", (SYNC_LOCK, key)).fetchone()
        if row is None:
            return "another session"
        return f"PostgreSQL session {row[0]} from {row[1]}, since {row[2]}"

    def publish(self, run_id: int, payload: SnapshotPayload, seconds: float) -> SnapshotInfo:
        """Make the run's snapshot visible: all of it in one transaction, or none of it."""
        snapshot_id = payload.snapshot_id or f"{payload.collection}-r{run_id}"
        segment = Segment(payload.segment_dir, snapshot_id)
        try:
            with self._conn() as conn, conn.transaction():
                if conn.execute("SELECT 1 FROM snapshots WHERE id = %s",
                                (snapshot_id,)).fetchone():
                    raise InputError(f"snapshot {snapshot_id!r} already exists")
                conn.execute(
                    "INSERT INTO snapshots(id, collection, source, run_id, name, documents, "
                    "nodes, edges, embed_model, meta, content_hash) VALUES (%s, %s, %s, %s, "
                    "%s, %s, %s, %s, %s, %s, %s)",
                    (snapshot_id, payload.collection, payload.source, run_id, payload.name,
                     len(payload.documents), len(payload.nodes), len(payload.edges),
                     payload.embed_model, json.dumps(segment.meta), payload.content_hash))
                conn.execute("DELETE FROM retired_sources WHERE collection = %s AND "
                             "source = %s", (payload.collection, payload.source))
                _copy_content(conn, snapshot_id, payload, segment)
                conn.execute(
                    "UPDATE import_runs SET status = 'completed', finished_at = now(), "
                    "seconds = %s, documents = %s, nodes = %s, edges = %s, errors = %s, "
                    "snapshot_id = %s WHERE id = %s",
                    (seconds, len(payload.documents), len(payload.nodes), len(payload.edges),
                     json.dumps([e.to_json() for e in payload.errors]), snapshot_id, run_id))
        finally:
            segment.close()  # its maps (store/maps.py) would keep the staging files open
            self._end_run(run_id)
        self._tidy(len(payload.nodes))
        return self.snapshot(snapshot_id)

    def _tidy(self, published: int) -> None:
        """The visibility map for index-only scans, for the rows just published (VACUUM skips
        pages already all-visible, so this grows with the import, not with the database), and
        the planner's statistics of the tables where the rows changed since they were last
        counted are a tenth of them or more, as autovacuum's default rule says, or of all
        three when the ``published`` nodes are a tenth of the nodes (the server's count of
        changes can lag by a second). ANALYZE samples 30,000 rows a table whatever the
        import: it was 65 of the 78 ms each file of a folder synced file by file cost."""
        with self._conn() as conn:
            conn.execute("VACUUM nodes, node_vectors, postings")
            stale = [name for name, in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_stat_user_tables s ON s.relid = c.oid "
                "WHERE c.oid IN ('nodes'::regclass, 'node_vectors'::regclass, "
                "'postings'::regclass) AND (c.reltuples < 0 OR s.n_mod_since_analyze >= 0.1 * "
                "c.reltuples OR %s >= 0.1 * (SELECT reltuples FROM pg_class WHERE oid = "
                "'nodes'::regclass))", (published,)).fetchall()]
            if stale:
                conn.execute(f"ANALYZE {', '.join(sorted(stale))}")
            if self.dense_index is not None:  # a new model's dimension gets its index
                self._build_indexes(conn)

    def fail_run(self, run_id: int, message: str, errors: Sequence[IngestIssue],
                 seconds: float) -> None:
        try:
            with self._conn() as conn:
                conn.execute(
                    "UPDATE import_runs SET status = 'failed', finished_at = now(), seconds = %s,"
                    " message = %s, errors = %s WHERE id = %s",
                    (seconds, message, json.dumps([e.to_json() for e in errors]), run_id))
        finally:
            self._end_run(run_id)

    # -- snapshots and sets ---------------------------------------------------------------------

    def create_set(self, collection: str, name: str, snapshot_ids: Sequence[str]) -> None:
        members = set_members(self, collection, name, snapshot_ids)
        with self._conn() as conn, conn.transaction():
            conn.execute("DELETE FROM snapshot_set_members WHERE collection = %s AND "
                         "set_name = %s", (collection, name))
            conn.execute("INSERT INTO snapshot_sets(collection, name) VALUES (%s, %s) "
                         "ON CONFLICT DO NOTHING", (collection, name))
            with conn.cursor() as cur:
                cur.executemany("INSERT INTO snapshot_set_members VALUES (%s, %s, %s, %s)",
                                [(collection, name, i, sid)
                                 for i, sid in enumerate(members)])

    def retire_sources(self, collection: str, sources: Sequence[str]) -> None:
        """Take ``sources`` out of the latest view, all in one transaction (sources.py)."""
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany("INSERT INTO retired_sources(collection, source) VALUES (%s, %s) "
                            "ON CONFLICT DO NOTHING", [(collection, s) for s in sources])

    def delete_snapshots(self, collection: str, snapshot_ids: Sequence[str],
                         drop_collection: bool = False) -> None:
        """Delete snapshots of ``collection`` (and the collection) in one transaction
        (store/deletion.py)."""
        tables = ("node_vectors", "postings", "edges", "nodes", "documents")
        with self._conn() as conn, conn.transaction():
            for sql, args in delete_statements(collection, snapshot_ids, tables,
                                               drop_collection):
                conn.execute(sql.replace("?", "%s"), args)

    # -- content --------------------------------------------------------------------------------

    @staticmethod
    def _node(row: Sequence[Any]) -> Node:
        return Node(id=row[0], document_id=row[1], text=row[2], title=row[3], source=row[4],
                    start=row[5], end=row[6], acl_tags=tuple(row[7]),
                    classification_labels=tuple(row[8]), metadata=row[9])

    def nodes_by_ordinal(self, snapshot_id: str, ordinals: Sequence[int]) -> list[Node]:
        """Nodes in the order of ``ordinals`` (every ordinal must exist)."""
        if not ordinals:
            return []
        rows = self.query(f"SELECT ordinal, {_NODE_COLUMNS} FROM nodes WHERE snapshot_id = %s "
                          "AND ordinal = ANY(%s)", (snapshot_id, [int(o) for o in ordinals]))
        by_ordinal = {r[0]: self._node(r[1:]) for r in rows}
        return [by_ordinal[int(o)] for o in ordinals]

    def nodes_at(self, places: Sequence[tuple[str, int]]) -> list[Node]:
        if not places:
            return []
        rows = self.query(
            f"SELECT snapshot_id, ordinal, {_NODE_COLUMNS} FROM nodes WHERE (snapshot_id, "
            "ordinal) IN (SELECT * FROM unnest(%s::text[], %s::int[]))",
            ([sid for sid, _ in places], [int(o) for _, o in places]))
        found = {(r[0], r[1]): self._node(r[2:]) for r in rows}
        return [found[(sid, int(o))] for sid, o in places]

    def nodes_by_id(self, snapshot_id: str, ids: Sequence[str]) -> list[Node]:
        """Nodes that exist among ``ids``, in the order asked."""
        if not ids:
            return []
        rows = self.query(f"SELECT {_NODE_COLUMNS} FROM nodes WHERE snapshot_id = %s "
                          "AND id = ANY(%s)", (snapshot_id, list(ids)))
        found = {r[0]: self._node(r) for r in rows}
        return [found[i] for i in ids if i in found]

    def metadata_ordinals(self, snapshot_id: str, key: str, value: Any) -> list[int]:
        """Ordinals whose metadata ``key`` equals ``value`` or is a list holding it
        (:mod:`excerpt.store.pg_where`, as SQLiteStore.metadata_ordinals)."""
        test, args = metadata_test("metadata", key, value)
        rows = self.query(f"SELECT ordinal FROM nodes WHERE snapshot_id = %s AND {test} "
                          "ORDER BY ordinal", (snapshot_id, *args))
        return [r[0] for r in rows]

    def visible_rows(self, snapshot_id: str, principal: Principal) -> npt.NDArray[np.bool_]:
        """Each node's tags and labels under the one visibility rule (``Principal.can_see``),
        in ordinal order (NotFoundError for an unknown snapshot, as the embedded store)."""
        rows = self.query("SELECT acl_tags, labels FROM nodes WHERE snapshot_id = %s "
                          "ORDER BY ordinal", (snapshot_id,))
        if not rows:
            self.snapshot(snapshot_id)  # raises for an unknown snapshot; else it has no node
        return np.array([principal.can_see(tuple(tags), tuple(labels)) for tags, labels in rows],
                        dtype=bool)

    def edges(self, snapshot_id: str) -> list[Edge]:
        rows = self.query("SELECT from_id, relation, to_id, metadata FROM edges WHERE "
                          "snapshot_id = %s ORDER BY position", (snapshot_id,))
        return [Edge(r[0], r[1], r[2], r[3]) for r in rows]

    # -- vector cache ---------------------------------------------------------------------------

    def get_many(self, model: str, hashes: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        rows = self.query("SELECT hash, vector FROM vector_cache WHERE model = %s AND "
                          "hash = ANY(%s)", (model, list(dict.fromkeys(hashes))))
        return {h: np.frombuffer(blob, dtype=np.float32) for h, blob in rows}

    def put_many(self, model: str, items: Mapping[str, npt.NDArray[np.float32]]) -> None:
        with self._conn() as conn, conn.transaction(), conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO vector_cache VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                [(model, h, np.ascontiguousarray(v, dtype=np.float32).tobytes())
                 for h, v in items.items()])

    def record_trace(self, trace: dict[str, Any]) -> None:
        """Keep a pipeline trace (search, graph, context) in the ``traces`` table."""
        with self._conn() as conn:
            conn.execute("INSERT INTO traces(kind, trace) VALUES (%s, %s)",
                         (trace.get("kind", ""), json.dumps(trace, ensure_ascii=False)))

    def traces(self, limit: int = 100) -> list[dict[str, Any]]:
        """The latest ``limit`` traces, newest first."""
        return [r[0] for r in self.query("SELECT trace FROM traces ORDER BY id DESC LIMIT %s",
                                         (limit,))]

    # -- evaluation runs ------------------------------------------------------------------------

    def save_eval_run(self, record: Mapping[str, Any]) -> int:
        with self._conn() as conn:
            return int(conn.execute(
                "INSERT INTO eval_runs(kind, dataset, collection, mode, summary, data) VALUES "
                "(%s, %s, %s, %s, %s, %s) RETURNING id",
                (record["kind"], record["dataset"], record["collection"], record["mode"],
                 json.dumps(record["summary"], ensure_ascii=False),
                 json.dumps(record, ensure_ascii=False))).fetchone()[0])

    def close(self) -> None:
        for run_id in list(self._run_locks):
            self._run_locks.pop(run_id).close()
        self._pool.close()


def _copy_content(conn: Any, snapshot_id: str, p: SnapshotPayload, segment: Segment) -> None:
    """COPY the snapshot's documents, nodes (with lengths and vectors), postings and edges."""
    vectors = segment.vectors
    with conn.cursor() as cur:
        with cur.copy("COPY documents FROM STDIN") as copy:
            for d in p.documents:
                copy.write_row((snapshot_id, d.id, d.title, d.source,
                                json.dumps(dict(d.metadata), ensure_ascii=False)))
        with cur.copy("COPY nodes FROM STDIN") as copy:
            for i, n in enumerate(p.nodes):
                copy.write_row((snapshot_id, i, n.id, n.document_id, n.text, n.title, n.source,
                                n.start, n.end, list(n.acl_tags), list(n.classification_labels),
                                json.dumps(dict(n.metadata), ensure_ascii=False),
                                float(segment.doc_len[i])))
        if vectors is not None:
            with cur.copy("COPY node_vectors FROM STDIN") as copy:
                for i in range(len(p.nodes)):
                    copy.write_row((snapshot_id, i, vector_text(vectors[i])))
        lengths = segment.doc_len.tolist()
        with cur.copy("COPY postings (snapshot_id, term, ordinal, tf, doc_len) FROM STDIN"
                      ) as copy:
            for term in segment.term_ids:
                found = segment.postings(term)
                assert found is not None
                for ordinal, tf in zip(found.docs.tolist(), found.tf.tolist(), strict=True):
                    copy.write_row((snapshot_id, term, ordinal, tf, lengths[ordinal]))
        with cur.copy("COPY edges FROM STDIN") as copy:
            for i, e in enumerate(p.edges):
                copy.write_row((snapshot_id, i, e.from_id, e.relation, e.to_id,
                                json.dumps(dict(e.metadata), ensure_ascii=False)))


def vector_text(vector: npt.NDArray[np.float32]) -> str:
    """pgvector's text form; 9 significant digits give back the same float32 values."""
    return "[" + ",".join(f"{x:.9g}" for x in np.asarray(vector, np.float32).tolist()) + "]"


def _safe(url: str) -> str:
    """The URL without its password, for messages."""
    head, sep, tail = url.partition("@")
    if not sep or ":" not in head.split("//", 1)[-1]:
        return url
    scheme, _, user = head.partition("//")
    return f"{scheme}//{user.split(':', 1)[0]}:***@{tail}"


def _binary_lists(conn: Any) -> None:
    """Lists go to the server in binary: a view's snapshot ids are sent with most reads (1,000
    of them for a folder of 1,000 synced files, several times a query), and psycopg's text
    form quotes each element through a regular expression (three lists of 1,000 ids took
    3.9 ms to send, 0.9 ms in binary)."""
    from psycopg.types.array import ListBinaryDumper

    conn.adapters.register_dumper(list, ListBinaryDumper)
