"""BM25's constants and idf, on the ground floor: the segment search (retrieve/lexical.py),
SQL search (retrieve/sql.py) and conversation memory (memory/conversation.py) score alike.

Lucene's variant (bm25s calls it ``lucene``): ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))``,
always positive; a term's weight in a node ``tf / (tf + k1 (1 - b + b |d| / avgdl))``.
"""

from __future__ import annotations

import math

K1 = 1.5
B = 0.75


def idf(df: int, n: int) -> float:
    """Lucene's BM25 idf of a term in ``df`` of ``n`` nodes."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))
