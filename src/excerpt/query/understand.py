"""One call for the engine: a query's entities, expansion and adaptive k, timed per stage."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import lru_cache

from excerpt.query.entities import Entity, EntityRecognizer
from excerpt.query.expansion import Expansion, MultiStageExpander
from excerpt.query.lexicon import load_lexicon
from excerpt.query.topk import TopK, select_top_k


@dataclass
class QueryPlan:
    entities: list[Entity]
    expansion: Expansion | None
    top_k: TopK | None
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def expanded_terms(self) -> list[str]:
        return self.expansion.added_terms if self.expansion else []


@lru_cache(maxsize=8)
def _expander(lexicon_path: str) -> MultiStageExpander:
    return MultiStageExpander(EntityRecognizer(load_lexicon(lexicon_path or None)))


def understand(query: str, language: str, lexicon_path: str = "") -> QueryPlan:
    """Entities, expansion and adaptive k when the lexicon is for ``language``; else nothing."""
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
    timings = {"entities": (t1 - t0) * 1000, "expansion": (t2 - t1) * 1000,
               "top_k": (t3 - t2) * 1000}
    return QueryPlan(entities, expansion, top, timings)
