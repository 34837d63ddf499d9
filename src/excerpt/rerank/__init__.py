"""Reranking: the Reranker protocol, its backends by name, and MMR diversification.

>>> from excerpt.rerank import get_reranker, DEFAULT_RERANKER
>>> reranker = get_reranker(DEFAULT_RERANKER)     # cheap; models load on first rerank
>>> [r.index for r in reranker.rerank("query", ["first", "second"], limit=1)]
[0]
"""

from __future__ import annotations

from excerpt.rerank.base import (
    DEFAULT_RERANKER,
    KeepOrder,
    Reranker,
    RerankResult,
    get_reranker,
    reranker_names,
)
from excerpt.rerank.mmr import mmr

__all__ = [
    "DEFAULT_RERANKER",
    "KeepOrder",
    "RerankResult",
    "Reranker",
    "get_reranker",
    "mmr",
    "reranker_names",
]
