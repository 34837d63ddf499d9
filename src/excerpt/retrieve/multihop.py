"""Multi-hop retrieval (seed 001, TAG-004): follow the citations of retrieved passages.

From the initial results, follow each passage's citations (article references 제N조, 「other
regulation」 mentions, 관련 규정: whatever edges the caller hands in) breadth-first, at most
``max_hops`` hops. A cited passage whose relevance to the query is below ``threshold`` is
skipped (not added, not followed further); a passage already reached is never added twice, so
cycles end. Every decision is reported: what was followed, at which hop, with which relevance,
and what was skipped and why.

The caller supplies ``cites(id)`` (the ids a passage cites, already limited to what the caller
may see) and ``relevance(id)`` (a score in [0, 1] against the query); this module has no store.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

MAX_HOPS = 2
THRESHOLD = 0.5


@dataclass
class Hop:
    from_id: str
    to_id: str
    hop: int
    relevance: float
    followed: bool
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"from_id": self.from_id, "to_id": self.to_id, "hop": self.hop,
                "relevance": round(self.relevance, 4), "followed": self.followed,
                "reason": self.reason}


@dataclass
class MultiHopResult:
    initial: list[str]
    hop_results: list[str] = field(default_factory=list)  # added by hops, in order
    hops: list[Hop] = field(default_factory=list)
    hops_performed: int = 0

    @property
    def all_results(self) -> list[str]:
        return self.initial + self.hop_results

    def to_json(self) -> dict[str, Any]:
        return {"hops_performed": self.hops_performed, "added": self.hop_results,
                "citations": [h.to_json() for h in self.hops]}


def multi_hop(
    initial: Sequence[str],
    cites: Callable[[str], Sequence[str]],
    relevance: Callable[[str], float],
    max_hops: int = MAX_HOPS,
    threshold: float = THRESHOLD,
) -> MultiHopResult:
    result = MultiHopResult(list(dict.fromkeys(initial)))
    reached = set(result.initial)
    frontier = list(result.initial)
    for hop in range(1, max_hops + 1):
        next_frontier: list[str] = []
        for source in frontier:
            for target in cites(source):
                if target in reached:
                    if target != source:
                        result.hops.append(Hop(source, target, hop, relevance(target), False,
                                               "already reached"))
                    continue
                score = relevance(target)
                if score < threshold:
                    result.hops.append(Hop(source, target, hop, score, False,
                                           f"relevance below {threshold}"))
                    continue
                reached.add(target)
                next_frontier.append(target)
                result.hop_results.append(target)
                result.hops.append(Hop(source, target, hop, score, True))
        if not next_frontier:
            break
        result.hops_performed = hop
        frontier = next_frontier
    return result
