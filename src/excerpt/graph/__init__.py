"""Dependency-graph expansion inside access rights."""

from excerpt.graph.expand import GraphLimits, GraphResult, adjacency, expand
from excerpt.settings import DEFAULT_ALLOWLIST

__all__ = ["DEFAULT_ALLOWLIST", "GraphLimits", "GraphResult", "adjacency", "expand"]
