"""The HNSW index of node vectors on PostgreSQL (pgvector >= 0.8), an option beside the exact
scan (setting ``pg_dense_index``).

``node_vectors.embedding`` is a ``vector`` of no fixed dimension (models differ), and an HNSW
index needs one: so there is one partial expression index per dimension present,
``((embedding::vector(D)) vector_ip_ops) WHERE vector_dims(embedding) = D``, and a search
through it orders by the same expression (retrieve/sql.py). Inner product, because the vectors
are normalised and the exact scan ranks by ``<#>`` too.

Filtered searches (ACL tags, clearances, metadata, the view's snapshots) keep their WHERE in the
same query as the index walk; pgvector 0.8's iterative scan (``hnsw.iterative_scan``) walks on
past ``ef_search`` while the filter throws rows away, up to ``hnsw.max_scan_tuples``; a walk
that ends with fewer rows than asked is redone exactly by the caller. The settings are
``SET LOCAL``: they hold for that one transaction on a pooled connection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from excerpt.errors import InputError

BUILD_LOCK = 7_316_003  # pg_advisory_xact_lock key: one process builds an index at a time
ITERATIVE = ("strict_order", "relaxed_order")


@dataclass(frozen=True)
class HnswConfig:
    """How the index is built (m, ef_construction: pgvector's defaults) and walked."""

    ef_search: int = 100
    m: int = 16
    ef_construction: int = 64
    iterative_scan: str = "strict_order"
    max_scan_tuples: int = 20_000
    build_memory: str = "2GB"  # maintenance_work_mem of the build: the graph kept in memory

    def __post_init__(self) -> None:
        if self.iterative_scan not in ITERATIVE:
            raise InputError(f"hnsw iterative scan must be one of {', '.join(ITERATIVE)}, "
                             f"not {self.iterative_scan!r}")
        if not 1 <= self.ef_search <= 1000:
            raise InputError(f"pg_hnsw_ef_search must be 1-1000, not {self.ef_search}")

    def search_settings(self, depth: int) -> list[str]:
        """``SET LOCAL`` statements for one search of ``depth`` rows (ef_search at least the
        depth, pgvector's ceiling of 1000 at most).

        ``enable_sort = off``: the planner estimates the rights predicate (``labels <@ …``,
        ``acl_tags && …``) at one row, so it would join every visible node and sort them all
        (an exact scan: 173 ms at 20k nodes, seconds at 1M) rather than walk the index; with
        sorting disabled the walk is the plan (the sort of the ``depth`` rows found is in both
        plans). A walk that cannot fill the depth is redone exactly by the caller."""
        ef = min(1000, max(self.ef_search, depth))
        return ["SET LOCAL enable_sort = off", f"SET LOCAL hnsw.ef_search = {int(ef)}",
                f"SET LOCAL hnsw.iterative_scan = {self.iterative_scan}",
                f"SET LOCAL hnsw.max_scan_tuples = {int(self.max_scan_tuples)}"]


def hnsw_config(kind: str, ef_search: int = 100) -> HnswConfig | None:
    """The index a ``pg_dense_index`` setting asks for: None for the exact scan."""
    if kind == "exact":
        return None
    if kind == "hnsw":
        return HnswConfig(ef_search=ef_search)
    raise InputError(f"pg_dense_index must be 'exact' or 'hnsw', not {kind!r}")


def index_name(dims: int) -> str:
    return f"node_vectors_hnsw_{int(dims)}"


def dims_present(conn: Any) -> list[int]:
    """Dimensions of the stored vectors: one vector per snapshot (by the primary key), so
    this reads a row per snapshot, not the table."""
    rows = conn.execute(
        "SELECT DISTINCT d FROM snapshots s CROSS JOIN LATERAL (SELECT vector_dims(v.embedding) "
        "AS d FROM node_vectors v WHERE v.snapshot_id = s.id LIMIT 1) x ORDER BY d").fetchall()
    return [int(r[0]) for r in rows]


def index_sql(dims: int, config: HnswConfig) -> str:
    d = int(dims)
    return (f"CREATE INDEX IF NOT EXISTS {index_name(d)} ON node_vectors USING hnsw "
            f"((embedding::vector({d})) vector_ip_ops) WITH (m = {int(config.m)}, "
            f"ef_construction = {int(config.ef_construction)}) WHERE vector_dims(embedding) = {d}")


def ensure_indexes(conn: Any, config: HnswConfig) -> list[int]:
    """Build the missing index of each dimension present (under a lock, so two processes
    opening the store build it once); the dimensions built now. ``conn`` is in autocommit."""
    built: list[int] = []
    for dims in dims_present(conn):
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (BUILD_LOCK,))
            if conn.execute("SELECT to_regclass(%s)", (index_name(dims),)).fetchone()[0]:
                continue
            conn.execute(f"SET LOCAL maintenance_work_mem = '{config.build_memory}'")
            conn.execute(index_sql(dims, config))
            built.append(dims)
    return built
