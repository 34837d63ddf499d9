"""What every reranker looks like to the rest of excerpt, and what the backends share: the
names, :class:`RerankResult`, the :class:`Reranker` protocol, ranking scores, the identity
reranker.  The factory by name is rerank/base.py; backends import this module, not that one,
so the factory may import them.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

NONE = "none"
LATE_INTERACTION = "late-interaction"
FEATURES = "features"
CROSS_ENCODER = "cross-encoder"
CROSS_ENCODER_PREFIX = CROSS_ENCODER + ":"
OFFERED = (NONE, FEATURES, LATE_INTERACTION, CROSS_ENCODER)
"""The rerankers a request to the service (REST, MCP) may name."""

DEFAULT_RERANKER = NONE
"""No offline reranker improved SciFact nDCG@10 over excerpt's hybrid ranking beyond noise
(features +0.003, p ≈ 0.09; late interaction +0.002 to +0.004, at 1.7-2.2 s a query without
cached token vectors); see bench/RESULTS.md ("Rerank").  Set a reranker by name to opt in:
``late-interaction`` is worth it over a BM25-only collection (+0.027)."""


@dataclass(frozen=True)
class RerankResult:
    index: int  # position in the `documents` given
    score: float


@runtime_checkable
class Reranker(Protocol):
    """Orders candidate texts for a query.

    ``rerank`` returns at most ``limit`` results sorted by score descending (ties: lower index
    first), each index at most once; ``[]`` for no documents or ``limit == 0``, without loading
    or computing anything.  A negative ``limit`` is a ``ValueError``.
    """

    name: str

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]: ...


def check_limit(limit: int) -> None:
    if limit < 0:
        raise ValueError(f"limit must be >= 0, not {limit}")


def ranked(scores: Sequence[float], limit: int) -> list[RerankResult]:
    """Results for ``scores[i]`` of document ``i``: score descending, ties by lower index,
    truncated to ``limit``.  A NaN score sorts last (a broken model never promotes a text)."""
    check_limit(limit)

    def key(i: int) -> tuple[int, float, int]:
        s = float(scores[i])
        return (1, 0.0, i) if math.isnan(s) else (0, -s, i)

    order = sorted(range(len(scores)), key=key)[:limit]
    return [RerankResult(i, float(scores[i])) for i in order]


def rerank_with(scores: Callable[[str, Sequence[str]], Sequence[float]], query: str,
                documents: Sequence[str], limit: int) -> list[RerankResult]:
    """The protocol's ``rerank`` for a backend that scores every document: nothing is computed
    for no documents or ``limit == 0``."""
    check_limit(limit)
    if not documents or limit == 0:
        return []
    return ranked(scores(query, documents), limit)


class KeepOrder:
    """The identity reranker: first-stage order, score ``1 / (1 + index)``."""

    name: str = NONE

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        check_limit(limit)
        return [RerankResult(i, 1.0 / (1 + i)) for i in range(min(limit, len(documents)))]

    def __repr__(self) -> str:
        return "KeepOrder()"
