"""The structured output of the MCP tools: the CLI's JSON (``--json``), described field by
field so that an agent reads an ``outputSchema`` rather than guesses. Every model allows
fields beyond those named (``extra="allow"``): the engine may add to its JSON without
breaking a client that validates against an older schema."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Hit(_Open):
    id: str = Field(description="the node id (stable: from the source)")
    score: float = Field(description="the ranking score (higher is better)")
    text: str = Field(description="the node's whole stored text")
    title: str = Field(description="the node's title (chapter, article, code object)")
    source: str = Field(description="where the node came from (a file, a bundle entry)")
    snapshot_id: str = Field(description="the snapshot holding the node")
    metadata: dict[str, Any] = Field(description="book, chapter, article, language, ...")


class SearchOutput(_Open):
    query: str
    mode: str = Field(description="bm25, semantic or hybrid")
    k: int = Field(description="how many hits were asked for")
    filters: dict[str, Any] = Field(description="the scope applied, rights included")
    hits: list[Hit] = Field(description="best first")
    analysis: dict[str, Any] = Field(description="language, tokens, entities, notes")
    timings_ms: dict[str, float]


class Quote(_Open):
    n: int = Field(description="the citation number this quote carries")
    id: str = Field(description="the node quoted")
    text: str = Field(description="an exact span of the node's stored text")
    score: float
    metadata: dict[str, Any]


class Citation(_Open):
    n: int = Field(description="the number [n] in the answer")
    id: str = Field(description="the node cited")
    title: str
    source: str
    metadata: dict[str, Any] = Field(description="book, chapter, article, file, ...")


class AskOutput(_Open):
    question: str
    answer: str = Field(description="sentences of the sources, each citing them as [n]")
    cautious: bool = Field(description="true when the sources barely cover the question: "
                                       "say so rather than rely on the answer")
    quotes: list[Quote]
    citations: list[Citation]
    documents: list[dict[str, Any]] = Field(description="the passages composition read")
    timings_ms: dict[str, float]
    reader: dict[str, Any] = Field(description="who wrote the answer: name, model, tokens_in, "
                                               "tokens_out, ms, fell_back (the extractive "
                                               "answer stood in for the model's, and why)")


class GraphNode(_Open):
    id: str
    depth: int = Field(description="hops from the nearest seed (0: a seed)")


class GraphEdge(_Open):
    from_id: str
    relation: str = Field(description="Cites, Calls, ReadsFrom, WritesTo, ...")
    to_id: str


class GraphOutput(_Open):
    seeds: list[str]
    nodes: list[GraphNode]
    edges: list[GraphEdge]
    unknown_seeds: list[str] = Field(description="seeds not found (or not visible)")
    settings: dict[str, Any] = Field(description="the limits applied")


class NodeText(_Open):
    id: str
    text: str = Field(description="the node's whole stored text")
    tokens: int


class ContextOutput(_Open):
    node_texts: list[NodeText] = Field(description="in priority order, within the budgets")
    total_tokens: int
    total_chars: int
    skipped: list[dict[str, Any]] = Field(description="ids left out, with why ('not found' "
                                                      "for unknown or invisible ids)")
    budget_tokens: int | None


class NodesOutput(_Open):
    nodes: list[NodeText] = Field(description="the texts of the ids found, in the order given")
    not_found: list[str] = Field(description="ids unknown or not visible to the caller "
                                             "(the two are not told apart)")


class Collection(_Open):
    name: str
    snapshots: int = Field(description="snapshots of which the caller may see a node")
    documents: int
    nodes: int = Field(description="nodes the caller may see")


class CollectionsOutput(_Open):
    collections: list[Collection]


class SnapshotsOutput(_Open):
    snapshots: list[dict[str, Any]] = Field(description="snapshot_id, collection, source, "
                                                        "counts the caller may see, name, ...")
    sets: list[dict[str, Any]] = Field(description="named snapshot sets: name, snapshot_ids")


class OverviewOutput(_Open):
    collection: str
    counts: dict[str, int] = Field(description="sources, snapshots, and the documents and "
                                               "nodes a search reads, as the caller sees them")
    last_import: str | None
    language: str | None
    sources: list[dict[str, Any]] = Field(description="source, retired, live, snapshot_id "
                                                      "(its latest), created_at, counts")
    snapshots: list[dict[str, Any]] = Field(description="as list_snapshots gives them")
    sets: list[dict[str, Any]]
    metadata: dict[str, Any] = Field(description="keys: each metadata key a where filter can "
                                                 "name, with its most common values")
    examples: list[dict[str, str]] = Field(description="questions made from the collection's "
                                                       "headings: question, heading, node_id")


class Utterance(_Open):
    utterance_index: int
    speaker: str = Field(description="user, assistant or system")
    turn_number: int
    timestamp: str
    text: str
    tokens: int


class MemoryOutput(_Open):
    conversation: str
    utterances: list[Utterance]


class IngestOutput(_Open):
    collection: str
    snapshot_id: str | None = Field(description="the new snapshot (search it by this id)")
    status: str = Field(description="succeeded, or why not")
    documents: int
    nodes: int
    edges: int
    errors: list[dict[str, Any]] = Field(description="files or records left out, and why")
    skipped: int
