"""expand(): breadth-first, limits, allowlist, seed-only, hidden vs missing neighbours."""

from __future__ import annotations

import pytest

from excerpt.graph import GraphLimits, adjacency, expand
from excerpt.graph.expand import NodeStatus

EDGES = [("A", "Calls", "B"), ("A", "Calls", "C"), ("B", "Calls", "D"), ("C", "ReadsFrom", "D"),
         ("D", "Calls", "A"), ("C", "Other", "E"), ("B", "Calls", "H"), ("H", "Calls", "F"),
         ("C", "WritesTo", "X"), ("A", "Calls", "B")]
ADJ = adjacency(EDGES)
HIDDEN = {"H"}
NODES = {"A", "B", "C", "D", "E", "F", "H"}


def status(node_id: str) -> NodeStatus:
    if node_id not in NODES:
        return "missing"
    return "hidden" if node_id in HIDDEN else "visible"


def run(seeds: list[str], **limits: object) -> tuple[list[tuple[str, int]], list[tuple[str, ...]],
                                                    int, int]:
    result = expand(seeds, lambda n: ADJ.get(n, []), status, GraphLimits(**limits))  # type: ignore[arg-type]
    edges = [(e.from_id, e.relation, e.to_id) for e in result.edges]
    return result.nodes, edges, result.removed_nodes, result.removed_edges


def test_breadth_first_with_depths_and_cycle() -> None:
    nodes, edges, removed_nodes, removed_edges = run(["A"], max_depth=2)
    assert nodes == [("A", 0), ("B", 1), ("C", 1), ("D", 2)]
    assert ("D", "Calls", "A") not in edges  # D is on the last level: not expanded
    assert ("B", "Calls", "D") in edges and ("C", "ReadsFrom", "D") in edges
    assert (removed_nodes, removed_edges) == (1, 1)  # H hidden; F never reached through it
    deeper, cyclic, *_ = run(["A"], max_depth=3)
    assert deeper == nodes  # the cycle back to A adds an edge, not a node
    assert ("D", "Calls", "A") in cyclic


def test_duplicates_collapse_and_order_is_deterministic() -> None:
    assert ADJ["A"] == sorted(ADJ["A"], key=lambda e: (e.relation, e.to_id))
    assert len(ADJ["A"]) == 2
    assert run(["A"], max_depth=2) == run(["A", "A"], max_depth=2)


def test_allowlist_and_missing_targets() -> None:
    nodes, edges, *_ = run(["C"], max_depth=1, allow=("Other", "WritesTo"))
    assert nodes == [("C", 0), ("E", 1)]  # X is missing: dropped silently, not "removed"
    assert edges == [("C", "Other", "E")]


def test_max_nodes_counts_seeds_and_keeps_bfs_order() -> None:
    nodes, edges, *_ = run(["A"], max_depth=3, max_nodes=2)
    assert nodes == [("A", 0), ("B", 1)]
    assert edges == [("A", "Calls", "B")]


def test_seed_only_stops_after_the_first_hop() -> None:
    nodes, edges, *_ = run(["A"], max_depth=5, seed_only=True)
    assert {e[0] for e in edges} == {"A"}
    assert max(d for _, d in nodes) == 1


def test_hidden_and_missing_seeds_are_reported_alike() -> None:
    result = expand(["H", "ZZ", "B"], lambda n: ADJ.get(n, []), status, GraphLimits(1, 10))
    assert result.unknown_seeds == ["H", "ZZ"]
    assert [n for n, _ in result.nodes] == ["B", "D"]


def test_bad_limits() -> None:
    with pytest.raises(ValueError):
        expand(["A"], lambda n: [], status, GraphLimits(-1, 10))
