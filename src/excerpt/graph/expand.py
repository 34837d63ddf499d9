"""Dependency expansion: breadth-first along allow-listed edges, inside access rights.

Expansion walks the *visible* graph only. A neighbour the caller may not see is never entered,
so nothing is reached through it, and it is counted (never named) in ``removed_by_security``
together with the edges that touch it: a hidden node's id must not reach the caller in any
output (docs/architecture.md, "Security first").

Limits, in the seed's words: no node beyond ``max_depth``; at most ``max_nodes`` nodes (seeds
included), taken in breadth-first order with each frontier sorted by id; only relations in
``allow``. ``seed_only`` keeps only edges that touch a seed (no secondary fan-out).

Direction (``direction``): ``out`` follows edges as stored (what X calls, reads, writes);
``in`` follows them backwards (who calls X, who writes or reads the table X); ``both`` does
both at every level. Edges are always reported as stored (``from_id --relation--> to_id``),
whichever way they were walked. Walking backwards reads the incoming edges of a visible node
from visible sources only, so a hidden caller is neither returned, traversed nor counted.
Relations are data: any name in ``allow`` is followed, whatever ingest wrote.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from excerpt.settings import DEFAULT_ALLOWLIST
from excerpt.types import Edge

Direction = Literal["out", "in", "both"]
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)


@dataclass(frozen=True)
class GraphLimits:
    max_depth: int = 2
    max_nodes: int = 120
    allow: tuple[str, ...] = DEFAULT_ALLOWLIST
    seed_only: bool = False
    direction: Direction = "out"

    def to_json(self) -> dict[str, Any]:
        return {"graph_max_depth": self.max_depth, "graph_max_nodes": self.max_nodes,
                "graph_edge_allowlist": list(self.allow), "seed_only": self.seed_only,
                "direction": self.direction}


@dataclass
class GraphResult:
    seeds: list[str]
    nodes: list[tuple[str, int]]  # (id, depth), by depth then id
    edges: list[Edge]
    removed_nodes: int = 0
    removed_edges: int = 0
    unknown_seeds: list[str] = field(default_factory=list)
    limits: GraphLimits = field(default_factory=GraphLimits)

    def to_json(self) -> dict[str, Any]:
        return {
            "seeds": self.seeds,
            "nodes": [{"id": i, "depth": d} for i, d in self.nodes],
            "edges": [{"from_id": e.from_id, "relation": e.relation, "to_id": e.to_id}
                      for e in self.edges],
            "removed_by_security": {"nodes": self.removed_nodes, "edges": self.removed_edges},
            "unknown_seeds": self.unknown_seeds,
            "settings": self.limits.to_json(),
        }


Adjacency = Mapping[str, Sequence[Edge]]
"""Outgoing edges by source id (every relation; the allowlist is applied while walking)."""


def adjacency(triples: Iterable[tuple[str, str, str]]) -> dict[str, list[Edge]]:
    """Outgoing edges per node id from (from_id, relation, to_id) triples, each list sorted by
    (relation, target) and deduplicated."""
    out: dict[str, set[tuple[str, str]]] = {}
    for src, rel, dst in triples:
        out.setdefault(src, set()).add((rel, dst))
    return {src: [Edge(src, rel, dst) for rel, dst in sorted(pairs)] for src, pairs in out.items()}


def reverse_adjacency(triples: Iterable[tuple[str, str, str]]) -> dict[str, list[Edge]]:
    """Incoming edges per target id, each list sorted by (relation, source), deduplicated."""
    into: dict[str, set[tuple[str, str]]] = {}
    for src, rel, dst in triples:
        into.setdefault(dst, set()).add((rel, src))
    return {dst: [Edge(src, rel, dst) for rel, src in sorted(pairs)] for dst, pairs in into.items()}


def _steps(direction: Direction, outgoing: Callable[[str], Sequence[Edge]],
           incoming: Callable[[str], Sequence[Edge]] | None
           ) -> Callable[[str], list[tuple[Edge, str]]]:
    """(edge, the node it leads to) from a node, in the direction asked."""
    if direction != "out" and incoming is None:
        raise ValueError(f"direction {direction!r} needs the incoming edges")

    def steps(node_id: str) -> list[tuple[Edge, str]]:
        found: list[tuple[Edge, str]] = []
        if direction in ("out", "both"):
            found += [(e, e.to_id) for e in outgoing(node_id)]
        if direction in ("in", "both") and incoming is not None:
            found += [(e, e.from_id) for e in incoming(node_id)]
        return found

    return steps


NodeStatus = Literal["visible", "hidden", "missing"]


def expand(
    seeds: Sequence[str],
    outgoing: Callable[[str], Sequence[Edge]],
    status: Callable[[str], NodeStatus],
    limits: GraphLimits,
    prefetch: Callable[[Sequence[str]], None] | None = None,
    incoming: Callable[[str], Sequence[Edge]] | None = None,
) -> GraphResult:
    """Expand ``seeds`` breadth-first, ``limits.direction`` ways (``incoming(id)``: the edges
    into a visible node from visible sources; needed for ``in`` and ``both``).

    ``status(id)``: "visible", "hidden" (exists, the caller may not see it) or "missing" (no
    such node in the view: an edge to an object outside the snapshot). Seeds that are hidden or
    missing are reported together in ``unknown_seeds`` (the caller cannot tell which).
    ``prefetch(ids)``, when given, is told each frontier before it is walked and the targets it
    reached, so a database can answer for all of them in a few queries.
    """
    if limits.max_depth < 0 or limits.max_nodes < 1:
        raise ValueError("max_depth must be >= 0 and max_nodes >= 1")
    result = GraphResult(seeds=list(dict.fromkeys(seeds)), nodes=[], edges=[], limits=limits)
    if prefetch:
        prefetch(result.seeds)
    depth_of: dict[str, int] = {}
    hidden: set[str] = set()
    for seed in result.seeds:
        if status(seed) == "visible":
            if len(depth_of) < limits.max_nodes:
                depth_of[seed] = 0
        else:
            result.unknown_seeds.append(seed)
    allow = set(limits.allow)
    steps = _steps(limits.direction, outgoing, incoming)
    frontier = sorted(depth_of)
    kept: list[Edge] = []
    for depth in range(1, limits.max_depth + 1):
        if limits.seed_only and depth > 1:
            break
        reached: set[str] = set()
        if prefetch:
            prefetch([other for src in frontier for _, other in steps(src)])
        for src in frontier:
            for edge, other in steps(src):
                if edge.relation not in allow:
                    continue
                target = status(other)
                if target != "visible":
                    if target == "hidden":
                        hidden.add(other)
                        result.removed_edges += 1
                    continue
                if other not in depth_of and other not in reached:
                    if len(depth_of) + len(reached) >= limits.max_nodes:
                        continue
                    reached.add(other)
                kept.append(edge)
        for node_id in reached:
            depth_of[node_id] = depth
        frontier = sorted(reached)
    result.removed_nodes = len(hidden)
    result.nodes = sorted(depth_of.items(), key=lambda item: (item[1], item[0]))
    unique = {(e.from_id, e.relation, e.to_id): e for e in kept
              if e.to_id in depth_of and e.from_id in depth_of}
    result.edges = [unique[key] for key in sorted(unique)]
    return result
