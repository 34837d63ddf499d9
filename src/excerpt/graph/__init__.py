"""Dependency-graph expansion inside access rights."""

from excerpt.graph.expand import DEFAULT_ALLOWLIST, GraphLimits, GraphResult, adjacency, expand

__all__ = ["DEFAULT_ALLOWLIST", "GraphLimits", "GraphResult", "adjacency", "expand"]
