"""PROV-O explain events of one ask: question, grounding, exploration, focus, synthesis.

The ask pipeline makes one ``ProvenanceRecorder`` per ask and calls its stages in order; each
call builds the stage's triples, hands them to the explain callback at once and keeps them::

    question ─▶ grounding ─▶ exploration ─▶ [focus] ─▶ synthesis
    (text)      (concepts)   (all candidates) (reranker   (answer, cited nodes)
                                              survivors)

Each stage entity is a ``prov:Entity`` of its excerpt class, ``prov:wasGeneratedBy`` the ask
(a ``prov:Activity``) and ``prov:wasDerivedFrom`` the stage before it; synthesis derives from
focus when a reranker ran and from exploration otherwise. Focus links one ``NodeSelection`` per
surviving node (``selected``), each with the node, the reranker's score and its rank. Every
triple lives in the one named graph ``RETRIEVAL_GRAPH``; ``dataset()`` holds them all and
exports as TriG, Turtle and JSON-LD.

IRIs (vocabulary below)::

    urn:excerpt:ask:<ask id>                         the ask (prov:Activity, excerpt:Ask);
                                                     the ask id percent-encoded like node ids
    urn:excerpt:ask:<ask id>:<stage>                 a stage entity, the event's id
    urn:excerpt:ask:<ask id>:exploration:candidate:<rank>
    urn:excerpt:ask:<ask id>:focus:selection:<rank>  a node selection (rank from 1)
    urn:excerpt:node:<snapshot id>:<node id>         a node, both parts percent-encoded (UTF-8,
                                                     nothing kept safe), so ``:``, ``/``,
                                                     spaces and Hangul are all unambiguous

The ask id is the caller's, or a uuid4: the one random value in excerpt, so two asks never
share event IRIs; with a fixed ask id the events and every export are byte-for-byte the same.

Scores are ``xsd:decimal`` literals written by ``format_score``: rounded half-even to six
decimal places (the precision of the pipeline traces), trailing zeros dropped, at least one
digit after the point, never an exponent: 0.95 -> "0.95", 1 -> "1.0", 0.1234567 -> "0.123457".

Security: the recorder never invents a node; it mentions only the hits it is given (the
search's own :class:`excerpt.types.Hit`, read for ``node.id``, ``snapshot_id`` and ``score``:
what a stage recorded is the very value the pipeline passed on, not a copy), and the caller must
give only nodes the principal may see. Two guards, checked before anything is
emitted: every focus node must be one of exploration's candidates (a reranker only narrows and
reorders), and an optional ``visible(snapshot_id, node_id)`` predicate is asked about every
node of every stage. A violation raises ``ValueError`` naming the stage and the rank only, never
the node, since the message may end up where the caller can read it.

rdflib is imported on first use (it costs ~0.2 s), so the vocabulary is plain strings.
"""

from __future__ import annotations

import json
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING, Any, TypeAlias
from urllib.parse import quote, unquote

if TYPE_CHECKING:
    from rdflib import Dataset, Literal, URIRef

    from excerpt.types import Hit

    Triple: TypeAlias = tuple[URIRef, URIRef, URIRef | Literal]

RETRIEVAL_GRAPH = "urn:graph:retrieval"

PROV = "http://www.w3.org/ns/prov#"
EXCERPT = "urn:excerpt:vocab#"
XSD = "http://www.w3.org/2001/XMLSchema#"

RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
PROV_ENTITY = PROV + "Entity"
PROV_ACTIVITY = PROV + "Activity"
PROV_WAS_DERIVED_FROM = PROV + "wasDerivedFrom"
PROV_WAS_GENERATED_BY = PROV + "wasGeneratedBy"

# classes
ASK = EXCERPT + "Ask"
QUESTION = EXCERPT + "Question"
GROUNDING = EXCERPT + "Grounding"
EXPLORATION = EXCERPT + "Exploration"
FOCUS = EXCERPT + "Focus"
SYNTHESIS = EXCERPT + "Synthesis"
CANDIDATE = EXCERPT + "Candidate"            # one retrieved node of exploration
NODE_SELECTION = EXCERPT + "NodeSelection"   # one reranker survivor of focus
NODE = EXCERPT + "Node"
# properties
QUERY = EXCERPT + "query"                    # question -> its text
CONCEPT = EXCERPT + "concept"                # grounding -> a concept (literal)
HAS_CANDIDATE = EXCERPT + "candidate"        # exploration -> Candidate
SELECTED = EXCERPT + "selected"              # focus -> NodeSelection
NODE_REF = EXCERPT + "node"                  # Candidate / NodeSelection -> node
SCORE = EXCERPT + "score"                    # Candidate / NodeSelection -> xsd:decimal
RANK = EXCERPT + "rank"                      # Candidate / NodeSelection -> xsd:integer, from 1
ANSWER = EXCERPT + "answer"                  # synthesis -> answer text
CITES = EXCERPT + "cites"                    # synthesis -> node
READER = EXCERPT + "reader"                  # synthesis -> who wrote the answer (literal)
MODEL = EXCERPT + "model"                    # synthesis -> the reader's model (literal)
TOKENS_IN = EXCERPT + "tokensIn"             # synthesis -> prompt tokens, xsd:integer
TOKENS_OUT = EXCERPT + "tokensOut"           # synthesis -> generated tokens, xsd:integer
DURATION_MS = EXCERPT + "durationMs"         # synthesis -> the reader's time, xsd:decimal
FELL_BACK = EXCERPT + "fellBack"             # synthesis -> xsd:boolean: the extractive stood
NODE_ID = EXCERPT + "nodeId"                 # node -> its id (literal)
SNAPSHOT_ID = EXCERPT + "snapshotId"         # node -> its snapshot id (literal)

STAGES = ("question", "grounding", "exploration", "focus", "synthesis")
_STAGE_CLASS = {"question": QUESTION, "grounding": GROUNDING, "exploration": EXPLORATION,
                "focus": FOCUS, "synthesis": SYNTHESIS}
# the stage that must come just before each one
_AFTER: dict[str, tuple[str | None, ...]] = {
    "question": (None,), "grounding": ("question",), "exploration": ("grounding",),
    "focus": ("exploration",), "synthesis": ("exploration", "focus")}
_PREFIXES = {"prov": PROV, "excerpt": EXCERPT, "xsd": XSD}


@dataclass(frozen=True)
class ExplainEvent:
    stage: str          # one of STAGES
    id: str             # the IRI of the stage entity
    triples: tuple[Triple, ...]   # rdflib terms, all in RETRIEVAL_GRAPH

    @property
    def graph(self) -> str:
        return RETRIEVAL_GRAPH

    def to_json(self) -> dict[str, Any]:
        """Plain strings: IRIs as IRIs, literals as their lexical form."""
        return {"stage": self.stage, "id": self.id,
                "triples": [[str(s), str(p), str(o)] for s, p, o in self.triples]}


ExplainCallback = Callable[[ExplainEvent], None]
VisibleCheck = Callable[[str, str], bool]


def format_score(score: float) -> str:
    """The lexical form of a score (see the module docstring); refuses NaN and infinities."""
    d = Decimal(score) if isinstance(score, float) else Decimal(str(score))
    if not d.is_finite():
        raise ValueError(f"a provenance score must be finite, got {score!r}")
    d = d.quantize(Decimal("0.000001"), rounding=ROUND_HALF_EVEN)
    if d == 0:
        return "0.0"
    text = format(d, "f").rstrip("0")
    return text + "0" if text.endswith(".") else text


def node_iri(snapshot_id: str, node_id: str) -> str:
    """``urn:excerpt:node:<snapshot>:<node>``, stable for any id."""
    return f"urn:excerpt:node:{quote(snapshot_id, safe='')}:{quote(node_id, safe='')}"


def parse_node_iri(iri: str) -> tuple[str, str]:
    """``(snapshot_id, node_id)`` of a ``node_iri``."""
    prefix = "urn:excerpt:node:"
    if not iri.startswith(prefix) or iri.count(":") != 4:
        raise ValueError(f"not an excerpt node IRI: {iri!r}")
    snapshot, node = iri[len(prefix):].split(":")
    return unquote(snapshot), unquote(node)


class ProvenanceRecorder:
    """Builds, emits and keeps the explain events of one ask (see the module docstring)."""

    def __init__(self, question: str, callback: ExplainCallback | None = None,
                 ask_id: str | None = None, visible: VisibleCheck | None = None) -> None:
        self._question = question
        self._callback = callback
        self._visible = visible
        self.ask_id = ask_id if ask_id is not None else str(uuid.uuid4())
        self.ask_iri = f"urn:excerpt:ask:{quote(self.ask_id, safe='')}"
        self._events: list[ExplainEvent] = []
        self._explored: set[tuple[str, str]] = set()
        self._described: set[str] = set()   # node IRIs whose id/snapshot triples were emitted

    @property
    def events(self) -> list[ExplainEvent]:
        return list(self._events)

    def stage_iri(self, stage: str) -> str:
        return f"{self.ask_iri}:{stage}"

    # -- stages ---------------------------------------------------------------------------

    def question(self) -> ExplainEvent:
        self._require("question")
        t = _Triples()
        ask = self.ask_iri
        t.iri(ask, RDF_TYPE, PROV_ACTIVITY)
        t.iri(ask, RDF_TYPE, ASK)
        q = self._start("question", t, derived_from=None)
        t.lit(q, QUERY, self._question)
        return self._emit("question", t)

    def grounding(self, concepts: Sequence[str]) -> ExplainEvent:
        self._require("grounding")
        t = _Triples()
        g = self._start("grounding", t, derived_from="question")
        for concept in concepts:
            t.lit(g, CONCEPT, concept)
        return self._emit("grounding", t)

    def exploration(self, candidates: Sequence[Hit]) -> ExplainEvent:
        self._require("exploration")
        self._check_visible("exploration", candidates)
        t = _Triples()
        e = self._start("exploration", t, derived_from="grounding")
        self._ranked_list(t, e, "candidate", HAS_CANDIDATE, CANDIDATE, candidates)
        event = self._emit("exploration", t)
        self._explored = {(h.snapshot_id, h.node.id) for h in candidates}
        return event

    def focus(self, selected: Sequence[Hit]) -> ExplainEvent:
        """Only when a reranker ran: its survivors, in its order, with its scores."""
        self._require("focus")
        for rank, h in enumerate(selected, 1):
            if (h.snapshot_id, h.node.id) not in self._explored:
                raise ValueError(f"provenance focus: selection {rank} is not one of "
                                 "exploration's candidates")
        self._check_visible("focus", selected)
        t = _Triples()
        f = self._start("focus", t, derived_from="exploration")
        self._ranked_list(t, f, "selection", SELECTED, NODE_SELECTION, selected)
        return self._emit("focus", t)

    def synthesis(self, answer: str, cited: Sequence[Hit],
                  reader: Mapping[str, Any] | None = None) -> ExplainEvent:
        """Derived from focus if ``focus()`` was called, else from exploration.

        ``cited`` may hold nodes reached after retrieval (citation hops, graph expansion); they
        too must be visible, and ``visible`` is asked about them. ``reader`` (compose.ask's
        ``AskResult.reader``) records who wrote the answer: the reader, its model, tokens and
        time, and whether the extractive answer stood in for it.
        """
        self._require("synthesis")
        self._check_visible("synthesis", cited)
        parent = self._events[-1].stage
        t = _Triples()
        s = self._start("synthesis", t, derived_from=parent)
        t.lit(s, ANSWER, answer)
        for h in cited:
            node = self._node(t, h)
            t.iri(s, CITES, node)
        if reader is not None:
            _reader_triples(t, s, reader)
        return self._emit("synthesis", t)

    # -- exports --------------------------------------------------------------------------

    def dataset(self) -> Dataset:
        """Every event's triples, in the named graph ``RETRIEVAL_GRAPH`` (default graph empty)."""
        from rdflib import Dataset, URIRef

        ds = Dataset()
        for prefix, ns in _PREFIXES.items():
            ds.bind(prefix, ns)
        graph = ds.graph(URIRef(RETRIEVAL_GRAPH))
        for event in self._events:
            for triple in event.triples:
                graph.add(triple)
        return ds

    def to_trig(self) -> str:
        """TriG: the dataset with the graph name, the lossless text export."""
        with _quiet_rdflib():
            return str(self.dataset().serialize(format="trig"))

    def to_turtle(self) -> str:
        """Turtle of the retrieval graph's triples. Turtle cannot name a graph; nothing is lost
        because every triple is in the one graph ``RETRIEVAL_GRAPH`` (use ``to_trig`` to keep
        the name in the text)."""
        from rdflib import Graph, URIRef

        graph = Graph()
        for prefix, ns in _PREFIXES.items():
            graph.bind(prefix, ns)
        for triple in self.dataset().graph(URIRef(RETRIEVAL_GRAPH)):
            graph.add(triple)
        return str(graph.serialize(format="turtle"))

    def to_jsonld(self) -> str:
        """JSON-LD of the dataset: ``{"@context", "@id": RETRIEVAL_GRAPH, "@graph": [...]}``."""
        with _quiet_rdflib():
            text = self.dataset().serialize(format="json-ld", context=dict(_PREFIXES))
        # rdflib lists subjects and values in hash order; JSON-LD arrays (without @list) are
        # unordered, so sorting them keeps the meaning and makes the text reproducible.
        return json.dumps(_sorted_arrays(json.loads(text)), ensure_ascii=False, indent=2,
                          sort_keys=True)

    # -- helpers --------------------------------------------------------------------------

    def _require(self, stage: str) -> None:
        last = self._events[-1].stage if self._events else None
        if last not in _AFTER[stage]:
            allowed = " or ".join(str(s) for s in _AFTER[stage])
            raise RuntimeError(f"provenance: {stage} must follow {allowed}, not {last}")

    def _start(self, stage: str, t: _Triples, derived_from: str | None) -> str:
        iri = self.stage_iri(stage)
        t.iri(iri, RDF_TYPE, PROV_ENTITY)
        t.iri(iri, RDF_TYPE, _STAGE_CLASS[stage])
        t.iri(iri, PROV_WAS_GENERATED_BY, self.ask_iri)
        if derived_from is not None:
            t.iri(iri, PROV_WAS_DERIVED_FROM, self.stage_iri(derived_from))
        return iri

    def _emit(self, stage: str, t: _Triples) -> ExplainEvent:
        event = ExplainEvent(stage, self.stage_iri(stage), t.done())
        self._events.append(event)
        self._described |= t.nodes
        if self._callback is not None:
            self._callback(event)
        return event

    def _check_visible(self, stage: str, hits: Iterable[Hit]) -> None:
        if self._visible is None:
            return
        for rank, h in enumerate(hits, 1):
            if not self._visible(h.snapshot_id, h.node.id):
                raise ValueError(f"provenance {stage}: node {rank} is not visible to the caller")

    def _ranked_list(self, t: _Triples, parent: str, kind: str, link: str, cls: str,
                     hits: Sequence[Hit]) -> None:
        """One sub-entity ``parent:kind:rank`` per hit, linked from ``parent``."""
        for rank, h in enumerate(hits, 1):
            sub = f"{parent}:{kind}:{rank}"
            t.iri(parent, link, sub)
            self._ranked(t, sub, cls, rank, h)

    def _ranked(self, t: _Triples, sub: str, cls: str, rank: int, h: Hit) -> None:
        t.iri(sub, RDF_TYPE, PROV_ENTITY)
        t.iri(sub, RDF_TYPE, cls)
        node = self._node(t, h)
        t.iri(sub, NODE_REF, node)
        t.typed(sub, SCORE, format_score(h.score), XSD + "decimal")
        t.typed(sub, RANK, str(rank), XSD + "integer")

    def _node(self, t: _Triples, h: Hit) -> str:
        """The node's IRI; its description goes with the first event that mentions it."""
        iri = node_iri(h.snapshot_id, h.node.id)
        if iri not in self._described and iri not in t.nodes:
            t.iri(iri, RDF_TYPE, PROV_ENTITY)
            t.iri(iri, RDF_TYPE, NODE)
            t.lit(iri, NODE_ID, h.node.id)
            t.lit(iri, SNAPSHOT_ID, h.snapshot_id)
            t.nodes.add(iri)
        return iri


@contextmanager
def _quiet_rdflib() -> Iterator[None]:
    """rdflib 7.6's TriG and JSON-LD serializers call its own deprecated Dataset API."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning, module="rdflib")
        yield


def _sorted_arrays(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: v if k == "@list" else _sorted_arrays(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_sorted_arrays(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, ensure_ascii=False, sort_keys=True))
    return value


class _Triples:
    """Collects one event's triples as rdflib terms, without duplicates, in insertion order."""

    def __init__(self) -> None:
        from rdflib import Literal, URIRef

        self._uri = URIRef
        self._literal = Literal
        self._items: dict[Triple, None] = {}
        self.nodes: set[str] = set()

    def iri(self, s: str, p: str, o: str) -> None:
        self._items[(self._uri(s), self._uri(p), self._uri(o))] = None

    def lit(self, s: str, p: str, value: str) -> None:
        self._items[(self._uri(s), self._uri(p), self._literal(value))] = None

    def typed(self, s: str, p: str, lexical: str, datatype: str) -> None:
        self._items[(self._uri(s), self._uri(p),
                     self._literal(lexical, datatype=self._uri(datatype)))] = None

    def done(self) -> tuple[Triple, ...]:
        return tuple(self._items)


def _reader_triples(t: _Triples, s: str, reader: Mapping[str, Any]) -> None:
    t.lit(s, READER, str(reader.get("name", "extractive")))
    if reader.get("model"):
        t.lit(s, MODEL, str(reader["model"]))
    t.typed(s, TOKENS_IN, str(int(reader.get("tokens_in", 0))), XSD + "integer")
    t.typed(s, TOKENS_OUT, str(int(reader.get("tokens_out", 0))), XSD + "integer")
    t.typed(s, DURATION_MS, f"{float(reader.get('ms', 0.0)):.1f}", XSD + "decimal")
    t.typed(s, FELL_BACK, "true" if reader.get("fell_back") else "false", XSD + "boolean")
