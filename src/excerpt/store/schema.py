"""SQLite schema as named migrations, applied in order and recorded in `migrations`."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_initial",
        """
        CREATE TABLE collections (
            name TEXT PRIMARY KEY,
            created_at TEXT NOT NULL
        );
        CREATE TABLE import_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            collection TEXT NOT NULL,
            source TEXT NOT NULL,
            format TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('running','completed','failed','abandoned')),
            pid INTEGER NOT NULL,
            pid_started REAL NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT,
            seconds REAL,
            documents INTEGER NOT NULL DEFAULT 0,
            nodes INTEGER NOT NULL DEFAULT 0,
            edges INTEGER NOT NULL DEFAULT 0,
            errors TEXT NOT NULL DEFAULT '[]',
            message TEXT,
            snapshot_id TEXT
        );
        CREATE TABLE snapshots (
            id TEXT PRIMARY KEY,
            collection TEXT NOT NULL REFERENCES collections(name),
            source TEXT NOT NULL,
            run_id INTEGER NOT NULL REFERENCES import_runs(id),
            name TEXT,
            created_at TEXT NOT NULL,
            status TEXT NOT NULL DEFAULT 'completed',
            documents INTEGER NOT NULL,
            nodes INTEGER NOT NULL,
            edges INTEGER NOT NULL,
            embed_model TEXT,
            segment TEXT NOT NULL
        );
        CREATE INDEX snapshots_by_source ON snapshots(collection, source, run_id);
        CREATE TABLE snapshot_sets (
            collection TEXT NOT NULL,
            name TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (collection, name)
        );
        CREATE TABLE snapshot_set_members (
            collection TEXT NOT NULL,
            set_name TEXT NOT NULL,
            position INTEGER NOT NULL,
            snapshot_id TEXT NOT NULL REFERENCES snapshots(id),
            PRIMARY KEY (collection, set_name, position)
        );
        CREATE TABLE documents (
            snapshot_id TEXT NOT NULL,
            id TEXT NOT NULL,
            title TEXT NOT NULL,
            source TEXT NOT NULL,
            metadata TEXT NOT NULL,
            PRIMARY KEY (snapshot_id, id)
        );
        CREATE TABLE nodes (
            snapshot_id TEXT NOT NULL,
            ordinal INTEGER NOT NULL,
            id TEXT NOT NULL,
            document_id TEXT NOT NULL,
            text TEXT NOT NULL,
            title TEXT NOT NULL,
            source TEXT NOT NULL,
            start INTEGER NOT NULL,
            "end" INTEGER NOT NULL,
            acl_tags TEXT NOT NULL,
            labels TEXT NOT NULL,
            metadata TEXT NOT NULL,
            PRIMARY KEY (snapshot_id, ordinal)
        );
        CREATE UNIQUE INDEX nodes_by_id ON nodes(snapshot_id, id);
        CREATE TABLE edges (
            snapshot_id TEXT NOT NULL,
            from_id TEXT NOT NULL,
            relation TEXT NOT NULL,
            to_id TEXT NOT NULL,
            metadata TEXT NOT NULL
        );
        CREATE INDEX edges_by_from ON edges(snapshot_id, from_id);
        CREATE INDEX edges_by_to ON edges(snapshot_id, to_id);
        CREATE TABLE vector_cache (
            model TEXT NOT NULL,
            hash TEXT NOT NULL,
            vector BLOB NOT NULL,
            PRIMARY KEY (model, hash)
        ) WITHOUT ROWID;
        """,
    ),
    (
        "002_eval_runs",
        """
        CREATE TABLE eval_runs (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            created_at TEXT NOT NULL,
            kind TEXT NOT NULL,
            dataset TEXT NOT NULL,
            collection TEXT NOT NULL,
            mode TEXT NOT NULL,
            summary TEXT NOT NULL,
            data TEXT NOT NULL
        );
        """,
    ),
    (
        "003_sync_sources",
        # excerpt sync (issue 19): a snapshot records the content hash it was built from, so an
        # unchanged file or import costs one comparison; a source whose file was deleted is
        # retired (out of the latest view, its snapshots kept) until a new snapshot of it.
        """
        ALTER TABLE snapshots ADD COLUMN content_hash TEXT;
        CREATE TABLE retired_sources (
            collection TEXT NOT NULL,
            source TEXT NOT NULL,
            retired_at TEXT NOT NULL,
            PRIMARY KEY (collection, source)
        );
        """,
    ),
    (
        "004_segment_merges",
        # segments that merge (issue 30): a merge moves snapshots' rows into one segment and
        # records the folders it replaced, removed once no reader can still be in them.
        """
        CREATE TABLE segment_merges (
            id INTEGER PRIMARY KEY,
            collection TEXT NOT NULL,
            segment TEXT NOT NULL,
            replaced TEXT NOT NULL,
            snapshots INTEGER NOT NULL,
            merged_at TEXT NOT NULL,
            removed INTEGER NOT NULL DEFAULT 0
        );
        """,
    ),
]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def migrate(conn: sqlite3.Connection) -> list[str]:
    """Apply missing migrations (the names applied now); ``conn`` is in autocommit mode
    (isolation_level=None)."""
    conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at TEXT)")
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied: list[str] = []
    for name, sql in MIGRATIONS:
        if name in done:
            continue
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in sql.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO migrations VALUES (?, ?)", (name, now()))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        applied.append(name)
    return applied
