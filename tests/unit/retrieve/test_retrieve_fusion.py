from __future__ import annotations

from excerpt.retrieve.fusion import blend, rrf
from excerpt.retrieve.view import Candidate


def c(i: int, score: float, part: int = 0) -> Candidate:
    return Candidate(part, i, f"n{i:02d}", score)


def test_rrf_rewards_agreement() -> None:
    lexical = [c(1, 9.0), c(2, 8.0), c(3, 7.0)]
    dense = [c(3, 0.9), c(1, 0.8), c(4, 0.7)]
    fused = rrf([lexical, dense], depth=4)
    assert [x.id for x in fused][:2] == ["n01", "n03"]
    assert len(fused) == 4


def test_rrf_ties_broken_by_id() -> None:
    fused = rrf([[c(5, 1.0)], [c(2, 1.0)]], depth=2)
    assert [x.id for x in fused] == ["n02", "n05"]


def test_blend_alpha_extremes_follow_one_list() -> None:
    lexical = [c(1, 9.0), c(2, 5.0), c(3, 1.0)]
    dense = [c(3, 0.9), c(2, 0.5), c(1, 0.1)]
    assert [x.id for x in blend(lexical, dense, 3, alpha=0.0)] == ["n01", "n02", "n03"]
    assert [x.id for x in blend(lexical, dense, 3, alpha=1.0)] == ["n03", "n02", "n01"]


def test_blend_handles_empty_lists() -> None:
    assert blend([], [], 5, 0.5) == []
    only = blend([c(1, 2.0)], [], 5, 0.5)
    assert [x.id for x in only] == ["n01"]
