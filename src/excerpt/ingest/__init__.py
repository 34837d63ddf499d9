"""Loaders: files on disk -> documents, nodes and edges (pure functions, no store, no vectors).

``load(paths, fmt="auto", options)`` dispatches by format name (``"auto"`` runs
``detect_format``) to ``load_text``, ``load_gutenberg``, ``load_beir``, ``load_documents``
(PDF, Word, EPUB, HTML, Markdown and text, a reader chosen per file) and the rest;
``chunk_text`` is the paragraph-aware chunker they share.
"""

from excerpt.ingest.base import LoadedCorpus, LoadOptions
from excerpt.ingest.beir import load_beir
from excerpt.ingest.books.gutenberg import load_gutenberg
from excerpt.ingest.chunking import ChunkSpan, chunk_spans, chunk_text
from excerpt.ingest.detect import FORMATS, detect_format, load
from excerpt.ingest.documents.loader import load_documents
from excerpt.ingest.documents.text import load_text

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
