"""PostgreSQL's :class:`~excerpt.retrieve.access.Access`: every read is one query carrying the
view's predicate (retrieve/sql.py), so the database ranks only what the caller may see.

Kept apart from retrieve/access.py so that a search over the embedded store never imports the
SQL (and the PostgreSQL store behind it): :func:`excerpt.retrieve.backends.access_for` imports
this module only for a store that ranks in SQL.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from excerpt.bm25 import idf
from excerpt.retrieve import identifiers, sql
from excerpt.retrieve.access import (
    CITATION_RELATIONS,
    EmbedQuery,
    GraphAccess,
    Vectors,
    _follow,
    _per_view,
)
from excerpt.retrieve.multihop import MultiHopResult
from excerpt.retrieve.view import Candidate
from excerpt.settings import Settings
from excerpt.store.base import HnswSearch, Rows, SnapshotInfo, ViewKey
from excerpt.types import IdfWeights, Node, Principal


class SqlAccess:
    """PostgreSQL ranks: every read is a query with the view's predicate (retrieve/sql.py)."""

    def concurrent_legs(self, view: sql.SqlView) -> bool:
        return True  # two queries on two pooled connections

    def __init__(self, rows: Rows, hnsw: HnswSearch | None = None) -> None:
        self.rows = rows
        self.hnsw = hnsw  # the store, when semantic search walks its HNSW index
        self._clashes: dict[ViewKey, bool] = {}
        self._code: dict[ViewKey, bool] = {}

    def view(self, snapshots: Sequence[SnapshotInfo], principal: Principal,
             metadata: Mapping[str, Any]) -> sql.SqlView:
        clashes = _per_view(self._clashes, snapshots,
                            lambda key: sql.sql_clashes(self.rows, key.ids))
        return sql.sql_view(self.rows, snapshots, principal, metadata, clashes)

    def notes(self, view: sql.SqlView) -> list[str]:
        walked = [s for s in view.approximate if s in view.seen_ids]
        return (["semantic ranking is approximate (HNSW index) in snapshot(s) "
                 + ", ".join(walked)] if walked else [])

    def seen(self, view: sql.SqlView) -> list[SnapshotInfo]:
        return view.seen

    def seen_ids(self, view: sql.SqlView) -> list[str]:
        return [i.snapshot_id for i in view.seen]

    def seen_snapshots(self, snapshots: Sequence[SnapshotInfo],
                       principal: Principal) -> set[str]:
        return sql.sql_seen_snapshots(self.rows, [s.snapshot_id for s in snapshots], principal)

    def snapshot_counts(self, snapshots: Sequence[SnapshotInfo], principal: Principal
                        ) -> dict[str, tuple[int, int, int]]:
        if principal.all_access:
            return {s.snapshot_id: (s.documents, s.nodes, s.edges) for s in snapshots}
        found = sql.sql_snapshot_counts(self.rows, [s.snapshot_id for s in snapshots],
                                        principal)
        # A snapshot seen whole reports its recorded counts, as SegmentAccess does.
        return {s.snapshot_id: ((s.documents, s.nodes, s.edges)
                                if found[s.snapshot_id][1] == s.nodes else found[s.snapshot_id])
                for s in snapshots if s.snapshot_id in found}

    def has_vectors(self, view: sql.SqlView) -> bool:
        return sql.sql_has_vectors(view)

    def bm25(self, view: sql.SqlView, weights: Mapping[str, float], depth: int, k1: float,
             b: float) -> list[Candidate]:
        return sql.sql_bm25(self.rows, view, weights, depth, k1, b)

    def dense(self, view: sql.SqlView, embed: EmbedQuery, query: str,
              depth: int) -> list[Candidate]:
        return sql.sql_dense(self.rows, view, embed, query, depth, self.hnsw)

    def named(self, view: sql.SqlView, ids: Sequence[str]) -> list[Candidate]:
        return sql.sql_named(self.rows, view, ids)

    def code_ids(self, view: sql.SqlView, names: Sequence[identifiers.Name]) -> list[str]:
        """A view with no code node (asked once per set of snapshots) is not scanned."""
        if not _per_view(self._code, [p.info for p in view.parts],
                         lambda key: identifiers.sql_has_code(self.rows, key.ids)):
            return []
        return identifiers.sql_matches(self.rows, view, names)

    def idf_weights(self, view: sql.SqlView, tokens: Sequence[str]) -> IdfWeights:
        """As retrieve.lexical.idf_weights, with the document frequencies counted in SQL."""
        n = max(view.visible, 1)
        terms = list(dict.fromkeys(tokens))
        freqs = sql.sql_doc_freqs(self.rows, view, terms)
        found = {t: idf(freqs[t], n) for t in terms if freqs.get(t)}
        fill = sum(found.values()) / len(found) if found else 1.0
        missing = [t for t in terms if t not in found]
        return IdfWeights({**found, **dict.fromkeys(missing, fill)}, missing)

    def node_vectors(self, view: sql.SqlView, embed: EmbedQuery, query: str,
                     nodes: Sequence[tuple[str, str]]) -> Vectors:
        return sql.sql_node_vectors(self.rows, view, embed, query, nodes)

    def graph(self, view: sql.SqlView) -> GraphAccess:
        return sql.SqlGraph(self.rows, view)

    def visible_texts(self, view: sql.SqlView, ids: Sequence[str]) -> dict[str, str]:
        return sql.sql_visible_texts(self.rows, view, ids)

    def around(self, view: sql.SqlView, node_id: str, n: int) -> list[Node]:
        return sql.sql_around(self.rows, view, node_id, n)

    def follow_citations(self, view: sql.SqlView, ranked: list[Candidate],
                         weights: Mapping[str, float], settings: Settings
                         ) -> tuple[list[Candidate], MultiHopResult | None]:
        """As SegmentAccess.follow_citations, with scores and citations read in SQL: the
        ranked passages' edges and the scores of what they cite come in batches."""
        if settings.multi_hop_max < 1 or not sql.sql_has_relations(
                self.rows, view, sorted(CITATION_RELATIONS)):
            return [], None
        graph = sql.SqlGraph(self.rows, view)
        graph.prefetch([c.id for c in ranked])
        scores: dict[str, float] = {}

        def score(node_id: str) -> float:
            if node_id not in scores:  # with it, the ranked nodes and what they cite
                wanted = {node_id, *(c.id for c in ranked),
                          *(e.to_id for c in ranked for e in graph.outgoing(c.id))}
                wanted -= set(scores)
                found = sql.sql_bm25_of(self.rows, view, weights, sorted(wanted),
                                        settings.bm25_k1, settings.bm25_b)
                scores.update({n: found.get(n, 0.0) for n in wanted})
            return scores[node_id]

        def place(ids: Sequence[str]) -> list[Candidate]:
            return [c._replace(score=score(c.id)) for c in sql.sql_named(self.rows, view, ids)]

        return _follow(ranked, graph, score, place, settings)
