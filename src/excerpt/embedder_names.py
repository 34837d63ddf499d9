"""The embedder names an import may ask for, in a module of their own.

The CLI's and the HTTP API's option choices need only these names; taking them from
:mod:`excerpt.ingest.pipeline` (where the import checks them) would make every command, a
search included, import the whole ingestion pipeline first.
"""

from __future__ import annotations

EMBEDDERS = ("auto", "minilm", "e5", "none")
"""auto: MiniLM for English, multilingual e5 for Korean; none: BM25 only."""

__all__ = ["EMBEDDERS"]
