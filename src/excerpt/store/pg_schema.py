"""PostgreSQL schema as named migrations, applied in order and recorded in `migrations`.

The tables mirror the embedded store's (store/schema.py) one to one; what a segment file holds
there is rows here: ``postings`` (term frequencies per node, for BM25 scored in SQL), the
nodes' ``doc_len`` and ``embedding`` (pgvector), and security fields as arrays
(``acl_tags && caller_tags``, ``labels <@ clearances``) so filters are SQL predicates applied
before ranking. Metadata is ``json``, not ``jsonb``: it keeps the key order the loader gave, so
both backends print the same JSON. A migration runs in one transaction under an advisory lock,
so two processes migrating at once apply each migration once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

MIGRATION_LOCK = 7_316_001  # pg_advisory_xact_lock key: one migrator at a time

MIGRATIONS: list[tuple[str, str]] = [
    (
        "001_initial",
        """
        CREATE EXTENSION IF NOT EXISTS vector;
        CREATE TABLE collections (
            name text PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE TABLE import_runs (
            id bigserial PRIMARY KEY,
            collection text NOT NULL,
            source text NOT NULL,
            format text NOT NULL,
            status text NOT NULL
                CHECK (status IN ('running', 'completed', 'failed', 'abandoned')),
            started_at timestamptz NOT NULL DEFAULT now(),
            finished_at timestamptz,
            seconds double precision,
            documents integer NOT NULL DEFAULT 0,
            nodes integer NOT NULL DEFAULT 0,
            edges integer NOT NULL DEFAULT 0,
            errors jsonb NOT NULL DEFAULT '[]',
            message text,
            snapshot_id text
        );
        CREATE TABLE snapshots (
            id text PRIMARY KEY,
            collection text NOT NULL REFERENCES collections(name),
            source text NOT NULL,
            run_id bigint NOT NULL REFERENCES import_runs(id),
            name text,
            created_at timestamptz NOT NULL DEFAULT now(),
            status text NOT NULL DEFAULT 'completed',
            documents integer NOT NULL,
            nodes integer NOT NULL,
            edges integer NOT NULL,
            embed_model text,
            meta jsonb NOT NULL DEFAULT '{}'
        );
        CREATE INDEX snapshots_by_source ON snapshots(collection, source, run_id);
        CREATE TABLE snapshot_sets (
            collection text NOT NULL,
            name text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (collection, name)
        );
        CREATE TABLE snapshot_set_members (
            collection text NOT NULL,
            set_name text NOT NULL,
            position integer NOT NULL,
            snapshot_id text NOT NULL REFERENCES snapshots(id),
            PRIMARY KEY (collection, set_name, position),
            FOREIGN KEY (collection, set_name) REFERENCES snapshot_sets(collection, name)
        );
        CREATE TABLE documents (
            snapshot_id text NOT NULL REFERENCES snapshots(id),
            id text NOT NULL,
            title text NOT NULL,
            source text NOT NULL,
            metadata json NOT NULL,
            PRIMARY KEY (snapshot_id, id)
        );
        CREATE TABLE nodes (
            snapshot_id text NOT NULL REFERENCES snapshots(id),
            ordinal integer NOT NULL,
            id text NOT NULL,
            document_id text NOT NULL,
            text text NOT NULL,
            title text NOT NULL,
            source text NOT NULL,
            start integer NOT NULL,
            "end" integer NOT NULL,
            acl_tags text[] NOT NULL,
            labels text[] NOT NULL,
            metadata json NOT NULL,
            doc_len real NOT NULL,
            embedding vector,
            PRIMARY KEY (snapshot_id, ordinal),
            UNIQUE (snapshot_id, id)
        );
        CREATE TABLE postings (
            snapshot_id text NOT NULL REFERENCES snapshots(id),
            term text NOT NULL,
            ordinal integer NOT NULL,
            tf real NOT NULL,
            PRIMARY KEY (snapshot_id, term, ordinal)
        );
        CREATE TABLE edges (
            snapshot_id text NOT NULL REFERENCES snapshots(id),
            position integer NOT NULL,
            from_id text NOT NULL,
            relation text NOT NULL,
            to_id text NOT NULL,
            metadata json NOT NULL,
            PRIMARY KEY (snapshot_id, position)
        );
        CREATE INDEX edges_by_from ON edges(snapshot_id, from_id);
        CREATE TABLE vector_cache (
            model text NOT NULL,
            hash text NOT NULL,
            vector bytea NOT NULL,
            PRIMARY KEY (model, hash)
        );
        """,
    ),
    (
        "002_memory",
        """
        CREATE TABLE conversations (
            name text PRIMARY KEY,
            buffer_size integer NOT NULL,
            max_tokens integer NOT NULL,
            summary_token_limit integer NOT NULL,
            next_index integer NOT NULL,
            evicted integer NOT NULL,
            summary text NOT NULL,
            deleted integer NOT NULL
        );
        CREATE TABLE utterances (
            conversation text NOT NULL,
            utterance_index integer NOT NULL,
            speaker text NOT NULL,
            turn_number integer NOT NULL,
            timestamp text NOT NULL,
            text text NOT NULL,
            tokens integer NOT NULL,
            PRIMARY KEY (conversation, utterance_index)
        );
        """,
    ),
    (
        "003_ranking_layout",
        # Measured on SciFact: the embedding inside the wide nodes row was stored out of line
        # (pgvector's default storage), so an exact scan detoasted every vector (37 ms for
        # 5,183 rows); and every BM25 posting fetched its node's heap row for doc_len and the
        # security arrays (~5,000 probes a query). Vectors move to a narrow table stored
        # inline; postings carry their node's length, so BM25 reads no node row and security
        # becomes an anti-join with the view's hidden nodes; an index covers what ranking
        # reads of a node (index-only scans).
        """
        CREATE TABLE node_vectors (
            snapshot_id text NOT NULL,
            ordinal integer NOT NULL,
            embedding vector NOT NULL,
            PRIMARY KEY (snapshot_id, ordinal),
            FOREIGN KEY (snapshot_id, ordinal) REFERENCES nodes(snapshot_id, ordinal)
        );
        ALTER TABLE node_vectors ALTER COLUMN embedding SET STORAGE PLAIN;
        INSERT INTO node_vectors
            SELECT snapshot_id, ordinal, embedding FROM nodes WHERE embedding IS NOT NULL;
        ALTER TABLE nodes DROP COLUMN embedding;
        CREATE UNIQUE INDEX nodes_rank ON nodes (snapshot_id, ordinal)
            INCLUDE (id, doc_len, acl_tags, labels);
        ALTER TABLE postings ADD COLUMN doc_len real;
        UPDATE postings p SET doc_len = n.doc_len FROM nodes n
            WHERE n.snapshot_id = p.snapshot_id AND n.ordinal = p.ordinal;
        ALTER TABLE postings ALTER COLUMN doc_len SET NOT NULL;
        """,
    ),
    (
        "004_traces",
        """
        CREATE TABLE traces (
            id bigserial PRIMARY KEY,
            kind text NOT NULL,
            created_at timestamptz NOT NULL DEFAULT now(),
            trace jsonb NOT NULL
        );
        CREATE INDEX traces_by_time ON traces (created_at);
        """,
    ),
    (
        "005_eval_runs",
        """
        CREATE TABLE eval_runs (
            id bigserial PRIMARY KEY,
            created_at timestamptz NOT NULL DEFAULT now(),
            kind text NOT NULL,
            dataset text NOT NULL,
            collection text NOT NULL,
            mode text NOT NULL,
            summary json NOT NULL,
            data json NOT NULL
        );
        """,
    ),
    (
        "006_sync_sources",
        # as the embedded store's 003_sync_sources: content hashes and retired sources
        """
        ALTER TABLE snapshots ADD COLUMN content_hash text;
        CREATE TABLE retired_sources (
            collection text NOT NULL,
            source text NOT NULL,
            retired_at timestamptz NOT NULL DEFAULT now(),
            PRIMARY KEY (collection, source)
        );
        """,
    ),
    (
        "007_postings_by_term",
        # A view of many snapshots (a folder synced file by file) reads each query term's
        # postings in one range of this index, filtered by the view's snapshot ids, where the
        # primary key (snapshot first) took one descent per snapshot and term: BM25 on 1,000
        # synced files, 11.9 -> 1.4 ms of execution. Covering, so no heap visit.
        """
        CREATE INDEX postings_by_term ON postings (term, snapshot_id, ordinal)
            INCLUDE (tf, doc_len);
        """,
    ),
]


def applied(conn: Any) -> list[str]:
    """Names of the migrations applied to the database of ``conn`` (none: an empty list)."""
    exists = conn.execute("SELECT to_regclass('migrations')").fetchone()[0]
    if exists is None:
        return []
    return [r[0] for r in conn.execute("SELECT name FROM migrations ORDER BY name")]


def migrate(conn: Any, migrations: Sequence[tuple[str, str]] = ()) -> list[str]:
    """Apply the missing migrations (default: all of MIGRATIONS), each in its own transaction;
    the names applied now."""
    done: list[str] = []
    for name, sql in migrations or MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS migrations "
                         "(name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
            if conn.execute("SELECT 1 FROM migrations WHERE name = %s", (name,)).fetchone():
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO migrations(name) VALUES (%s)", (name,))
            done.append(name)
    return done
