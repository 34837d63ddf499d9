"""Loaders: files on disk -> documents, nodes and edges (pure functions, no store, no vectors).

``load(paths, fmt="auto", options)`` dispatches by format name (``"auto"`` runs
``detect_format``) to ``load_text``, ``load_gutenberg``, ``load_beir``, ``load_documents``
(PDF, Word, EPUB, HTML, Markdown and text, a reader chosen per file) and the rest;
``chunk_text`` is the paragraph-aware chunker they share.

Names are imported when first used (``excerpt.ingest.load``): importing this package, or
one of its small modules, does not import every reader (a search never loads the PDF reader).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from excerpt.ingest.formats import FORMATS

if TYPE_CHECKING:  # the names' real types for mypy; at run time, __getattr__ imports them
    from excerpt.ingest.base import LoadedCorpus, LoadOptions
    from excerpt.ingest.beir import load_beir
    from excerpt.ingest.books.gutenberg import load_gutenberg
    from excerpt.ingest.chunking import ChunkSpan, chunk_spans, chunk_text
    from excerpt.ingest.detect import detect_format, load
    from excerpt.ingest.documents.loader import load_documents
    from excerpt.ingest.documents.text import load_text

_WHERE = {
    "LoadedCorpus": "base", "LoadOptions": "base", "load_beir": "beir",
    "load_gutenberg": "books.gutenberg", "ChunkSpan": "chunking", "chunk_spans": "chunking",
    "chunk_text": "chunking", "detect_format": "detect", "load": "detect",
    "load_documents": "documents.loader", "load_text": "documents.text",
}


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module 'excerpt.ingest' has no attribute {name!r}")
    return getattr(import_module(f"excerpt.ingest.{_WHERE[name]}"), name)


__all__ = [
    "FORMATS",
    "ChunkSpan",
    "LoadOptions",
    "LoadedCorpus",
    "chunk_spans",
    "chunk_text",
    "detect_format",
    "load",
    "load_beir",
    "load_documents",
    "load_gutenberg",
    "load_text",
]
