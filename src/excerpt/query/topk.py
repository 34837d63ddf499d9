"""Adaptive top-k (seed 001, TAG-003): how many hits a query gets when -k is not given.

    simple      one keyword, or a regulation name (with or without an article)      5
    medium      a natural question, or a few words of one subject                   10
    complex     several conditions: keywords of two or more categories              15
    multi-part  two or more sub-queries joined by a conjunction                      20

Query shape words (question markers, conjunctions) come from the lexicon. When the measured
time of the search exceeds its budget, k is reduced for the next results (halved, at least
``MIN_K``), and the reason says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from excerpt.query.entities import Entity, EntityType
from excerpt.query.lexicon import Lexicon

SIMPLE, MEDIUM, COMPLEX, MULTI_PART = 5, 10, 15, 20
MIN_K = 3
CONDITION_TYPES = {EntityType.PROCEDURE, EntityType.REQUIREMENT, EntityType.BENEFIT,
                   EntityType.DEADLINE}


@dataclass(frozen=True)
class TopK:
    k: int
    kind: str  # simple | medium | complex | multi-part
    reason: str


def select_top_k(query: str, entities: list[Entity], lexicon: Lexicon) -> TopK:
    words = query.split()
    parts = _parts(query, lexicon)
    if len(parts) >= 2:
        return TopK(MULTI_PART, "multi-part", f"{len(parts)} sub-queries joined by a conjunction")
    kinds = {e.entity_type for e in entities}
    if len(words) == 1 or (kinds and kinds <= {EntityType.REGULATION, EntityType.SECTION,
                                                   EntityType.PARAGRAPH, EntityType.ITEM}):
        return TopK(SIMPLE, "simple", "a single keyword or a regulation name")
    if any(marker in query for marker in lexicon.question_markers):
        return TopK(MEDIUM, "medium", "a natural question")
    conditions = kinds & CONDITION_TYPES
    if len(conditions) >= 2:
        names = ", ".join(sorted(k.value for k in conditions))
        return TopK(COMPLEX, "complex", f"several conditions ({names})")
    return TopK(MEDIUM, "medium", "a few words of one subject")


def _parts(query: str, lexicon: Lexicon) -> list[str]:
    if not lexicon.conjunctions:
        return [query]
    pattern = r"\s+(?:" + "|".join(map(re.escape, lexicon.conjunctions)) + r")\s+"
    return [p for p in re.split(pattern, query) if p.strip()]


def reduce_for_latency(top: TopK, elapsed_ms: float, budget_ms: float) -> TopK:
    """A smaller k when the search took longer than its budget (the reason says by how much)."""
    if elapsed_ms <= budget_ms or top.k <= MIN_K:
        return top
    k = max(MIN_K, top.k // 2)
    return TopK(k, top.kind, f"{top.reason}; reduced from {top.k}: search took "
                             f"{elapsed_ms:.0f} ms, over the {budget_ms:.0f} ms budget")
