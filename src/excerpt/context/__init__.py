"""Budgeted node-text fetch for prompts and answers."""

from excerpt.context.fetch import (
    PRIORITIZATIONS,
    ContextResult,
    NodeText,
    Prioritization,
    pack,
    priority_order,
)

__all__ = ["PRIORITIZATIONS", "ContextResult", "NodeText", "Prioritization", "pack",
           "priority_order"]
