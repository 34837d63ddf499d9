"""A learning-free blend of lexical features and the first-stage rank.

The protocol gives the reranker texts only, so every feature is computed from the query and the
candidates themselves, with excerpt's analyzers (the tokens BM25 indexes):

* ``bm25``: BM25 (Robertson & Zaragoza 2009, Lucene's idf ``ln(1 + (n - df + 0.5)/(df + 0.5))``)
  with the candidate set as the collection, min-max normalised over the candidates;
* ``coverage``: the idf-weighted share of the distinct query terms the text contains;
* ``proximity``: Tao & Zhai (2007), "An exploration of proximity measures in information
  retrieval", SIGIR '07: ``π = ln(α + exp(−δ))`` with ``δ`` the MinDist (closest positions of
  two different matched query terms) and α = 0.3, rescaled to [0, 1];
* ``prior``: the first-stage position, ``1 − i / (n − 1)`` (candidates arrive best first).

``score = Σ weight · feature``; the weights are those of :data:`DEFAULT_WEIGHTS`, chosen on half
of the SciFact train queries and reported on the other half (bench/rerank.py).  Cost: ~6 ms for
30 candidates, ~11 ms for 50 (the analyzers run on every candidate).  Korean text goes
through the Korean analyzer (Kiwi morphemes), so the features are defined for it too; the prior
keeps the first stage's say.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Mapping, Sequence

from excerpt.analyze import analyze
from excerpt.analyze.language import detect_language
from excerpt.rerank.contract import FEATURES, RerankResult, rerank_with

FEATURE_NAMES = ("prior", "bm25", "coverage", "proximity")
DEFAULT_WEIGHTS: Mapping[str, float] = {"prior": 1.0, "bm25": 0.1}
"""Picked on the tune half of SciFact over excerpt's hybrid top-30 and top-50 (coverage and
proximity never helped there); +0.003 nDCG@10 over all 809 queries, +0.0045 held-out,
p ≈ 0.09 (paired randomisation): within noise, hence not the default reranker."""
ALPHA = 0.3
K1, B = 1.5, 0.75


def _idf(n: int, df: int) -> float:
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def min_dist(positions: Mapping[str, list[int]]) -> int | None:
    """Smallest distance between positions of two different terms; None with < 2 terms."""
    tagged = sorted((p, t) for t, ps in positions.items() for p in ps)
    best: int | None = None
    for (p1, t1), (p2, t2) in itertools.pairwise(tagged):
        if t1 != t2 and (best is None or p2 - p1 < best):
            best = p2 - p1
    return best


def proximity(positions: Mapping[str, list[int]]) -> float:
    """Tao & Zhai's ``ln(α + exp(−MinDist))`` mapped to [0, 1] (0: fewer than two terms)."""
    d = min_dist(positions)
    if d is None:
        return 0.0
    low, high = math.log(ALPHA), math.log(ALPHA + math.exp(-1.0))
    return (math.log(ALPHA + math.exp(-d)) - low) / (high - low)


def features(query: str, documents: Sequence[str]) -> list[dict[str, float]]:
    """The four features of every document (see the module docstring)."""
    n = len(documents)
    q_terms = sorted(set(analyze(query, detect_language(query))))
    docs = [analyze(d, detect_language(d)) for d in documents]
    df = Counter(t for toks in docs for t in set(toks) if t in q_terms)
    idf = {t: _idf(n, df[t]) for t in q_terms}
    total_idf = sum(idf.values())
    avgdl = sum(len(t) for t in docs) / n if n else 0.0
    rows: list[dict[str, float]] = []
    for i, toks in enumerate(docs):
        tf = Counter(toks)
        norm = K1 * (1 - B + B * len(toks) / avgdl) if avgdl else K1
        bm25 = sum(idf[t] * tf[t] / (tf[t] + norm) for t in q_terms if tf[t])
        coverage = sum(idf[t] for t in q_terms if tf[t]) / total_idf if total_idf else 0.0
        wanted = set(q_terms)
        positions: dict[str, list[int]] = {}
        for p, t in enumerate(toks):
            if t in wanted:
                positions.setdefault(t, []).append(p)
        rows.append({"prior": 1.0 - i / (n - 1) if n > 1 else 1.0, "bm25": bm25,
                     "coverage": coverage, "proximity": proximity(positions)})
    top = max((r["bm25"] for r in rows), default=0.0)
    low = min((r["bm25"] for r in rows), default=0.0)
    for r in rows:
        r["bm25"] = (r["bm25"] - low) / (top - low) if top > low else 0.0
    return rows


class FeatureReranker:
    """Weighted sum of the features; see the module docstring."""

    name: str = FEATURES

    def __init__(self, weights: Mapping[str, float] | None = None) -> None:
        chosen = dict(DEFAULT_WEIGHTS if weights is None else weights)
        unknown = set(chosen) - set(FEATURE_NAMES)
        if unknown:
            raise ValueError(f"unknown features {sorted(unknown)} (known: {FEATURE_NAMES})")
        self.weights = {f: float(chosen.get(f, 0.0)) for f in FEATURE_NAMES}

    def scores(self, query: str, documents: Sequence[str]) -> list[float]:
        return [sum(self.weights[f] * row[f] for f in FEATURE_NAMES)
                for row in features(query, documents)]

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        return rerank_with(self.scores, query, documents, limit)

    def __repr__(self) -> str:
        return f"FeatureReranker(weights={self.weights})"
