"""Loaders: files on disk -> documents, nodes and edges (pure functions, no store, no vectors).

``load(paths, fmt="auto", options)`` dispatches by format name (``"auto"`` runs
``detect_format``) to ``load_text``, ``load_gutenberg``, ``load_beir``, ``load_documents``
(PDF, Word, EPUB, HTML, Markdown and text, a reader chosen per file) and the rest;
``chunk_text`` is the paragraph-aware chunker they share.

Names are imported when first used (``excerpt.ingest.load``): importing this package, or
one of its small modules, does not import every reader (a search never loads the PDF reader).
"""

from importlib import import_module
from typing import Any

from excerpt.ingest.formats import FORMATS

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
