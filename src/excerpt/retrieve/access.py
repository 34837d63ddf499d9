"""How the engine reads a view, whichever store holds it.

:class:`SegmentAccess` ranks over the embedded store's memory-mapped segments (numpy);
:class:`SqlAccess` asks PostgreSQL to rank (retrieve/sql.py). Both give candidates with the
view's part indexes, so fusion, reranking, fetching and tracing are the engine's, shared.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from excerpt.analyze import ANALYZER_VERSION
from excerpt.graph.expand import NodeStatus, adjacency, reverse_adjacency
from excerpt.retrieve import identifiers
from excerpt.retrieve.citations import named_nodes
from excerpt.retrieve.dense import QueryEmbedder, node_vectors, search_dense, walks_index
from excerpt.retrieve.lexical import bm25_scores, idf_weights, search_bm25
from excerpt.retrieve.multihop import MultiHopResult, multi_hop
from excerpt.retrieve.view import Candidate, Layout, View, ViewPart, build_view, lay_out
from excerpt.settings import Settings
from excerpt.store.ann import AnnConfig
from excerpt.store.base import SegmentedStore, SnapshotInfo, ViewKey, view_key
from excerpt.types import Edge, IdfWeights, Node, Principal

SHADOW_VIEWS = 64
"""How many views' layouts (segments grouped, shadowed nodes) an access remembers (a view
changes only on import)."""

_T = TypeVar("_T")


def _remember(cache: dict[ViewKey, _T], key: ViewKey, value: _T) -> None:
    """``cache[key] = value``, the oldest of ``SHADOW_VIEWS`` remembered sets forgotten first."""
    if key not in cache and len(cache) >= SHADOW_VIEWS:
        cache.pop(next(iter(cache)))
    cache[key] = value


def _per_view(cache: dict[ViewKey, _T], snapshots: Sequence[SnapshotInfo],
              make: Callable[[ViewKey], _T]) -> _T:
    """``make(ids)`` once per set of snapshots (which never change), the oldest of
    ``SHADOW_VIEWS`` remembered sets forgotten first."""
    key = view_key(snapshots)
    if key not in cache:
        _remember(cache, key, make(key))
    return cache[key]

CITATION_RELATIONS = {"cites", "related"}
"""Edges that multi-hop retrieval follows (regulation references); code edges are not."""

EmbedQuery = Callable[[str], QueryEmbedder | None]
Vectors = tuple[npt.NDArray[np.float32], npt.NDArray[np.float32]] | None


class GraphAccess(Protocol):
    def status(self, node_id: str) -> NodeStatus: ...

    def outgoing(self, node_id: str) -> list[Edge]: ...

    def incoming(self, node_id: str) -> list[Edge]:
        """Edges into a visible ``node_id`` from visible sources (graph --direction in)."""
        ...

    def prefetch(self, ids: Sequence[str]) -> None: ...


class Access(Protocol):
    """What the engine asks of a view; ``Any`` views are the access's own kind."""

    def concurrent_legs(self, view: Any) -> bool:
        """Whether the lexical and dense legs of a hybrid search over ``view`` gain from
        running at once."""
        ...

    def view(self, snapshots: Sequence[SnapshotInfo], principal: Principal,
             metadata: Mapping[str, Any]) -> Any: ...

    def notes(self, view: Any) -> list[str]: ...

    def seen(self, view: Any) -> list[SnapshotInfo]:
        """The view's snapshots the caller may see a node of: the only ones ever named to it."""
        ...

    def seen_ids(self, view: Any) -> list[str]:
        """The ids of :meth:`seen`, in its order."""
        ...

    def seen_snapshots(self, snapshots: Sequence[SnapshotInfo],
                       principal: Principal) -> set[str]:
        """Ids of ``snapshots`` holding a node ``principal`` may see."""
        ...

    def snapshot_counts(self, snapshots: Sequence[SnapshotInfo], principal: Principal
                        ) -> dict[str, tuple[int, int, int]]:
        """(documents, nodes, edges) ``principal`` may see per snapshot, for those where it
        sees a node: documents holding a visible node, visible nodes, edges leaving one."""
        ...

    def has_vectors(self, view: Any) -> bool: ...

    def bm25(self, view: Any, weights: Mapping[str, float], depth: int, k1: float,
             b: float) -> list[Candidate]: ...

    def dense(self, view: Any, embed: EmbedQuery, query: str, depth: int) -> list[Candidate]: ...

    def named(self, view: Any, ids: Sequence[str]) -> list[Candidate]: ...

    def code_ids(self, view: Any, names: Sequence[identifiers.Name]) -> list[str]:
        """Ids of the visible code nodes ``names`` name (retrieve/identifiers.py), id order."""
        ...

    def idf_weights(self, view: Any, tokens: Sequence[str]) -> IdfWeights: ...

    def node_vectors(self, view: Any, embed: EmbedQuery, query: str,
                     nodes: Sequence[tuple[str, str]]) -> Vectors: ...

    def graph(self, view: Any) -> GraphAccess: ...

    def visible_texts(self, view: Any, ids: Sequence[str]) -> dict[str, str]: ...

    def around(self, view: Any, node_id: str, n: int) -> list[Node]:
        """The node ``node_id`` with up to ``n`` nodes before and after it in its document
        (reading order: the order it was imported in), only those the caller may see; [] when
        the caller may not see the node itself."""
        ...

    def follow_citations(self, view: Any, ranked: list[Candidate], weights: Mapping[str, float],
                         settings: Settings) -> tuple[list[Candidate], MultiHopResult | None]:
        ...


def _follow(ranked: list[Candidate], graph: GraphAccess, score: Callable[[str], float],
            place: Callable[[Sequence[str]], list[Candidate]],
            settings: Settings) -> tuple[list[Candidate], MultiHopResult]:
    """Citations of the ranked passages, up to ``multi_hop_max`` hops, kept when their BM25
    ``score`` is at least ``multi_hop_threshold`` of the best hit's; ``place`` turns the ids
    reached into candidates of the view (in the order given)."""
    best = max((score(c.id) for c in ranked), default=0.0) or 1.0

    def cites(node_id: str) -> list[str]:
        edges = [e for e in graph.outgoing(node_id) if e.relation in CITATION_RELATIONS]
        graph.prefetch([e.to_id for e in edges])
        return [e.to_id for e in edges if graph.status(e.to_id) == "visible"]

    report = multi_hop([c.id for c in ranked], cites, lambda n: min(1.0, score(n) / best),
                       settings.multi_hop_max, settings.multi_hop_threshold)
    return place(report.hop_results), report


class SegmentAccess:
    """The embedded store: numpy over each snapshot's segment and the caller's mask."""

    def concurrent_legs(self, view: View) -> bool:
        """When the dense leg walks a segment's IVF index: faiss releases the GIL while it
        walks, so the BM25 leg runs on the other core meanwhile (at 10M nodes each leg costs
        tens of ms). Otherwise both legs are numpy calls of well under a ms, where a thread
        costs more than it saves."""
        return any(walks_index(p, self.ann) for p in view.parts)

    def __init__(self, store: SegmentedStore, ann: AnnConfig) -> None:
        self.store = store
        self.ann = ann  # how IVF indexes are probed
        self._graphs: dict[str, dict[str, list[Edge]]] = {}
        self._incoming: dict[str, dict[str, list[Edge]]] = {}
        self._layouts: dict[ViewKey, tuple[int, Layout]] = {}
        self._layout_lock = threading.Lock()

    def view(self, snapshots: Sequence[SnapshotInfo], principal: Principal,
             metadata: Mapping[str, Any]) -> View:
        return build_view(self.store, snapshots, principal, metadata, self.layout(snapshots))

    def layout(self, snapshots: Sequence[SnapshotInfo]) -> Layout:
        """The view's segments and what each holds of it (retrieve/view.py ``lay_out``), once
        per set of snapshots while the store keeps them where they are (a merge moves them:
        ``store.segment_generation``)."""
        generation, key = self.store.segment_generation, view_key(snapshots)
        found = self._layouts.get(key)
        if found is None or found[0] != generation:
            with self._layout_lock:  # one thread lays a new view out, the others wait for it
                found = self._layouts.get(key)
                if found is None or found[0] != generation:
                    found = (generation, lay_out(self.store, snapshots))
                    _remember(self._layouts, key, found)
        return found[1]

    def notes(self, view: View) -> list[str]:
        stale = [f"snapshot {i.snapshot_id} was indexed with analyzer version "
                 f"{p.segment.meta.get('analyzer')} (now {ANALYZER_VERSION}): re-ingest it so "
                 "its tokens match the query's" for p in view.parts
                 if p.segment.meta.get("analyzer") != ANALYZER_VERSION for i in p.seen_infos]
        walked = [_named(view.parts[i].seen_infos) for i in view.approximate
                  if view.parts[i].seen]
        if walked:
            stale.append("semantic ranking is approximate (IVF index) in snapshot(s) "
                         + ", ".join(walked))
        return stale

    def seen(self, view: View) -> list[SnapshotInfo]:
        return view.seen

    def seen_ids(self, view: View) -> list[str]:
        """Shared with the view's layout (read-only: SharedList), not copied per read."""
        return view.seen_ids

    def seen_snapshots(self, snapshots: Sequence[SnapshotInfo],
                       principal: Principal) -> set[str]:
        return {s.snapshot_id for s in snapshots if principal.all_access
                or bool(self._rows(s.snapshot_id, principal).any())}

    def _rows(self, snapshot_id: str, principal: Principal) -> npt.NDArray[np.bool_]:
        """What ``principal`` may see of the snapshot's own rows, in its node order."""
        return self.store.segment(snapshot_id).visible_in(snapshot_id, principal)

    def snapshot_counts(self, snapshots: Sequence[SnapshotInfo], principal: Principal
                        ) -> dict[str, tuple[int, int, int]]:
        out: dict[str, tuple[int, int, int]] = {}
        for info in snapshots:
            sid = info.snapshot_id
            mask = None if principal.all_access else self._rows(sid, principal)
            if mask is None or mask.all():
                out[sid] = (info.documents, info.nodes, info.edges)
            elif mask.any():
                out[sid] = self._partial_counts(sid, mask)
        return out

    def _partial_counts(self, sid: str, mask: npt.NDArray[np.bool_]) -> tuple[int, int, int]:
        """Counts of a snapshot the caller sees part of, read from the store (its rows are
        in ordinal order, as the mask)."""
        documents = self.store.node_documents(sid)
        seg = self.store.segment(sid)
        first, _ = seg.member_range(sid)
        visible = {seg.ids[first + o] for o in np.flatnonzero(mask).tolist()}
        edges = sum(1 for from_id in self.store.edge_sources(sid) if from_id in visible)
        return (len({d for d, m in zip(documents, mask.tolist(), strict=True) if m}),
                len(visible), edges)

    def has_vectors(self, view: View) -> bool:
        return any(p.segment.vectors is not None for p in view.parts)

    def bm25(self, view: View, weights: Mapping[str, float], depth: int, k1: float,
             b: float) -> list[Candidate]:
        return search_bm25(view, weights, depth, k1, b)

    def dense(self, view: View, embed: EmbedQuery, query: str, depth: int) -> list[Candidate]:
        return search_dense(view, embed, query, depth, self.ann)

    def named(self, view: View, ids: Sequence[str]) -> list[Candidate]:
        return named_nodes(view, ids)

    def code_ids(self, view: View, names: Sequence[identifiers.Name]) -> list[str]:
        return identifiers.segment_matches(view, names)

    def idf_weights(self, view: View, tokens: Sequence[str]) -> IdfWeights:
        return idf_weights(view, tokens)

    def node_vectors(self, view: View, embed: EmbedQuery, query: str,
                     nodes: Sequence[tuple[str, str]]) -> Vectors:
        return node_vectors(view, embed, query, nodes)

    def graph(self, view: View) -> GraphAccess:
        return _SegmentGraph(self, view)

    def visible_texts(self, view: View, ids: Sequence[str]) -> dict[str, str]:
        graph = _SegmentGraph(self, view)
        wanted: dict[str, list[tuple[str, int]]] = {}
        for node_id in ids:
            parts = graph.holders(node_id)
            if parts:
                part = view.parts[parts[0]]
                sid, local = part.local(_row(part, node_id))
                wanted.setdefault(sid, []).append((node_id, local))
        texts: dict[str, str] = {}
        for sid, pairs in wanted.items():
            nodes = self.store.nodes_by_ordinal(sid, [o for _, o in pairs])
            texts.update({node_id: n.text for (node_id, _), n in zip(pairs, nodes, strict=True)})
        return texts

    def around(self, view: View, node_id: str, n: int) -> list[Node]:
        parts = _SegmentGraph(self, view).holders(node_id)
        if not parts:
            return []
        part = view.parts[parts[0]]
        ordinal = _row(part, node_id)
        sid, local = part.local(ordinal)
        first = ordinal - local  # the snapshot's rows: its nodes' neighbours are its own
        end = first + part.segment.member_range(sid)[1]
        near = range(max(first, ordinal - n), min(end, ordinal + n + 1))
        shown = [o - first for o in near if part.mask[o]]
        nodes = self.store.nodes_by_ordinal(sid, shown)
        document = nodes[shown.index(local)].document_id
        return [node for node in nodes if node.document_id == document]

    def follow_citations(self, view: View, ranked: list[Candidate],
                         weights: Mapping[str, float], settings: Settings
                         ) -> tuple[list[Candidate], MultiHopResult | None]:
        """Citations of the ranked passages, up to ``multi_hop_max`` hops, kept when their
        BM25 score is at least ``multi_hop_threshold`` of the best hit's (relevance)."""
        cited_parts = [p for p in view.parts
                       if set(p.segment.meta.get("relations", ())) & CITATION_RELATIONS]
        if not cited_parts or settings.multi_hop_max < 1:
            return [], None
        graph = _SegmentGraph(self, view)
        scores = bm25_scores(view, weights, settings.bm25_k1, settings.bm25_b)

        def score(node_id: str) -> float:
            parts = graph.holders(node_id)
            if not parts:
                return 0.0
            value = float(scores[parts[0]][_row(view.parts[parts[0]], node_id)])
            return value if np.isfinite(value) else 0.0

        def place(ids: Sequence[str]) -> list[Candidate]:
            found = named_nodes(view, ids)
            return [c._replace(score=score(c.id)) for c in found]

        return _follow(ranked, graph, score, place, settings)

    def outgoing(self, part: ViewPart, node_id: str) -> list[Edge]:
        """Edges leaving ``node_id`` in one snapshot: from its segment, or for a segment
        written before segments held edges (format 1), from the store, read once."""
        segment = part.segment
        ordinal = _row(part, node_id)
        if segment.has_edges:
            return [Edge(node_id, rel, to) for rel, to in segment.outgoing(ordinal)]
        sid = part.local(ordinal)[0]
        if sid not in self._graphs:
            self._graphs[sid] = adjacency(self.store.edge_triples(sid))
        return self._graphs[sid].get(node_id, [])

    def incoming(self, part: ViewPart, node_id: str) -> list[Edge]:
        """Edges of the part's snapshots into ``node_id`` (any source): from the segment's
        edges, only those leaving the part's rows; for a segment written before segments held
        edges (one snapshot, never merged), from the store, read once."""
        seg = part.segment
        if seg.has_edges:
            return [Edge(seg.ids[row], relation, node_id)
                    for row, relation in seg.incoming(node_id)
                    if part.present is None or part.present[row]]
        sid = part.infos[0].snapshot_id
        if sid not in self._incoming:
            self._incoming[sid] = reverse_adjacency(self.store.edge_triples(sid))
        return self._incoming[sid].get(node_id, [])


def _named(infos: Sequence[SnapshotInfo]) -> str:
    """Snapshots named in a note: a few by id, a merged segment's many by count."""
    if len(infos) <= NAMED:
        return ", ".join(i.snapshot_id for i in infos)
    return f"{len(infos)} snapshots of one merged segment"


NAMED = 3


def _row(part: ViewPart, node_id: str) -> int:
    """The row of ``node_id``, which the part holds (the caller asked its holders)."""
    found = part.row(node_id)
    if found is None:
        raise KeyError(node_id)
    return found


class _SegmentGraph:
    def __init__(self, access: SegmentAccess, view: View) -> None:
        self.access, self.view = access, view

    def holders(self, node_id: str) -> list[int]:
        """The parts where the caller sees ``node_id``."""
        return [i for i, p in enumerate(self.view.parts)
                if (o := p.row(node_id)) is not None and bool(p.mask[o])]

    def status(self, node_id: str) -> NodeStatus:
        if self.holders(node_id):
            return "visible"
        exists = any(p.row(node_id) is not None for p in self.view.parts)
        return "hidden" if exists else "missing"

    def outgoing(self, node_id: str) -> list[Edge]:
        return [e for i in self.holders(node_id)
                for e in self.access.outgoing(self.view.parts[i], node_id)]

    def incoming(self, node_id: str) -> list[Edge]:
        if not self.holders(node_id):
            return []
        found = {(e.from_id, e.relation): e for part in self.view.parts
                 for e in self.access.incoming(part, node_id)
                 if (o := part.row(e.from_id)) is not None and bool(part.mask[o])}
        return [found[key] for key in sorted(found, key=lambda k: (k[1], k[0]))]

    def prefetch(self, ids: Sequence[str]) -> None:
        """Nothing to do: the segments are memory-mapped."""
