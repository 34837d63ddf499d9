"""Hybrid fusion of a lexical and a dense ranking; both are pure functions of the two lists.

- Reciprocal-rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): sum of 1 / (k + rank).
- Weighted blend of min-max normalised scores (the "convex combination" of Bruch et al.,
  "An Analysis of Fusion Functions for Hybrid Retrieval", TOIS 2023): alpha * dense +
  (1 - alpha) * lexical, a list's missing candidate counting 0.
Ties are broken by node id, so fusion is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence

from excerpt.retrieve.view import Candidate

RRF_K = 60


def _key(c: Candidate) -> tuple[int, int]:
    return (c.part, c.ordinal)


def _ordered(scores: dict[tuple[int, int], float], seen: dict[tuple[int, int], Candidate],
             depth: int) -> list[Candidate]:
    fused = [
        Candidate(seen[k].part, seen[k].ordinal, seen[k].id, s) for k, s in scores.items()
    ]
    fused.sort(key=lambda c: (-c.score, c.id))
    return fused[:depth]


def rrf(lists: Sequence[Sequence[Candidate]], depth: int, k: int = RRF_K) -> list[Candidate]:
    scores: dict[tuple[int, int], float] = {}
    seen: dict[tuple[int, int], Candidate] = {}
    for ranking in lists:
        for rank, c in enumerate(ranking, start=1):
            scores[_key(c)] = scores.get(_key(c), 0.0) + 1.0 / (k + rank)
            seen.setdefault(_key(c), c)
    return _ordered(scores, seen, depth)


def _minmax(ranking: Sequence[Candidate]) -> dict[tuple[int, int], float]:
    if not ranking:
        return {}
    hi, lo = max(c.score for c in ranking), min(c.score for c in ranking)
    span = hi - lo
    return {_key(c): (c.score - lo) / span if span > 0 else 1.0 for c in ranking}


def blend(
    lexical: Sequence[Candidate], dense: Sequence[Candidate], depth: int, alpha: float
) -> list[Candidate]:
    lex, den = _minmax(lexical), _minmax(dense)
    seen = {_key(c): c for c in [*lexical, *dense]}
    scores = {k: alpha * den.get(k, 0.0) + (1.0 - alpha) * lex.get(k, 0.0) for k in seen}
    return _ordered(scores, seen, depth)
