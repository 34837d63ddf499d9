"""Retrieval inside PostgreSQL: the same rankings as the segment code, computed in SQL.

A :class:`SqlView` is the read view as a SQL predicate on ``nodes n``: the view's snapshots,
the principal's rights (``cardinality(n.acl_tags) = 0 OR n.acl_tags && tags``, ``n.labels <@
clearances``) and the metadata filters. Every query below applies it before anything is
scored, so a hidden node never reaches a ranking or a statistic:

- BM25 (Lucene's variant, retrieve/lexical.py) from the ``postings`` rows: N, avgdl and df
  count the visible nodes of the whole view at query time; scores are rounded to float32 as
  the segment code's are, ties broken by id, then by the snapshot's place in the view.
- Dense: exact inner product with pgvector (``<#>``) over the visible rows of the snapshots
  embedded by each model, so the result equals the embedded backend's; or, with the store's
  ``dense_index`` (setting ``pg_dense_index: hnsw``, store/pg_hnsw.py), a walk of the HNSW
  index with the view's predicate in the same query (pgvector's iterative scan), approximate
  and listed so in ``view.approximate``, redone exactly when the walk ends short.
- Graph: node status and outgoing edges of a whole BFS frontier in two queries per level.

Candidates use the view's part index, so fusion, fetch and tracing are shared with the
segment path.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from excerpt.graph.expand import NodeStatus
from excerpt.retrieve.view import Candidate
from excerpt.store.base import HnswSearch, Rows, SnapshotInfo
from excerpt.store.pg_where import metadata_test
from excerpt.store.postgres import PostgresStore, vector_text
from excerpt.types import Edge, Node, Principal

QueryEmbedder = Callable[[str], npt.NDArray[np.float32]]


@dataclass(frozen=True)
class SqlPart:
    info: SnapshotInfo

    @property
    def embed_model(self) -> str | None:
        return self.info.embed_model

    def info_at(self, ordinal: int) -> SnapshotInfo:
        """The part's snapshot (one per part: PostgreSQL keeps rows, not segments)."""
        return self.info

    def local(self, ordinal: int) -> tuple[str, int]:
        return self.info.snapshot_id, ordinal


def rights(principal: Principal) -> tuple[list[str], list[Any]]:
    """The principal's visibility rule as clauses on ``nodes n`` (none for all access)."""
    if principal.all_access:
        return [], []
    return (["(cardinality(n.acl_tags) = 0 OR n.acl_tags && %s::text[])",
             "n.labels <@ %s::text[]"],
            [sorted(principal.acl_tags), sorted(principal.clearances)])


@dataclass
class SqlView:
    """The read view of one query, as the SQL that selects its visible nodes."""

    parts: list[SqlPart]
    principal: Principal
    metadata: Mapping[str, Any]
    visible: int = 0
    total_length: float = 0.0
    seen_ids: set[str] = field(default_factory=set)
    shadowing: list[str] | None = None
    """The view's snapshot ids by import (run) order when two of them hold one node id: the
    last holds it (retrieve/view.py ``shadowed``); None when no id repeats."""
    approximate: list[str] = field(default_factory=list)
    """Snapshots whose dense ranking came from the HNSW index in this search (as
    retrieve/view.py View.approximate)."""
    _where: tuple[str, list[Any]] | None = field(default=None, repr=False)

    @property
    def avg_length(self) -> float:
        return self.total_length / self.visible if self.visible else 0.0

    @property
    def snapshot_ids(self) -> list[str]:
        return [p.info.snapshot_id for p in self.parts]

    @property
    def seen(self) -> list[SnapshotInfo]:
        """The view's snapshots the caller may see a node of (its rights alone)."""
        return [p.info for p in self.parts if p.info.snapshot_id in self.seen_ids]

    def scope(self) -> tuple[str, list[Any]]:
        """The view's snapshots and the principal's rights, as a predicate on ``nodes n``."""
        clauses, params = rights(self.principal)
        return " AND ".join(["n.snapshot_id = ANY(%s)", *clauses]), [self.snapshot_ids, *params]

    def narrowing(self) -> tuple[str, list[Any]]:
        """What the read narrows the scope to (shadowed copies out, the metadata filters);
        ``TRUE`` for nothing."""
        clauses: list[str] = []
        params: list[Any] = []
        if self.shadowing:
            clauses.append("NOT EXISTS (SELECT 1 FROM nodes m WHERE m.id = n.id AND "
                           "m.snapshot_id = ANY(%s::text[]) AND array_position(%s::text[], "
                           "m.snapshot_id) > array_position(%s::text[], n.snapshot_id))")
            params += [self.shadowing] * 3
        for key, value in sorted(self.metadata.items()):  # equal, or a list holding it
            test, args = metadata_test("n.metadata", key, value)
            clauses.append(test)
            params += args
        return " AND ".join(clauses) or "TRUE", params

    def where(self) -> tuple[str, list[Any]]:
        """The predicate on ``nodes n`` and its parameters."""
        if self._where is None:
            (scope, scope_args), (narrow, narrow_args) = self.scope(), self.narrowing()
            self._where = f"{scope} AND {narrow}", [*scope_args, *narrow_args]
        return self._where


def sql_clashes(rows: Rows, snapshot_ids: Sequence[str]) -> bool:
    """Whether two of the snapshots hold a node of one id."""
    if len(snapshot_ids) < 2:
        return False
    return bool(rows("SELECT EXISTS (SELECT 1 FROM nodes a JOIN nodes b ON b.id = a.id AND "
                     "b.snapshot_id <> a.snapshot_id WHERE a.snapshot_id = ANY(%s) AND "
                     "b.snapshot_id = ANY(%s))", [list(snapshot_ids)] * 2)[0][0])


def sql_view(rows: Rows, snapshots: Sequence[SnapshotInfo], principal: Principal,
             metadata: Mapping[str, Any], clashes: bool = False) -> SqlView:
    """The view, its visible count and length, and which snapshots the caller may see at all
    (one grouped count); ``clashes``: whether its snapshots share node ids (sql_clashes)."""
    view = SqlView([SqlPart(s) for s in snapshots], principal, metadata)
    if clashes:
        view.shadowing = [s.snapshot_id for s in sorted(snapshots, key=lambda s: s.run_id)]
    (scope, scope_args), (narrow, narrow_args) = view.scope(), view.narrowing()
    found = rows(f"SELECT n.snapshot_id, count(*) FILTER (WHERE {narrow}), "
                 f"coalesce(sum(n.doc_len) FILTER (WHERE {narrow}), 0) FROM nodes n "
                 f"WHERE {scope} GROUP BY n.snapshot_id", [*narrow_args, *narrow_args,
                                                            *scope_args])
    view.visible = sum(int(count) for _, count, _ in found)
    view.total_length = sum(float(length) for _, _, length in found)
    view.seen_ids = (set(view.snapshot_ids) if principal.all_access
                     else {sid for sid, _, _ in found})
    return view


def sql_seen_snapshots(rows: Rows, snapshot_ids: Sequence[str],
                       principal: Principal) -> set[str]:
    """Those of ``snapshot_ids`` holding a node the principal may see."""
    if principal.all_access:
        return set(snapshot_ids)
    clauses, params = rights(principal)
    found = rows(f"SELECT s FROM unnest(%s::text[]) AS s WHERE EXISTS (SELECT 1 FROM nodes n "
                 f"WHERE n.snapshot_id = s AND {' AND '.join(clauses)})",
                 [list(snapshot_ids), *params])
    return {sid for (sid,) in found}


def sql_snapshot_counts(rows: Rows, snapshot_ids: Sequence[str],
                        principal: Principal) -> dict[str, tuple[int, int, int]]:
    """(documents, nodes, edges) the principal may see per snapshot: documents with a visible
    node, visible nodes, edges leaving a visible node; snapshots with none are absent."""
    clauses, params = rights(principal)
    where = " AND ".join(["n.snapshot_id = ANY(%s)", *clauses])
    nodes = rows(f"SELECT n.snapshot_id, count(DISTINCT n.document_id), count(*) FROM nodes n "
                 f"WHERE {where} GROUP BY n.snapshot_id", [list(snapshot_ids), *params])
    edges: dict[str, int] = dict(rows(
        f"SELECT e.snapshot_id, count(*) FROM edges e JOIN nodes n ON n.snapshot_id = "
        f"e.snapshot_id AND n.id = e.from_id WHERE {where} GROUP BY e.snapshot_id",
        [list(snapshot_ids), *params]))
    return {sid: (int(docs), int(count), int(edges.get(sid, 0))) for sid, docs, count in nodes}


def _candidates(view: SqlView, found: list[tuple[Any, ...]]) -> list[Candidate]:
    """(position in the view from 1, ordinal, id, score) rows as candidates."""
    return [Candidate(int(pos) - 1, int(ordinal), node_id, float(score))
            for pos, ordinal, node_id, score in found]


def sql_bm25(rows: Rows, view: SqlView, weights: Mapping[str, float], depth: int,
             k1: float, b: float) -> list[Candidate]:
    if not weights or not view.visible:
        return []
    ctes, args = _bm25_ctes(view, weights, k1, b)
    sql = f"""{ctes},
        cut AS (SELECT score FROM scored ORDER BY score DESC LIMIT 1 OFFSET %s)
        SELECT array_position(%s::text[], s.snapshot_id) AS pos, s.ordinal, n.id, s.score
        FROM scored s JOIN nodes n ON n.snapshot_id = s.snapshot_id AND n.ordinal = s.ordinal
        WHERE s.score >= coalesce((SELECT score FROM cut), '-Infinity')
        ORDER BY s.score DESC, n.id, pos LIMIT %s"""
    return _candidates(view, rows(sql, [*args, depth - 1, view.snapshot_ids, depth]))


def sql_bm25_of(rows: Rows, view: SqlView, weights: Mapping[str, float], ids: Sequence[str],
                k1: float, b: float) -> dict[str, float]:
    """BM25 scores of the visible nodes among ``ids`` (statistics of the whole view; a node in
    several parts scores in its first); nodes matching no term are absent."""
    if not weights or not view.visible or not ids:
        return {}
    ctes, args = _bm25_ctes(view, weights, k1, b)
    found = rows(f"""{ctes}
        SELECT n.id, s.score FROM scored s JOIN nodes n ON n.snapshot_id = s.snapshot_id
            AND n.ordinal = s.ordinal
        WHERE n.id = ANY(%s)
        ORDER BY array_position(%s::text[], s.snapshot_id) DESC""",
                 [*args, list(ids), view.snapshot_ids])
    return {node_id: float(score) for node_id, score in found}  # the first part's wins


def _bm25_ctes(view: SqlView, weights: Mapping[str, float], k1: float,
               b: float) -> tuple[str, list[Any]]:
    """The CTEs that score every visible node matching a term (``scored``), and their args.

    Security before ranking: postings of the view's hidden nodes are removed (an anti-join
    with them; usually few or none) before df, idf or any score exists."""
    where, params = view.where()
    terms = list(weights)
    sql = f"""
        WITH q(term, w) AS (SELECT * FROM unnest(%s::text[], %s::float8[])),
        hidden AS MATERIALIZED (
            SELECT n.snapshot_id, n.ordinal FROM nodes n
            WHERE n.snapshot_id = ANY(%s) AND NOT coalesce(({where}), false)),
        hits AS (
            SELECT p.snapshot_id, p.ordinal, p.term, p.tf, p.doc_len FROM postings p
            WHERE p.snapshot_id = ANY(%s) AND p.term = ANY(%s) AND NOT EXISTS (
                SELECT 1 FROM hidden h
                WHERE h.snapshot_id = p.snapshot_id AND h.ordinal = p.ordinal)),
        df AS (SELECT term, count(*)::float8 AS df FROM hits GROUP BY term),
        scored AS (
            SELECT h.snapshot_id, h.ordinal,
                   sum(q.w * ln(1 + (%s - df.df + 0.5) / (df.df + 0.5))
                       * (h.tf / (h.tf + %s * (1 - %s + %s * h.doc_len / %s))))::real AS score
            FROM hits h JOIN q USING (term) JOIN df USING (term)
            GROUP BY h.snapshot_id, h.ordinal)"""
    args = [terms, [float(weights[t]) for t in terms], view.snapshot_ids, *params,
            view.snapshot_ids, terms, float(view.visible), k1, b, b, view.avg_length]
    return sql, args


def sql_has_relations(rows: Rows, view: SqlView, relations: Sequence[str]) -> bool:
    """Whether any snapshot of the view holds an edge of one of ``relations``."""
    return bool(rows("SELECT 1 FROM edges WHERE snapshot_id = ANY(%s) AND relation = ANY(%s) "
                     "LIMIT 1", [view.snapshot_ids, list(relations)]))


def sql_dense(rows: Rows, view: SqlView, embed_query: Callable[[str], QueryEmbedder | None],
              query: str, depth: int, hnsw: HnswSearch | None = None) -> list[Candidate]:
    """Cosine (inner product of normalised vectors) per model, merged by score then id; through
    the HNSW index when ``hnsw`` (a PostgresStore whose ``dense_index`` is on) is given, the
    snapshots then listed in ``view.approximate``."""
    pool: list[Candidate] = []
    for model in sorted({m for p in view.parts if (m := p.info.embed_model)}):
        embedder = embed_query(model)
        if embedder is None:
            continue
        sids = [p.info.snapshot_id for p in view.parts if p.info.embed_model == model]
        vector = embedder(query)
        found = None if hnsw is None else _hnsw_dense(hnsw, view, sids, vector, depth)
        if found is None:
            found = _exact_dense(rows, view, sids, vector, depth)
        else:
            view.approximate += [s for s in sids if s not in view.approximate]
        pool += found
    pool.sort(key=lambda c: (-c.score, c.id, c.part))
    return pool[:depth]


def _exact_dense(rows: Rows, view: SqlView, sids: list[str], vector: npt.NDArray[np.float32],
                 depth: int) -> list[Candidate]:
    """Every visible vector of ``sids`` scored: the exact ranking (ties by id, then part)."""
    where, params = view.where()
    sql = f"""
        WITH scored AS (
            SELECT v.snapshot_id, v.ordinal, (-(v.embedding <#> %s::vector))::real AS score
            FROM node_vectors v WHERE v.snapshot_id = ANY(%s))
        SELECT array_position(%s::text[], n.snapshot_id) AS pos, n.ordinal, n.id, s.score
        FROM scored s JOIN nodes n ON n.snapshot_id = s.snapshot_id
            AND n.ordinal = s.ordinal
        WHERE {where}
        ORDER BY s.score DESC, n.id, pos LIMIT %s"""
    # as stored: the float32 values, exactly
    return _candidates(view, rows(sql, [vector_text(vector), sids, view.snapshot_ids, *params,
                                        depth]))


def _hnsw_dense(hnsw: HnswSearch, view: SqlView, sids: list[str],
                vector: npt.NDArray[np.float32], depth: int) -> list[Candidate] | None:
    """The index walk: the view's predicate in the same query (a hidden node is never
    returned), pgvector's iterative scan going on while it filters rows out. None when the walk
    ended short of ``depth`` rows with more visible (max_scan_tuples reached): the caller then
    scans exactly, so a selective filter still gets its rows."""
    config = hnsw.dense_index
    if config is None:
        return None
    where, params = view.where()
    dims = int(vector.shape[0])  # literals: the partial index's predicate must match at plan
    distance = f"(v.embedding::vector({dims}) <#> %s::vector({dims}))"
    sql = f"""
        SELECT * FROM (
            SELECT array_position(%s::text[], n.snapshot_id) AS pos, n.ordinal, n.id,
                   (-(v.embedding <#> %s::vector))::real AS score
            FROM node_vectors v JOIN nodes n ON n.snapshot_id = v.snapshot_id
                AND n.ordinal = v.ordinal
            WHERE v.snapshot_id = ANY(%s) AND vector_dims(v.embedding) = {dims} AND {where}
            ORDER BY {distance} LIMIT %s) near
        ORDER BY score DESC, id, pos"""
    text = vector_text(vector)
    found = hnsw.query_with(config.search_settings(depth), sql,
                            [view.snapshot_ids, text, sids, *params, text, depth])
    if len(found) < min(depth, view.visible):
        return None
    return _candidates(view, found)


def sql_has_vectors(view: SqlView) -> bool:
    return any(p.info.embed_model for p in view.parts)


def sql_named(rows: Rows, view: SqlView, ids: Sequence[str]) -> list[Candidate]:
    """Visible nodes among ``ids`` in the order given, each once (its first part)."""
    if not ids:
        return []
    where, params = view.where()
    found = rows(f"SELECT array_position(%s::text[], n.snapshot_id), n.ordinal, n.id, 0.0 "
                 f"FROM nodes n WHERE {where} AND n.id = ANY(%s)",
                 [view.snapshot_ids, *params, list(ids)])
    first: dict[str, Candidate] = {}
    for c in sorted(_candidates(view, found), key=lambda c: c.part):
        first.setdefault(c.id, c)
    return [first[i] for i in ids if i in first]


def sql_doc_freqs(rows: Rows, view: SqlView, terms: Sequence[str]) -> dict[str, int]:
    """Visible nodes holding each term (terms no visible node holds are absent)."""
    where, params = view.where()
    found = rows(f"SELECT p.term, count(*) FROM postings p JOIN nodes n ON "
                 f"n.snapshot_id = p.snapshot_id AND n.ordinal = p.ordinal "
                 f"WHERE p.snapshot_id = ANY(%s) AND p.term = ANY(%s) AND {where} "
                 f"GROUP BY p.term", [view.snapshot_ids, list(terms), *params])
    return {term: int(count) for term, count in found}


def sql_node_vectors(rows: Rows, view: SqlView,
                     embed_query: Callable[[str], QueryEmbedder | None], query: str,
                     nodes: Sequence[tuple[str, str]]
                     ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None:
    """As retrieve.dense.node_vectors: None unless every node has a vector of one model."""
    models = {p.info.snapshot_id: p.info.embed_model for p in view.parts}
    wanted = {models.get(s) for s, _ in nodes}
    if len(wanted) != 1 or None in wanted:
        return None
    model = wanted.pop()
    embedder = embed_query(model) if model else None
    if embedder is None:
        return None
    where, params = view.where()
    found = {(s, i): v for s, i, v in rows(
        f"SELECT n.snapshot_id, n.id, v.embedding::text FROM nodes n JOIN node_vectors v ON "
        f"v.snapshot_id = n.snapshot_id AND v.ordinal = n.ordinal WHERE {where} "
        f"AND n.id = ANY(%s)",
        [*params, [i for _, i in nodes]])}
    if any(key not in found for key in nodes):
        return None
    matrix = np.asarray([json.loads(found[key]) for key in nodes], dtype=np.float32)
    return embedder(query), matrix


class SqlGraph:
    """Node status and outgoing edges for graph expansion, loaded a frontier at a time."""

    def __init__(self, rows: Rows, view: SqlView) -> None:
        self._rows, self._view = rows, view
        self._status: dict[str, NodeStatus] = {}
        self._edges: dict[str, list[Edge]] = {}

    def prefetch(self, ids: Sequence[str]) -> None:
        """Status of ``ids`` and, for the visible ones, their outgoing edges: two queries."""
        new = [i for i in dict.fromkeys(ids) if i not in self._status]
        if new:
            where, params = self._view.where()
            seen: dict[str, bool] = dict(self._rows(
                f"SELECT n.id, bool_or({where}) FROM nodes n WHERE n.snapshot_id = ANY(%s) "
                f"AND n.id = ANY(%s) GROUP BY n.id", [*params, self._view.snapshot_ids, new]))
            for node_id in new:
                found = seen.get(node_id)
                self._status[node_id] = ("missing" if found is None
                                         else "visible" if found else "hidden")
        sources = [i for i in dict.fromkeys(ids)
                   if self._status.get(i) == "visible" and i not in self._edges]
        if sources:
            self._load_edges(sources)

    def _load_edges(self, sources: list[str]) -> None:
        where, params = self._view.where()
        found = self._rows(
            f"SELECT DISTINCT e.from_id, array_position(%s::text[], e.snapshot_id) AS pos, "
            f"e.relation, e.to_id FROM edges e JOIN nodes n ON n.snapshot_id = e.snapshot_id "
            f"AND n.id = e.from_id WHERE e.snapshot_id = ANY(%s) AND e.from_id = ANY(%s) "
            f"AND {where} ORDER BY e.from_id, pos, e.relation, e.to_id",
            [self._view.snapshot_ids, self._view.snapshot_ids, sources, *params])
        for source in sources:
            self._edges[source] = []
        for from_id, _, relation, to_id in found:
            self._edges[from_id].append(Edge(from_id, relation, to_id))

    def status(self, node_id: str) -> NodeStatus:
        if node_id not in self._status:
            self.prefetch([node_id])
        return self._status[node_id]

    def outgoing(self, node_id: str) -> list[Edge]:
        if self.status(node_id) != "visible":
            return []
        if node_id not in self._edges:
            self._load_edges([node_id])
        return self._edges[node_id]

    def incoming(self, node_id: str) -> list[Edge]:
        """Edges into a visible ``node_id`` from visible sources (one query per node)."""
        if self.status(node_id) != "visible":
            return []
        where, params = self._view.where()
        found = self._rows(
            f"SELECT DISTINCT e.relation, e.from_id FROM edges e JOIN nodes n ON "
            f"n.snapshot_id = e.snapshot_id AND n.id = e.from_id WHERE e.snapshot_id = ANY(%s) "
            f"AND e.to_id = %s AND {where} ORDER BY e.relation, e.from_id",
            [self._view.snapshot_ids, node_id, *params])
        return [Edge(from_id, relation, node_id) for relation, from_id in found]


_NODE_COLUMNS = ", ".join(f"n.{c}" for c in ("id", "document_id", "text", "title", "source",
                                               "start", '"end"', "acl_tags", "labels",
                                               "metadata"))


def sql_around(rows: Rows, view: SqlView, node_id: str, n: int) -> list[Node]:
    """As SegmentAccess.around: the visible node and its visible neighbours within ``n``
    ordinals in the same snapshot and document, from the first part that holds the node."""
    where, params = view.where()
    held = rows(f"SELECT n.snapshot_id, n.ordinal, n.document_id, "
                f"array_position(%s::text[], n.snapshot_id) AS pos FROM nodes n "
                f"WHERE {where} AND n.id = %s ORDER BY pos DESC LIMIT 1",
                [view.snapshot_ids, *params, node_id])
    if not held:
        return []
    snapshot_id, ordinal, document, _ = held[0]
    found = rows(f"SELECT {_NODE_COLUMNS} FROM nodes n WHERE {where} AND n.snapshot_id = %s "
                 f"AND n.document_id = %s AND n.ordinal BETWEEN %s AND %s ORDER BY n.ordinal",
                 [*params, snapshot_id, document, ordinal - n, ordinal + n])
    return [PostgresStore._node(row) for row in found]


def sql_visible_texts(rows: Rows, view: SqlView, ids: Sequence[str]) -> dict[str, str]:
    """Texts of the visible nodes among ``ids`` (from the first part that holds each)."""
    if not ids:
        return {}
    where, params = view.where()
    found = rows(f"SELECT n.id, array_position(%s::text[], n.snapshot_id) AS pos, n.text "
                 f"FROM nodes n WHERE {where} AND n.id = ANY(%s) ORDER BY pos DESC",
                 [view.snapshot_ids, *params, list(dict.fromkeys(ids))])
    return {node_id: text for node_id, _, text in found}  # the lowest position wins


