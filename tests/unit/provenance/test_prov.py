"""PROV-O explain events of an ask: seed 003's provenance contract under excerpt's names.

Three candidates A, B, C are explored; the "reranker" keeps C (0.95) then A (0.42) and drops B,
as in the seed. The recorder is driven directly: these are orchestration-free unit tests.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from rdflib import Dataset, Graph, Literal, URIRef

from excerpt.provenance.prov import (
    CANDIDATE,
    CITES,
    CONCEPT,
    EXPLORATION,
    FOCUS,
    GROUNDING,
    HAS_CANDIDATE,
    NODE_ID,
    NODE_REF,
    NODE_SELECTION,
    PROV_WAS_DERIVED_FROM,
    QUERY,
    QUESTION,
    RDF_TYPE,
    RETRIEVAL_GRAPH,
    SCORE,
    SELECTED,
    SYNTHESIS,
    ExplainEvent,
    ProvenanceRecorder,
    format_score,
    node_iri,
    parse_node_iri,
)
from excerpt.types import Hit, Node


def hit(node_id: str, snapshot_id: str, score: float) -> Hit:
    """A search's hit, as the ask pipeline hands it to the recorder."""
    return Hit(Node(node_id, "policy-doc", f"The text of {node_id}."), score, snapshot_id)


QUESTION_TEXT = "What is the return policy?"
CONCEPTS = ["return policy", "refund"]
A = hit("policy-doc-1:chunk-0", "docs@1", 0.61)
B = hit("policy-doc-1:chunk-1", "docs@1", 0.55)
C = hit("policy-doc-1:chunk-2", "docs@1", 0.5)
RERANKED = [replace(C, score=0.95), replace(A, score=0.42)]  # as the ask's focus makes them
# rdflib 7.6's own serializers and parsers still call its deprecated ConjunctiveGraph API
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:rdflib.*")

ANSWER_TEXT = "Items can be returned within 30 days for a full refund."


def run(rerank: bool, ask_id: str | None = "ask-1", candidates: list[Hit] | None = None,
        ) -> tuple[ProvenanceRecorder, list[ExplainEvent]]:
    events: list[ExplainEvent] = []
    rec = ProvenanceRecorder(QUESTION_TEXT, events.append, ask_id=ask_id)
    explored = candidates if candidates is not None else [A, B, C]
    rec.question()
    rec.grounding(CONCEPTS)
    rec.exploration(explored)
    if rerank:
        rec.focus(RERANKED)
        rec.synthesis(ANSWER_TEXT, RERANKED)
    else:
        rec.synthesis(ANSWER_TEXT, explored)
    return rec, events


def objects(event: ExplainEvent, predicate: str, subject: str | None = None) -> list[object]:
    return [o for s, p, o in event.triples
            if str(p) == predicate and (subject is None or str(s) == subject)]


def has_type(event: ExplainEvent, subject: str, cls: str) -> bool:
    return URIRef(cls) in objects(event, RDF_TYPE, subject)


def derived_from(event: ExplainEvent) -> str | None:
    parents = objects(event, PROV_WAS_DERIVED_FROM, event.id)
    assert len(parents) <= 1
    return str(parents[0]) if parents else None


# -- without a reranker ---------------------------------------------------------------------

def test_no_rerank_chain_is_question_grounding_exploration_synthesis() -> None:
    rec, events = run(rerank=False)
    assert [e.stage for e in events] == ["question", "grounding", "exploration", "synthesis"]
    for event, cls in zip(events, [QUESTION, GROUNDING, EXPLORATION, SYNTHESIS], strict=True):
        assert has_type(event, event.id, cls)
    assert rec.events == events


def test_no_rerank_has_no_selection_entity_anywhere() -> None:
    _, events = run(rerank=False)
    for event in events:
        assert URIRef(NODE_SELECTION) not in objects(event, RDF_TYPE)
        assert objects(event, SELECTED) == []


def test_no_rerank_synthesis_derives_from_exploration() -> None:
    _, events = run(rerank=False)
    question, grounding, exploration, synthesis = events
    assert derived_from(question) is None
    assert derived_from(grounding) == question.id
    assert derived_from(exploration) == grounding.id
    assert derived_from(synthesis) == exploration.id


def test_question_concepts_and_answer_are_literals() -> None:
    _, events = run(rerank=False)
    assert objects(events[0], QUERY, events[0].id) == [Literal(QUESTION_TEXT)]
    assert sorted(map(str, objects(events[1], CONCEPT, events[1].id))) == sorted(CONCEPTS)
    answers = [o for _, _, o in events[3].triples if str(o) == ANSWER_TEXT]
    assert answers == [Literal(ANSWER_TEXT)]


def test_exploration_lists_every_candidate_with_its_score() -> None:
    _, events = run(rerank=False)
    exploration = events[2]
    subs = [str(o) for o in objects(exploration, HAS_CANDIDATE, exploration.id)]
    assert len(subs) == 3
    nodes = set()
    for sub in subs:
        assert has_type(exploration, sub, CANDIDATE)
        (node,) = objects(exploration, NODE_REF, sub)
        nodes.add(str(node))
    assert nodes == {node_iri(c.snapshot_id, c.node.id) for c in (A, B, C)}


# -- with a reranker ------------------------------------------------------------------------

def test_rerank_chain_has_focus_fourth() -> None:
    _, events = run(rerank=True)
    assert [e.stage for e in events] == ["question", "grounding", "exploration", "focus",
                                         "synthesis"]
    classes = [QUESTION, GROUNDING, EXPLORATION, FOCUS, SYNTHESIS]
    for event, cls in zip(events, classes, strict=True):
        assert has_type(event, event.id, cls)


def test_focus_carries_one_selection_per_survivor_with_node_and_score() -> None:
    _, events = run(rerank=True)
    exploration, focus = events[2], events[3]
    assert derived_from(focus) == exploration.id
    selections = [str(o) for o in objects(focus, SELECTED, focus.id)]
    assert len(selections) == 2
    refs, scores = set(), set()
    for sel in selections:
        assert has_type(focus, sel, NODE_SELECTION)
        (ref,) = objects(focus, NODE_REF, sel)
        (score,) = objects(focus, SCORE, sel)
        refs.add(str(ref))
        scores.add(str(score))
    assert refs == {node_iri(C.snapshot_id, C.node.id), node_iri(A.snapshot_id, A.node.id)}
    assert scores == {"0.95", "0.42"}   # the reranker's scores, not retrieval's


def test_rerank_synthesis_derives_from_focus() -> None:
    _, events = run(rerank=True)
    assert derived_from(events[4]) == events[3].id
    cited = {str(o) for o in objects(events[4], CITES, events[4].id)}
    assert cited == {node_iri(c.snapshot_id, c.node.id) for c in RERANKED}


def test_selection_entities_only_in_focus() -> None:
    _, events = run(rerank=True)
    for event in events:
        typed = URIRef(NODE_SELECTION) in objects(event, RDF_TYPE)
        assert typed == (event.stage == "focus")


# -- one named graph, exports ---------------------------------------------------------------

@pytest.mark.parametrize("rerank", [False, True])
def test_every_triple_of_every_event_is_in_the_retrieval_graph(rerank: bool) -> None:
    rec, events = run(rerank=rerank)
    ds = rec.dataset()
    graph = ds.graph(URIRef(RETRIEVAL_GRAPH))
    for event in events:
        assert event.graph == RETRIEVAL_GRAPH
        for triple in event.triples:
            assert triple in graph
    contexts = {str(c) for _, _, _, c in ds.quads((None, None, None, None))}
    assert contexts == {RETRIEVAL_GRAPH}
    assert len(ds.default_graph) == 0
    # events share no triple, so the graph is exactly their union
    assert len(graph) == sum(len(e.triples) for e in events)


def test_turtle_trig_and_jsonld_parse_back_to_the_same_triples() -> None:
    rec, _ = run(rerank=True)
    expected = set(rec.dataset().graph(URIRef(RETRIEVAL_GRAPH)))

    turtle = Graph().parse(data=rec.to_turtle(), format="turtle")
    assert set(turtle) == expected

    for text, fmt in ((rec.to_trig(), "trig"), (rec.to_jsonld(), "json-ld")):
        back = Dataset().parse(data=text, format=fmt)
        quads = list(back.quads((None, None, None, None)))
        assert {str(c) for *_, c in quads} == {RETRIEVAL_GRAPH}, fmt
        assert len(quads) == len(expected), fmt
        assert set(back.graph(URIRef(RETRIEVAL_GRAPH))) == expected, fmt


def test_korean_and_awkward_node_ids_round_trip() -> None:
    ids = [hit("교원인사규정 제15조", "규정@2", 0.7),
           hit("SQL:dbo.proc Process/Payment?x=1#y", "code 1/2", 0.6),
           hit("100% sure", "s:1", 0.5)]
    for c in ids:
        iri = node_iri(c.snapshot_id, c.node.id)
        assert iri.isascii() and " " not in iri and "/" not in iri
        assert parse_node_iri(iri) == (c.snapshot_id, c.node.id)
    rec, _ = run(rerank=False, candidates=ids)
    for text, fmt in ((rec.to_trig(), "trig"), (rec.to_jsonld(), "json-ld")):
        back = Dataset().parse(data=text, format=fmt).graph(URIRef(RETRIEVAL_GRAPH))
        found = {parse_node_iri(str(s)): str(o) for s, _, o in back.triples(
            (None, URIRef(NODE_ID), None))}
        assert found == {(c.snapshot_id, c.node.id): c.node.id for c in ids}, fmt
    assert "교원인사규정 제15조" in rec.to_jsonld()   # literals stay readable, not escaped


def test_fixed_ask_id_is_deterministic_and_default_is_unique() -> None:
    one, events_one = run(rerank=True, ask_id="같은 질문/1")
    two, events_two = run(rerank=True, ask_id="같은 질문/1")
    assert [e.to_json() for e in events_one] == [e.to_json() for e in events_two]
    assert one.to_turtle() == two.to_turtle()
    assert one.to_trig() == two.to_trig()
    assert one.to_jsonld() == two.to_jsonld()
    assert events_one[0].id.startswith("urn:excerpt:ask:%EA%B0%99")

    x, _ = run(rerank=False, ask_id=None)
    y, _ = run(rerank=False, ask_id=None)
    assert x.ask_id != y.ask_id
    assert not {e.id for e in x.events} & {e.id for e in y.events}


def test_event_to_json_is_plain_strings() -> None:
    _, events = run(rerank=True)
    payload = events[3].to_json()
    assert set(payload) == {"stage", "id", "triples"}
    assert payload["stage"] == "focus" and payload["id"] == events[3].id
    assert all(type(x) is str for t in payload["triples"] for x in t)
    assert ["0.95" in t for t in payload["triples"]].count(True) == 1
    json.dumps(payload)


def test_callback_receives_each_event_as_it_is_made() -> None:
    seen: list[str] = []
    rec = ProvenanceRecorder(QUESTION_TEXT, lambda e: seen.append(e.stage), ask_id="a")
    rec.question()
    assert seen == ["question"]
    rec.grounding(CONCEPTS)
    assert seen == ["question", "grounding"]
    ProvenanceRecorder(QUESTION_TEXT).question()   # no callback is fine


# -- formatting and guards ------------------------------------------------------------------

@pytest.mark.parametrize(("score", "text"), [
    (0.95, "0.95"), (0.42, "0.42"), (1, "1.0"), (0.0, "0.0"), (-0.0, "0.0"), (12.5, "12.5"),
    (0.1234565, "0.123456"), (0.1234567, "0.123457"), (-3.25, "-3.25"), (1e-9, "0.0"),
    (100.0, "100.0"),
])
def test_format_score(score: float, text: str) -> None:
    assert format_score(score) == text


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")])
def test_non_finite_score_is_refused_before_anything_is_emitted(score: float) -> None:
    rec2 = ProvenanceRecorder(QUESTION_TEXT, ask_id="a")
    rec2.question()
    rec2.grounding(CONCEPTS)
    with pytest.raises(ValueError, match="finite"):
        rec2.exploration([hit("n", "s", score)])
    assert [e.stage for e in rec2.events] == ["question", "grounding"]


def test_focus_may_not_invent_a_node() -> None:
    events: list[ExplainEvent] = []
    rec = ProvenanceRecorder(QUESTION_TEXT, events.append, ask_id="a")
    rec.question()
    rec.grounding(CONCEPTS)
    rec.exploration([A, B])
    secret = hit("secret-node", "docs@1", 0.99)
    with pytest.raises(ValueError) as info:
        rec.focus([replace(A, score=0.9), secret])
    assert "secret" not in str(info.value)     # the message names the rank, not the node
    assert "selection 2" in str(info.value)
    assert [e.stage for e in events] == ["question", "grounding", "exploration"]
    # same id in another snapshot is another node
    with pytest.raises(ValueError):
        rec.focus([replace(A, snapshot_id="docs@2", score=0.9)])


@pytest.mark.parametrize("stage", ["exploration", "focus", "synthesis"])
def test_visible_check_guards_every_stage_that_names_nodes(stage: str) -> None:
    hidden = "hidden-node"
    allowed = {A.node.id, B.node.id, C.node.id}
    events: list[ExplainEvent] = []
    rec = ProvenanceRecorder(QUESTION_TEXT, events.append, ask_id="a",
                             visible=lambda snapshot, node: node in allowed)
    rec.question()
    rec.grounding(CONCEPTS)
    bad = hit(hidden, "docs@1", 0.5)
    if stage == "exploration":
        call = lambda: rec.exploration([A, bad])  # noqa: E731
    else:
        rec.exploration([A, B, C])
        if stage == "focus":
            allowed.discard(C.node.id)  # e.g. rights changed: the check is asked again
            call = lambda: rec.focus([A, C])  # noqa: E731
        else:
            call = lambda: rec.synthesis(ANSWER_TEXT, [A, bad])  # noqa: E731
    before = [e.stage for e in events]
    with pytest.raises(ValueError, match="not visible") as info:
        call()
    assert hidden not in str(info.value) and C.node.id not in str(info.value)
    assert [e.stage for e in events] == before
    mentioned = " ".join(str(x) for e in events for t in e.triples for x in t)
    assert hidden not in mentioned


def test_synthesis_may_cite_visible_nodes_found_after_retrieval() -> None:
    # citation hops and graph expansion add nodes after exploration; they are described once
    expanded = hit("policy-doc-2:chunk-0", "docs@1", 0.3)
    rec = ProvenanceRecorder(QUESTION_TEXT, ask_id="a")
    rec.question()
    rec.grounding(CONCEPTS)
    rec.exploration([A])
    synthesis = rec.synthesis(ANSWER_TEXT, [A, expanded])
    described = {str(s) for s, p, _ in synthesis.triples if str(p) == NODE_ID}
    assert described == {node_iri(expanded.snapshot_id, expanded.node.id)}


def test_stages_must_come_in_order() -> None:
    rec = ProvenanceRecorder(QUESTION_TEXT, ask_id="a")
    with pytest.raises(RuntimeError):
        rec.grounding(CONCEPTS)
    rec.question()
    with pytest.raises(RuntimeError):
        rec.question()
    with pytest.raises(RuntimeError):
        rec.focus([])
    rec.grounding(CONCEPTS)
    rec.exploration([A])
    rec.synthesis(ANSWER_TEXT, [A])
    with pytest.raises(RuntimeError):
        rec.focus([A])
    with pytest.raises(RuntimeError):
        rec.synthesis(ANSWER_TEXT, [A])
