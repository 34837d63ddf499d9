"""One call for the engine: a query's entities, plain-word terms, expansion and adaptive k,
timed per stage."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from excerpt.analyze import analyze
from excerpt.bm25 import query_weights
from excerpt.query.entities import Entity, EntityRecognizer
from excerpt.query.expansion import Expansion, MultiStageExpander
from excerpt.query.lexicon import load_lexicon
from excerpt.query.plain import plain_terms
from excerpt.query.topk import TopK, select_top_k

# A plain-word term weighs as much as a word of the query: it says what the question's everyday
# words mean in the book (군대 -> 군입대휴학), where an expansion term only widens the query.
# Measured on the plain questions' tune half (bench/regulations.py --plain, BM25): at the
# expansion weight (0.5) 18 of 20 found the governing regulation in the top 5, at 1.0 all 20.
PLAIN_WEIGHT = 1.0


@dataclass
class QueryPlan:
    entities: list[Entity]
    expansion: Expansion | None
    top_k: TopK | None
    timings_ms: dict[str, float] = field(default_factory=dict)
    plain: list[str] = field(default_factory=list)

    @property
    def expanded_terms(self) -> list[str]:
        """The terms added to the query: plain-word terms first, then the expansion's."""
        added = self.expansion.added_terms if self.expansion else []
        return list(dict.fromkeys([*self.plain, *added]))

    def weights(self, tokens: Sequence[str], analyze_term: Callable[[str], list[str]],
                expansion_weight: float) -> dict[str, float]:
        """BM25 query weights: the query's tokens, its plain-word terms at ``PLAIN_WEIGHT`` and
        its expansion terms at ``expansion_weight`` (each term's weight shared by its tokens
        that are not query tokens, :func:`excerpt.bm25.query_weights`)."""
        added = self.expansion.added_terms if self.expansion else []
        weights = query_weights(tokens, [analyze_term(t) for t in self.plain], PLAIN_WEIGHT)
        widened = query_weights(tokens, [analyze_term(t) for t in added if t not in self.plain],
                                expansion_weight)
        for token, weight in widened.items():
            if token not in tokens:
                weights[token] = weights.get(token, 0.0) + weight
        return weights


@lru_cache(maxsize=8)
def _expander(lexicon_path: str) -> MultiStageExpander:
    return MultiStageExpander(EntityRecognizer(load_lexicon(lexicon_path or None)))


@lru_cache(maxsize=8)
def terms_to_add(language: str, lexicon_path: str = "") -> tuple[str, ...]:
    """Every term :func:`understand` may add to a query in ``language`` (none when the
    lexicon is for another language)."""
    lexicon = _expander(lexicon_path).lexicon
    if lexicon.language and lexicon.language != language:
        return ()
    return tuple(lexicon.added_terms())


def understand(query: str, language: str, lexicon_path: str = "",
               tokens: Sequence[str] | None = None) -> QueryPlan:
    """Entities, expansion and adaptive k when the lexicon is for ``language``; else nothing.
    ``tokens``: the query's analysis when the caller has it (else it is analysed here)."""
    expander = _expander(lexicon_path)
    lexicon = expander.lexicon
    if lexicon.language and lexicon.language != language:
        return QueryPlan([], None, None)
    t0 = time.perf_counter()
    entities = expander.recognizer.recognize(query)
    t1 = time.perf_counter()
    expansion = expander.expand(query, entities)
    t2 = time.perf_counter()
    top = select_top_k(query, entities, lexicon)
    t3 = time.perf_counter()
    plain = [] if expansion.formal else plain_terms(
        query, analyze(query, language) if tokens is None else tokens, lexicon)
    t4 = time.perf_counter()
    timings = {"entities": (t1 - t0) * 1000, "expansion": (t2 - t1) * 1000,
               "top_k": (t3 - t2) * 1000, "plain_words": (t4 - t3) * 1000}
    return QueryPlan(entities, expansion, top, timings, plain)
