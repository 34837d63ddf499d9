"""PostgreSQL migrations are named, applied once, and carry data forward: a database written
by the first layout (embeddings in `nodes`, postings without lengths) is moved to the ranking
layout of 003 without losing a vector or a length, and ranks the same afterwards."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg

from excerpt.store.pg_schema import MIGRATIONS, applied, migrate
from excerpt.store.postgres import PostgresStore
from excerpt.types import Filters, Principal


def old_database(url: str) -> None:
    """The 001 + 002 layout with one snapshot of two nodes, one of them embedded."""
    with psycopg.connect(url, autocommit=True) as conn:
        assert migrate(conn, MIGRATIONS[:2]) == ["001_initial", "002_memory"]
        conn.execute("INSERT INTO collections(name) VALUES ('c')")
        conn.execute("INSERT INTO import_runs(id, collection, source, format, status) "
                     "VALUES (1, 'c', 's', 'text', 'completed')")
        conn.execute("INSERT INTO snapshots(id, collection, source, run_id, documents, nodes, "
                     "edges, embed_model) VALUES ('snap', 'c', 's', 1, 1, 2, 0, NULL)")
        for ordinal, (node_id, length, vector) in enumerate(
                [("a", 3.0, "[0.6,0.8]"), ("b", 5.0, None)]):
            conn.execute(
                "INSERT INTO nodes VALUES ('snap', %s, %s, 'd', 'lunch at noon', '', 's', 0, 0,"
                " '{}', '{}', %s, %s, %s)", (ordinal, node_id, json.dumps({}), length, vector))
            conn.execute("INSERT INTO postings VALUES ('snap', 'lunch', %s, 1.0)", (ordinal,))


def test_003_moves_vectors_and_lengths_and_runs_once(pg_url: str, tmp_path: Path) -> None:
    old_database(pg_url)
    store = PostgresStore(pg_url, tmp_path)  # opening applies what is missing
    try:
        assert store.applied_now == [name for name, _ in MIGRATIONS[2:]]  # 003 onwards
        assert store.migrations() == [name for name, _ in MIGRATIONS]
        assert store.query("SELECT ordinal, embedding::text FROM node_vectors") == [
            (0, "[0.6,0.8]")]
        assert store.query("SELECT ordinal, doc_len FROM postings ORDER BY ordinal") == [
            (0, 3.0), (1, 5.0)]
        assert not store.query("SELECT 1 FROM information_schema.columns WHERE "
                               "table_name = 'nodes' AND column_name = 'embedding'")
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate(conn) == []  # nothing twice
        assert applied(conn) == [name for name, _ in MIGRATIONS]


def test_a_migrated_database_ranks(pg_url: str, tmp_path: Path) -> None:
    from excerpt.engine import Engine

    old_database(pg_url)
    engine = Engine(tmp_path, store=PostgresStore(pg_url, tmp_path))
    try:
        hits = engine.search("lunch", Filters("c"), Principal.anonymous(), "bm25", 5).hits
        assert [h.node.id for h in hits] == ["a", "b"]  # the shorter node first
    finally:
        engine.close()
