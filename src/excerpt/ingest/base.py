"""What every loader returns: documents, nodes and edges of one source, plus per-file issues."""

from __future__ import annotations

from dataclasses import dataclass, field

from excerpt.types import Document, Edge, IngestIssue, Node


@dataclass(frozen=True)
class LoadOptions:
    """Applied to every node a loader emits (merged with the record's own security fields)."""

    acl_tags: tuple[str, ...] = ()
    classification_labels: tuple[str, ...] = ()
    chunk_chars: int = 800
    overlap_chars: int = 100


@dataclass
class LoadedCorpus:
    """One source's content as read from disk.

    ``source`` names the source (its snapshots replace each other); ``snapshot_hint`` is a
    snapshot id the source itself carries (a release bundle's head sha), or None.
    ``index_titles`` asks the indexer to search each node's title with its text (BEIR records,
    whose title is part of the judged document), without changing the stored text.
    """

    source: str
    documents: list[Document] = field(default_factory=list)
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    errors: list[IngestIssue] = field(default_factory=list)
    snapshot_hint: str | None = None
    index_titles: bool = False
