"""multi_hop(): the seed 001 TAG-004 cases, with the citation graph and relevance given."""

from __future__ import annotations

from excerpt.retrieve.multihop import MultiHopResult, multi_hop

GRAPH = {
    "doc1": ["doc15", "doc2", "irrelevant_doc"],  # doc1 says "제15조를 참조" among others
    "doc2": ["doc3", "doc1"],
    "doc3": ["doc4"],
    "doc15": [],
}
RELEVANCE = {"doc15": 0.9, "doc2": 0.8, "doc3": 0.7, "doc4": 0.95, "irrelevant_doc": 0.1}


def run(initial: list[str], graph: dict[str, list[str]] = GRAPH,
        max_hops: int = 2) -> MultiHopResult:
    return multi_hop(initial, lambda d: graph.get(d, []), lambda d: RELEVANCE.get(d, 0.0),
                     max_hops)


def test_section_citation_following() -> None:
    result = run(["doc1"])
    assert "doc15" in result.all_results


def test_two_hop_limit() -> None:
    result = run(["doc1"])
    assert result.hops_performed <= 2
    assert "doc3" in result.all_results  # hop 2
    assert "doc4" not in result.all_results  # would be hop 3


def test_low_relevance_filtering() -> None:
    result = run(["doc1"])
    assert "irrelevant_doc" not in result.hop_results
    skipped = [h for h in result.hops if not h.followed and h.to_id == "irrelevant_doc"]
    assert skipped and "relevance below 0.5" in skipped[0].reason


def test_cycle_detection() -> None:
    result = run(["doc1"], {"doc1": ["doc2"], "doc2": ["doc1"]})
    assert result.hops_performed <= 2
    assert result.all_results == ["doc1", "doc2"]


def test_report_and_determinism() -> None:
    first, second = run(["doc1"]), run(["doc1"])
    assert first.to_json() == second.to_json()
    followed = [(h.from_id, h.to_id, h.hop) for h in first.hops if h.followed]
    assert followed == [("doc1", "doc15", 1), ("doc1", "doc2", 1), ("doc2", "doc3", 2)]
    assert run(["doc1"], max_hops=0).hop_results == []
