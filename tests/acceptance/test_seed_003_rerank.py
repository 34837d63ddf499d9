"""Seed 003, the optional rerank pass of the ask pipeline (over-fetch, then narrow).

The seed checked two behaviours of a RAG query: without a reranker the chunks reaching the
answer are exactly the retrieved ones, in order, and no chunk-selection (focus) event is
emitted; with a reranker the chunks are reordered and truncated to its results, and a focus
event carries the survivors' scores and node references. Here on a real corpus of three
one-chunk files (A, B, C below) and the engine's real search: the one test double is the
reranker where exact scores matter (``FixedReranker``, the seed's stub, a seam of the
``Reranker`` protocol); the orchestration is also run once with a real reranker
(``features``), and end to end through ``Engine.ask``.

The question "What about store purchase returns and refunds?" has exactly two offline concepts,
``store purchase returns`` (BM25 finds A, then B) and ``refunds`` (C), so retrieval yields
A, B, C in that order (the seed's fixture) and the seed's arithmetic holds: per concept =
fetch count // 2. After the concepts, the question itself is searched with the whole fetch
count (excerpt's addition: its ranking sees every word at once); here it finds nothing new.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest
from rdflib import Literal, URIRef

from excerpt.compose.ask import (
    OVERFETCH_FACTOR,
    AskOptions,
    AskPipeline,
    AskResult,
    fetch_count,
    per_concept,
)
from excerpt.compose.grounding import concepts
from excerpt.engine import Engine
from excerpt.provenance import prov
from excerpt.provenance.prov import ExplainEvent
from excerpt.query.question import Question
from excerpt.rerank import get_reranker
from excerpt.rerank.base import Reranker, RerankResult
from excerpt.types import Filters, Hit, SearchMode
from tests.llm import READERS, reader_client

QUESTION = "What about store purchase returns and refunds?"
CONCEPTS = ["store purchase returns", "refunds"]
WHOLE = "store purchase returns refunds?"  # the question without its framing words
NOTHING = "What about zebra xylophones?"  # matches no word of the corpus

CHUNK_A = "Customers may return items within 30 days of purchase."
CHUNK_B = "Our stores are open from 9am to 5pm on weekdays."
CHUNK_C = "Refunds are processed to the original payment method."
ORDERED_CONTENT = [CHUNK_A, CHUNK_B, CHUNK_C]  # retrieval order (after merge and dedupe)
NODE_A, NODE_B, NODE_C = "a.txt:0000", "b.txt:0000", "c.txt:0000"
ORDERED_IDS = [NODE_A, NODE_B, NODE_C]

STAGE_CLASSES = {"question": prov.QUESTION, "grounding": prov.GROUNDING,
                 "exploration": prov.EXPLORATION, "focus": prov.FOCUS,
                 "synthesis": prov.SYNTHESIS}


# -- corpus and seams -------------------------------------------------------------------------


@dataclass
class Corpus:
    engine: Engine
    snapshot_id: str


@pytest.fixture
def corpus(tmp_path: Path) -> Iterator[Corpus]:
    folder = tmp_path / "policy"
    folder.mkdir()
    for name, text in (("a.txt", CHUNK_A), ("b.txt", CHUNK_B), ("c.txt", CHUNK_C)):
        (folder / name).write_text(text + "\n", encoding="utf-8")
    engine = Engine(tmp_path / "home")
    result = engine.ingest(folder, collection="policy", embedder="none")
    assert (result.status, result.documents, result.nodes) == ("completed", 3, 3)
    assert result.snapshot_id is not None
    assert list(engine.store.segment(result.snapshot_id).ids) == ORDERED_IDS
    yield Corpus(engine, result.snapshot_id)
    engine.close()


@dataclass(frozen=True)
class SearchCall:
    query: str
    k: int
    scope: dict[str, Any]


class RecordingSearch:
    """The engine's real search, as ``Engine.ask`` wires it, recording (query, k, scope)."""

    def __init__(self, engine: Engine, filters: Filters | None = None) -> None:
        self.engine = engine
        self.filters = filters or Filters("policy")
        self.calls: list[SearchCall] = []

    def __call__(self, query: str, k: int, scope: Mapping[str, Any]) -> list[Hit]:
        self.calls.append(SearchCall(query, k, dict(scope)))
        scoped = replace(self.filters, metadata={**self.filters.metadata, **scope})
        return self.engine.search(query, scoped, None, "hybrid", k).hits


@dataclass(frozen=True)
class RerankCall:
    query: str
    documents: list[str]
    limit: int


class FixedReranker:
    """The seed's stub: C (index 2) best at 0.95, then A (index 0) at 0.42, B dropped; sorted
    and truncated as the protocol promises. Records every call."""

    name = "fixed"

    def __init__(self) -> None:
        self.calls: list[RerankCall] = []

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        self.calls.append(RerankCall(query, list(documents), limit))
        return [RerankResult(index=2, score=0.95), RerankResult(index=0, score=0.42)]


def run(corpus: Corpus, reranker: Reranker | None, question: str = QUESTION,
        options: AskOptions | None = None,
        filters: Filters | None = None) -> tuple[AskResult, list[ExplainEvent], RecordingSearch]:
    search = RecordingSearch(corpus.engine, filters)
    events: list[ExplainEvent] = []
    result = AskPipeline(search=search, reranker=reranker).run(question, options, events.append)
    return result, events, search


# -- triple helpers ---------------------------------------------------------------------------


def objects(event: ExplainEvent, subject: str, predicate: str) -> list[Any]:
    return [o for s, p, o in event.triples if s == URIRef(subject) and p == URIRef(predicate)]


def has_type(event: ExplainEvent, subject: str, rdf_type: str) -> bool:
    return URIRef(rdf_type) in objects(event, subject, prov.RDF_TYPE)


def derived_from(event: ExplainEvent) -> str | None:
    found = objects(event, event.id, prov.PROV_WAS_DERIVED_FROM)
    assert len(found) <= 1
    return str(found[0]) if found else None


def assert_stages(events: list[ExplainEvent], stages: list[str]) -> None:
    assert [e.stage for e in events] == stages
    for event in events:
        assert has_type(event, event.id, STAGE_CLASSES[event.stage])


def selection_types(events: list[ExplainEvent]) -> list[Any]:
    return [o for e in events for _, p, o in e.triples
            if p == URIRef(prov.RDF_TYPE) and o == URIRef(prov.NODE_SELECTION)]


def test_the_question_has_two_concepts_and_retrieval_order_is_a_b_c(corpus: Corpus) -> None:
    assert concepts(QUESTION) == CONCEPTS
    result, _, search = run(corpus, None)
    assert [c.query for c in search.calls] == [*CONCEPTS, WHOLE]
    assert [p.node.text for p in result.candidates] == ORDERED_CONTENT
    assert [p.node.id for p in result.candidates] == ORDERED_IDS


# -- 1. no reranker: nothing changes ----------------------------------------------------------


def test_without_reranker_documents_are_the_candidates_unchanged(corpus: Corpus) -> None:
    result, _, search = run(corpus, None)
    assert result.reranker is None
    assert result.documents == result.candidates  # same nodes, same order, same scores
    assert [p.node.text for p in result.documents] == ORDERED_CONTENT
    cited = {c.node_id for c in result.composed.citations}
    assert cited and cited <= set(ORDERED_IDS)
    # no over-fetch without a reranker: fetch = doc_limit (10) -> 10 // 2 per concept
    assert [c.k for c in search.calls] == [5, 5, 10]


def test_without_reranker_four_events_and_no_node_selection(corpus: Corpus) -> None:
    result, events, _ = run(corpus, None)
    assert_stages(events, ["question", "grounding", "exploration", "synthesis"])
    assert result.recorder is not None and result.recorder.events == events
    assert not selection_types(events)
    assert not any(objects(e, e.id, prov.SELECTED) for e in events)


def test_without_reranker_synthesis_derives_from_exploration(corpus: Corpus) -> None:
    _, events, _ = run(corpus, None)
    exploration, synthesis = events[2], events[3]
    assert derived_from(synthesis) == exploration.id


# -- 2. with a reranker: reorder, truncate, over-fetch, focus ---------------------------------


def test_rerank_reorders_and_truncates_the_documents(corpus: Corpus) -> None:
    result, _, _ = run(corpus, FixedReranker())
    assert result.reranker == "fixed"
    assert [p.node.text for p in result.candidates] == ORDERED_CONTENT
    assert [p.node.text for p in result.documents] == [CHUNK_C, CHUNK_A]
    assert [(p.node.id, p.score) for p in result.documents] == [(NODE_C, 0.95), (NODE_A, 0.42)]
    cited = {c.node_id for c in result.composed.citations}
    assert cited and cited <= {NODE_C, NODE_A}  # B never reaches composition


def test_reranker_called_once_with_the_question_and_all_candidates(corpus: Corpus) -> None:
    reranker = FixedReranker()
    run(corpus, reranker, options=AskOptions(doc_limit=2))
    assert reranker.calls == [RerankCall(QUESTION, ORDERED_CONTENT, 2)]  # limit: doc_limit


@pytest.mark.parametrize(
    ("doc_limit", "fetch_limit", "fetched", "k"),
    [
        (6, 60, 60, 30),    # an explicit fetch_limit over-fetches, honoured as given
        (20, None, 60, 30),  # none given: OVERFETCH_FACTOR x doc_limit
        (10, 4, 10, 5),     # below doc_limit: floored up to doc_limit
    ],
    ids=["explicit", "default-overfetch", "floored"],
)
def test_fetch_limit_over_fetches_then_rerank_narrows_to_doc_limit(
        corpus: Corpus, doc_limit: int, fetch_limit: int | None, fetched: int,
        k: int) -> None:
    assert OVERFETCH_FACTOR == 3
    assert fetch_count(doc_limit, fetch_limit, reranking=True) == fetched
    assert per_concept(fetched, len(CONCEPTS)) == k
    reranker = FixedReranker()
    _, _, search = run(corpus, reranker,
                       options=AskOptions(doc_limit=doc_limit, fetch_limit=fetch_limit))
    assert [(c.query, c.k) for c in search.calls] == [(CONCEPTS[0], k), (CONCEPTS[1], k),
                                                      (WHOLE, fetched)]
    assert [c.limit for c in reranker.calls] == [doc_limit]  # not fetch_limit


def test_without_reranker_fetch_is_doc_limit_whatever_fetch_limit(corpus: Corpus) -> None:
    assert fetch_count(6, 60, reranking=False) == 6
    _, _, search = run(corpus, None, options=AskOptions(doc_limit=6, fetch_limit=60))
    assert [c.k for c in search.calls] == [3, 3, 6]


def test_over_fetch_holds_with_a_real_reranker(corpus: Corpus) -> None:
    reranker = get_reranker("features")
    result, events, search = run(corpus, reranker,
                                 options=AskOptions(doc_limit=2, fetch_limit=60))
    assert [c.k for c in search.calls] == [30, 30, 60]
    assert [p.node.text for p in result.candidates] == ORDERED_CONTENT
    assert len(result.documents) == 2
    assert {p.node.id for p in result.documents} <= set(ORDERED_IDS)
    assert_stages(events, ["question", "grounding", "exploration", "focus", "synthesis"])
    focus = events[3]
    selections = [str(o) for o in objects(focus, focus.id, prov.SELECTED)]
    refs = [prov.parse_node_iri(str(objects(focus, s, prov.NODE_REF)[0])) for s in selections]
    assert refs == [(p.snapshot_id, p.node.id) for p in result.documents]
    scores = [str(objects(focus, s, prov.SCORE)[0]) for s in selections]
    assert scores == [prov.format_score(p.score) for p in result.documents]
    assert derived_from(events[4]) == focus.id


def test_rerank_emits_five_events_with_focus_fourth(corpus: Corpus) -> None:
    _, events, _ = run(corpus, FixedReranker())
    assert_stages(events, ["question", "grounding", "exploration", "focus", "synthesis"])


def test_focus_carries_scores_and_node_references(corpus: Corpus) -> None:
    _, events, _ = run(corpus, FixedReranker())
    exploration, focus = events[2], events[3]
    assert derived_from(focus) == exploration.id
    links = objects(focus, focus.id, prov.SELECTED)
    assert len(links) == 2
    assert len(selection_types(events)) == 2  # one NodeSelection per survivor, none elsewhere
    refs, scores = [], []
    for link in links:
        selection = str(link)
        assert has_type(focus, selection, prov.NODE_SELECTION)
        (node,) = objects(focus, selection, prov.NODE_REF)
        refs.append(prov.parse_node_iri(str(node)))
        (score,) = objects(focus, selection, prov.SCORE)
        assert isinstance(score, Literal)
        scores.append(str(score))
    snapshot = corpus.snapshot_id
    assert refs == [(snapshot, NODE_C), (snapshot, NODE_A)]  # B dropped
    assert scores == ["0.95", "0.42"]


def test_all_focus_triples_are_in_the_retrieval_graph(corpus: Corpus) -> None:
    result, events, _ = run(corpus, FixedReranker())
    focus = events[3]
    assert focus.graph == prov.RETRIEVAL_GRAPH == "urn:graph:retrieval"
    assert result.recorder is not None
    dataset = result.recorder.dataset()
    graph = dataset.graph(URIRef(prov.RETRIEVAL_GRAPH))
    assert focus.triples
    for triple in focus.triples:
        assert triple in graph
    assert len(dataset.default_graph) == 0


def test_synthesis_derives_from_focus_when_reranking(corpus: Corpus) -> None:
    _, events, _ = run(corpus, FixedReranker(), options=AskOptions(doc_limit=2))
    focus, synthesis = events[3], events[4]
    assert derived_from(synthesis) == focus.id


def test_no_candidates_skips_the_reranker_and_the_focus(corpus: Corpus) -> None:
    reranker = FixedReranker()
    result, events, search = run(corpus, reranker, question=NOTHING)
    assert search.calls and result.candidates == [] and result.documents == []
    assert reranker.calls == []
    assert_stages(events, ["question", "grounding", "exploration", "synthesis"])
    assert derived_from(events[3]) == events[2].id


def test_a_filter_matching_nothing_skips_the_reranker(corpus: Corpus) -> None:
    reranker = FixedReranker()
    nowhere = Filters("policy", metadata={"path": "nowhere.txt"})
    result, events, _ = run(corpus, reranker, filters=nowhere)
    assert result.candidates == [] and reranker.calls == []
    assert "focus" not in [e.stage for e in events]


# -- through Engine.ask ------------------------------------------------------------------------


def test_engine_ask_with_a_real_reranker_end_to_end(corpus: Corpus) -> None:
    engine = corpus.engine
    searches: list[int | None] = []
    real_search = engine._search  # each of the ask's searches, over the view it opened once

    def spy(view: Any, query: str, filters: Any, principal: Any, mode: Any, k: int | None,
            *rest: Any) -> Any:
        searches.append(k)
        return real_search(view, query, filters, principal, mode, k, *rest)

    engine._search = spy  # type: ignore[method-assign]
    events: list[ExplainEvent] = []
    result = engine.ask(QUESTION, Filters("policy"), reranker="features",
                        options=AskOptions(doc_limit=2), explain=events.append, record=True)
    out = json.loads(json.dumps(result.to_json(explain=True)))
    assert out["reranker"] == "features"
    # 3 x 2 = 6 -> 3 per concept, then the question with all 6
    assert searches == [per_concept(OVERFETCH_FACTOR * 2, 2)] * 2 + [OVERFETCH_FACTOR * 2]
    assert [p["stage"] for p in out["provenance"]] == [
        "question", "grounding", "exploration", "focus", "synthesis"]
    assert [p["stage"] for p in out["provenance"]] == [e.stage for e in events]
    assert len(out["documents"]) == 2
    assert {d["id"] for d in out["documents"]} <= set(ORDERED_IDS)
    assert "rerank" in out["timings_ms"]


def test_engine_ask_without_reranker_end_to_end(corpus: Corpus) -> None:
    for name in (None, "none"):
        result = corpus.engine.ask(QUESTION, Filters("policy"), reranker=name, record=True)
        out = result.to_json(explain=True)
        assert out["reranker"] is None
        assert [p["stage"] for p in out["provenance"]] == [
            "question", "grounding", "exploration", "synthesis"]
        assert [d["id"] for d in out["documents"]] == ORDERED_IDS


def test_the_question_search_adds_what_no_concept_finds(tmp_path: Path) -> None:
    """Concepts split "Who painted the portrait of Dorian Gray?" into ``painted``,
    ``portrait`` and ``Dorian Gray``; with one passage each (doc_limit 3) every concept's best
    passage is a distractor, and only the whole question ranks the passage that holds all
    three words first."""
    folder = tmp_path / "book"
    folder.mkdir()
    texts = {"a.txt": "He painted landscapes of the river all summer.",
             "b.txt": "The portrait hung in the hall, covered with a purple cloth.",
             "c.txt": "Dorian Gray laughed at the old men in the club.",
             "d.txt": "Basil Hallward painted the portrait of Dorian Gray in his studio."}
    for name, text in texts.items():
        (folder / name).write_text(text + "\n", encoding="utf-8")
    engine = Engine(tmp_path / "home")
    engine.ingest(folder, collection="book", embedder="none")
    question = "Who painted the portrait of Dorian Gray?"
    search = RecordingSearch(engine, Filters("book"))
    result = AskPipeline(search=search).run(question, AskOptions(doc_limit=3))
    assert [c.query for c in search.calls] == ["painted", "portrait", "Dorian Gray",
                                               "painted portrait Dorian Gray?"]
    concept_hits = [p.node.id for p in result.candidates][:3]
    assert "d.txt:0000" not in concept_hits and "d.txt:0000" in {
        p.node.id for p in result.candidates}
    assert "Basil Hallward" in result.composed.answer
    single = RecordingSearch(engine, Filters("book"))
    AskPipeline(search=single).run("Basil", AskOptions(doc_limit=3))
    assert [c.query for c in single.calls] == ["Basil"]  # its own single concept: once
    engine.close()


@pytest.mark.parametrize(("mode", "whole"), [
    ("bm25", WHOLE),
    ("hybrid", QUESTION),
])
def test_engine_ask_searches_the_question_as_its_ranking_reads_it(
        corpus: Corpus, mode: SearchMode, whole: str) -> None:
    """BM25 alone gets the question without its framing words ("what" would match any
    "what"); a dense ranking gets it as typed (bench/qa_retrieval.py: 0.92 of the book
    questions reach a passage with their facts this way in hybrid, 0.79 without the words)."""
    engine = corpus.engine
    queries: list[str] = []
    real_search = engine._search  # each of the ask's searches, over the view it opened once

    def spy(view: Any, query: Question, *rest: Any) -> Any:
        queries.append(query.text)  # the ask passes each text it searches as read once
        return real_search(view, query, *rest)

    engine._search = spy  # type: ignore[method-assign]
    engine.ask(QUESTION, Filters("policy"), mode=mode)
    assert queries == [*CONCEPTS, whole]


# -- 3. whoever reads: the stages and their derivations are the reader's too ------------------


@pytest.mark.parametrize("name", READERS)
@pytest.mark.parametrize("reranking", [False, True])
def test_every_reader_keeps_the_stages_and_records_itself(corpus: Corpus, name: str,
                                                           reranking: bool) -> None:
    with reader_client(name) as client:
        search = RecordingSearch(corpus.engine)
        events: list[ExplainEvent] = []
        result = AskPipeline(search=search, reranker=FixedReranker() if reranking else None,
                             llm=client, reader_name=name).run(
            QUESTION, AskOptions(doc_limit=2), events.append)
    stages = ["question", "grounding", "exploration", *(["focus"] if reranking else []),
              "synthesis"]
    assert_stages(events, stages)
    synthesis = events[-1]
    assert derived_from(synthesis) == events[-2].id
    assert [str(o) for o in objects(synthesis, synthesis.id, prov.READER)] == [name]
    fell_back = [str(o) for o in objects(synthesis, synthesis.id, prov.FELL_BACK)]
    assert fell_back == [str(result.reader["fell_back"]).lower()]
    cited = {c.node_id for c in result.composed.citations}
    allowed = {NODE_C, NODE_A} if reranking else set(ORDERED_IDS)
    assert cited and cited <= allowed  # whoever reads, only what focus passed on is cited
