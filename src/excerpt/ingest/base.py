"""What every loader returns: documents, nodes and edges of one source, plus per-file issues."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from excerpt.errors import InputError
from excerpt.ingest._archive import ArchiveLimits
from excerpt.ingest.code.text import MAX_NODE_TOKENS
from excerpt.types import Document, Edge, IngestIssue, Node

if TYPE_CHECKING:
    from excerpt.ingest.files import FileSet


@dataclass(frozen=True)
class LoadOptions:
    """Applied to every node a loader emits (with the record's own security fields, by the
    rule of :func:`excerpt.ingest._common.record_security`), and how far a load may reach:
    ``archive_limits`` bound what a zip may expand to; ``roots``, when given, are the only
    folders a file read may resolve into (symbolic links included).  ``max_node_tokens``: no
    node of a code source (``--format code``) is longer; longer declarations become parts."""

    acl_tags: tuple[str, ...] = ()
    classification_labels: tuple[str, ...] = ()
    chunk_chars: int = 800
    document_chunk_chars: int | None = None
    """The node size of the structured-document reader (PDF, Word, HTML, EPUB, Markdown);
    None: ``chunk_chars``. Imports set it from the ``document_chunk_chars`` setting."""
    overlap_chars: int = 100
    archive_limits: ArchiveLimits = field(default_factory=ArchiveLimits)
    roots: tuple[Path, ...] | None = None
    max_node_tokens: int = MAX_NODE_TOKENS
    progress: Callable[[str, int, int], None] | None = field(default=None, compare=False,
                                                             repr=False)
    """Told ``("load", files read, files)`` as a loader that reads many files goes."""
    files: FileSet | None = field(default=None, compare=False, repr=False)
    """The paths' files as the import found them (ingest/files.py), roots checked: a loader
    reads these instead of walking the paths again; None, it walks them itself."""

    @property
    def document_chars(self) -> int:
        """The node size structured documents are cut to."""
        return self.chunk_chars if self.document_chunk_chars is None else self.document_chunk_chars

    def __post_init__(self) -> None:
        if self.max_node_tokens < 1:
            raise InputError(f"max node tokens must be at least 1, got {self.max_node_tokens}")


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
    unresolved: dict[str, list[str]] = field(default_factory=dict)
    """What the import refers to but does not hold, by kind (code sources: the relation of an
    edge to an object not defined here, ``dynamic SQL`` for SQL built at run time), each name
    once, sorted; the edges themselves are kept (they are still true)."""
    formats: dict[str, dict[str, int]] = field(default_factory=dict)
    """Per file format, what a documents load read and skipped (``{"pdf": {"read": 3,
    "skipped": 1, "nodes": 240}}``; files no reader takes count under ``"other"``); the reason
    for each skipped file is in ``errors``.  Empty for the other loaders."""
