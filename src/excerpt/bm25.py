"""BM25's constants, idf and query term weights, on the ground floor: the segment search
(retrieve/lexical.py), SQL search (retrieve/sql.py), conversation memory
(memory/conversation.py) and query understanding (query/understand.py) score alike.

Lucene's variant (bm25s calls it ``lucene``): ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
always positive; a term's weight in a node ``tf / (tf + k1 (1 - b + b |d| / avgdl))``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

K1 = 1.5
B = 0.75


def idf(df: int, n: int) -> float:
    """Lucene's BM25 idf of a term in ``df`` of ``n`` nodes."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def query_weights(tokens: Sequence[str], extra: Sequence[Sequence[str]] = (),
                  extra_weight: float = 0.5) -> dict[str, float]:
    """Query term weights: each query token counts once per occurrence; each expansion term
    (the tokens of one synonym or hypernym, e.g. 재정 지원) adds ``extra_weight`` in all, shared
    by its tokens that are not query tokens, so a two-word synonym weighs no more than a
    one-word one."""
    weights: dict[str, float] = {}
    for token in tokens:  # Counter(tokens), at a third of its cost
        weights[token] = weights.get(token, 0) + 1
    query = set(weights)
    for term in extra:
        new = [t for t in term if t not in query]
        for token in new:
            weights[token] = weights.get(token, 0.0) + extra_weight / len(new)
    return weights
