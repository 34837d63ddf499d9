"""One search over an open view, stage by stage: read the query once (language, tokens, the
expansion and adaptive k of query/: a :class:`excerpt.query.question.Question`; an ask passes
the question it read already), rank it (BM25, dense, or both fused: the legs at once when the
dense one walks an index or a database answers both), pin the nodes it names first, rerank
(over-fetching ``OVERFETCH_FACTOR`` x k), follow citations, and read the hit rows.  The engine
opens the view and traces the result; an ask runs its searches here over the one view it
opened (engine.py).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from excerpt import telemetry
from excerpt.errors import InputError
from excerpt.query.question import Question
from excerpt.query.topk import TopK, reduce_for_latency
from excerpt.retrieve.access import Access
from excerpt.retrieve.citations import pin_named
from excerpt.retrieve.fusion import blend, rrf
from excerpt.retrieve.identifiers import view_has_code
from excerpt.retrieve.view import Candidate, View
from excerpt.settings import Settings
from excerpt.types import Filters, Hit, Node, Principal, SearchMode

if TYPE_CHECKING:
    from excerpt.rerank.contract import Reranker
    from excerpt.retrieve.dense import QueryEmbedder

OVERFETCH_FACTOR = 3
"""A search that reranks ranks this many times the hits it keeps, and the reranker narrows them
(seed 003: over-fetch, then focus)."""

_LEGS = ThreadPoolExecutor(max_workers=4, thread_name_prefix="excerpt-leg")
"""Runs the dense leg of a hybrid search beside the lexical one, for stores that rank in SQL."""


@dataclass(frozen=True)
class SearchResult:
    query: str
    mode: SearchMode
    k: int
    filters: dict[str, Any]
    hits: list[Hit]
    analysis: dict[str, Any]
    timings_ms: dict[str, float] = field(default_factory=dict)
    ranking: list[tuple[str, float, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "mode": self.mode,
            "k": self.k,
            "filters": self.filters,
            "hits": [h.to_json() for h in self.hits],
            "analysis": self.analysis,
            "timings_ms": {k: round(v, 3) for k, v in self.timings_ms.items()},
        }


class Searcher:
    """The search stages of one engine: its ranking backend, settings, how hit rows are read,
    its warmed query embedders and its rerankers by name."""

    def __init__(self, access: Access, settings: Settings,
                 nodes_at: Callable[[Sequence[tuple[str, int]]], list[Node]],
                 warm: Callable[[str], Any], reranker: Callable[[str], Reranker]) -> None:
        self.access, self.settings = access, settings
        self._nodes_at, self._warm, self._reranker = nodes_at, warm, reranker

    def read(self, text: str) -> Question:
        """``text`` read once as every stage of a search or an ask reads it (query/question.py),
        with this engine's query lexicon and expansion weight."""
        return Question.read(text, self.settings.query_lexicon, self.settings.expansion_weight)

    def search(self, view: View, query: str | Question, filters: Filters,
               principal: Principal, mode: SearchMode, k: int | None, fetch: bool,
               reranker: str | None, t0: float) -> SearchResult:
        """Rank ``view`` for ``query`` (``filters`` as ``principal``: what the result says
        was applied), the clock started at ``t0``: analysis, the legs and their fusion, the
        nodes the query names first, the reranker (over-fetching), citation hops, the hit
        rows (``fetch``). A text is read here (timed as analysis); a :class:`Question` an ask
        has read already is not read again."""
        timings: dict[str, float] = {}
        # each stage starts where the last ended (telemetry.lap): together they are the search
        timings["filter"], t1 = telemetry.lap("filter", t0)
        question = query if isinstance(query, Question) else self.read(query)
        text, plan, weights = question.text, question.plan, question.weights
        timings.update(plan.timings_ms)
        top, k_reason = self._top_k(k, plan.top_k)
        if mode != "bm25":
            for model in sorted({m for p in view.parts if (m := p.embed_model)}):
                self._warm(model)
        timings["analyze"], t2 = telemetry.lap("analyze", t1)
        reranking = reranker not in (None, "none")
        depth = top
        if reranking:
            self._reranker(str(reranker))  # an unknown name is refused even with no hits
            depth = top * OVERFETCH_FACTOR
        with telemetry.stage("rank", started=t2) as rank:  # a span only: the legs, fusion
            ranked, notes = self._rank(view, text, weights, mode, depth, timings)
        t_pin = rank.ended
        if k is None and plan.top_k is not None:  # retrieval time; one-off model loads excluded
            reduced = reduce_for_latency(plan.top_k, (time.perf_counter() - t2) * 1000,
                                         self.settings.search_budget_ms)
            top, k_reason, ranked = reduced.k, reduced.reason, ranked[: reduced.k]
        ranked, named = pin_named(text, ranked, lambda ids: self.named(view, text, ids))
        _, t_next = telemetry.lap("pin", t_pin)  # a span only: the JSON's timings never had it
        if reranking and len(ranked) > len(named):
            ranked = self._rerank(view, text, ranked, top, str(reranker), len(named))
            timings["rerank"], t_next = telemetry.lap("rerank", t_next)
        ranked = ranked[:top]
        hopped, hop_report = self.access.follow_citations(
            view, ranked, weights, self.settings) if ranked else ([], None)
        hop_ms, t3 = telemetry.lap("expand", t_next)  # span "expand" is timings' multi_hop
        if hop_report is not None:
            timings["multi_hop"] = hop_ms
            ranked = ranked + hopped
        hits = self.fetch(view, ranked) if fetch else []
        timings["fetch"], t4 = telemetry.lap("fetch", t3, {"excerpt.hits": len(hits)})
        analysis = {
            **_read(question, k_reason), "visible_nodes": view.visible,
            **({"named_nodes": named} if named else {}),
            "notes": notes,
            **({"multi_hop": hop_report.to_json()} if hop_report is not None else {}),
        }
        ranking = [(c.id, c.score, view.parts[c.part].info_at(c.ordinal).snapshot_id)
                   for c in ranked]
        result = SearchResult(text, mode, top, self._applied(view, filters, principal), hits,
                              analysis, timings, ranking)
        telemetry.elapsed("report", t4)  # a span only: the analysis, the ranking, the filters
        timings["total"] = (time.perf_counter() - t0) * 1000
        return result

    def _applied(self, view: View, filters: Filters, principal: Principal) -> dict[str, Any]:
        """What a search says was applied: the filters, the snapshots seen, the principal."""
        return {
            "collection": filters.collection,
            "snapshot_ids": self.access.seen_ids(view),
            **({"snapshot_id": filters.snapshot_id} if filters.snapshot_id else {}),
            **({"snapshot_set": filters.snapshot_set} if filters.snapshot_set else {}),
            **({"metadata": dict(filters.metadata)} if filters.metadata else {}),
            **principal.describe(),
        }

    def named(self, view: View, query: str, ids: Sequence[str]) -> list[Candidate]:
        """Nodes a search pins first: those whose id the query gives (retrieve/citations.py),
        then the code objects it names or asks about (retrieve/relations.py), each once."""
        exact = self.access.named(view, ids)
        if isinstance(view, View) and not view_has_code(view):
            return exact  # no code node to name: code_pins would find nothing
        from excerpt.retrieve.relations import code_pins

        code = code_pins(query, lambda names: self.access.code_ids(view, names),
                         lambda: self.access.graph(view))
        known = {c.id for c in exact}
        return exact + self.access.named(view, [i for i in code if i not in known])

    def _rerank(self, view: View, query: str, ranked: list[Candidate], top: int, name: str,
                pinned: int) -> list[Candidate]:
        head, pool = ranked[:pinned], ranked[pinned:]
        texts = [hit.node.text for hit in self.fetch(view, pool)]
        results = self._reranker(name).rerank(query, texts, top - pinned)
        return head + [pool[r.index]._replace(score=r.score) for r in results]

    def _top_k(self, given: int | None, adaptive: TopK | None) -> tuple[int, str]:
        if given is not None:
            return given, "given"
        if adaptive is not None:
            return adaptive.k, adaptive.reason
        return self.settings.default_k, "default"

    def _rank(
        self, view: View, query: str, tokens: Mapping[str, float], mode: SearchMode, k: int,
        timings: dict[str, float],
    ) -> tuple[list[Candidate], list[str]]:
        notes: list[str] = []
        ranked = self._legs(view, query, tokens, mode, k, timings, notes)
        return ranked, self.access.notes(view) + notes  # after the legs: how they ranked

    def _legs(
        self, view: View, query: str, tokens: Mapping[str, float], mode: SearchMode, k: int,
        timings: dict[str, float], notes: list[str],
    ) -> list[Candidate]:
        depth = max(k, self.settings.fusion_depth)
        want_lexical, want_dense = mode in ("bm25", "hybrid"), mode in ("semantic", "hybrid")
        if want_dense and not self.access.has_vectors(view):
            if mode == "semantic":
                raise InputError(
                    "no embeddings in this view: ingest with an embedder or use --mode bm25")
            notes.append("no embeddings in this view: hybrid ran BM25 only")
            want_dense = False
        if want_lexical and not tokens:
            notes.append("the query has no searchable terms for BM25")

        def lexical_leg() -> list[Candidate]:
            t = time.perf_counter()
            found = self.access.bm25(view, tokens, k if mode == "bm25" else depth,
                                     self.settings.bm25_k1, self.settings.bm25_b)
            timings["bm25"] = telemetry.elapsed("bm25", t, {"excerpt.candidates": len(found)})
            return found

        def dense_leg() -> list[Candidate]:
            t = time.perf_counter()
            found = self.access.dense(view, self.query_embedder, query,
                                      k if mode == "semantic" else depth)
            timings["semantic"] = telemetry.elapsed("semantic", t,
                                                    {"excerpt.candidates": len(found)})
            return found

        if want_lexical and want_dense and self.access.concurrent_legs(view):
            # A database answers both legs at once on two connections (each waits on I/O);
            # faiss walks an IVF index without the GIL.
            dense_future = _LEGS.submit(telemetry.carried(dense_leg))
            lexical, dense = lexical_leg(), dense_future.result()
        else:
            lexical = lexical_leg() if want_lexical else []
            dense = dense_leg() if want_dense else []
        if mode == "bm25":
            return lexical
        if mode == "semantic":
            return dense
        t = time.perf_counter()
        if self.settings.fusion == "blend":
            fused = blend(lexical, dense, k, self.settings.fusion_alpha)
        else:
            fused = rrf([lexical, dense], k, self.settings.rrf_k)
        timings["fusion"] = telemetry.elapsed("fusion", t)
        return fused

    def query_embedder(self, model: str) -> QueryEmbedder | None:
        return self._warm(model).embed_query  # type: ignore[no-any-return]

    def fetch(self, view: View, ranked: Sequence[Candidate]) -> list[Hit]:
        """The ranked nodes, read in one query (a merged segment's hits belong to many
        snapshots: each is read where the store keeps it, as (snapshot, ordinal))."""
        places: list[tuple[str, int]] = [view.parts[c.part].local(c.ordinal) for c in ranked]
        nodes = self._nodes_at(places)
        return [Hit(node, c.score, place[0])
                for c, node, place in zip(ranked, nodes, places, strict=True)]


def _read(question: Question, k_reason: str) -> dict[str, Any]:
    """How the query was read, as a search's analysis opens: language, tokens, entities, the
    terms added and why k is what it is."""
    plan = question.plan
    return {"language": question.language, "tokens": list(question.tokens),
            "entities": [{"text": e.text, "type": e.entity_type.value} for e in plan.entities],
            "expanded_terms": plan.expanded_terms, "k_reason": k_reason}
