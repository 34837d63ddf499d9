"""One chunk of a document as a :class:`Node`: the id scheme and fields the plain-text,
Markdown/structured-document and Gutenberg loaders share, written once so that they cannot
drift apart (an id that changes re-imports every node of a source on the next sync)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from excerpt.ingest._common import labels
from excerpt.ingest.base import LoadOptions
from excerpt.types import Node

__all__ = ["chunk_node", "chunk_node_id"]


def chunk_node_id(prefix: str, chunk: int) -> str:
    """``f"{prefix}:{chunk:04d}"``: a document's (or a book division's) chunks in order."""
    return f"{prefix}:{chunk:04d}"


def chunk_node(
    document_id: str,
    chunk: int,
    text: str,
    span: tuple[int, int],
    *,
    title: str,
    source: str,
    options: LoadOptions,
    metadata: Mapping[str, Any],
    prefix: str | None = None,
) -> Node:
    """Chunk ``chunk`` of a document: ``text`` is at ``span`` (start, end) of the document's
    text; the id is ``chunk_node_id(prefix or document_id, chunk)``; the security labels are
    the load's (deduplicated and sorted)."""
    start, end = span
    return Node(
        id=chunk_node_id(document_id if prefix is None else prefix, chunk),
        document_id=document_id,
        text=text,
        title=title,
        source=source,
        start=start,
        end=end,
        acl_tags=labels(options.acl_tags),
        classification_labels=labels(options.classification_labels),
        metadata=metadata,
    )
