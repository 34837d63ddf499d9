"""Budgeted context: node texts in priority order, each whole or absent (seed 004, section 7).

Order (``prioritization``):

- ``seed_first``: every seed, then every graph node;
- ``graph_first``: every graph node, then every seed;
- ``balanced``: seed, graph, seed, graph, ... (the longer list's rest at the end).

An id given as both seed and graph node counts once, as a seed. Packing walks that order and
takes a node only if its whole text fits both the remaining token budget and the remaining
character budget (atomic skip: never a truncated text); a node that does not fit is listed in
``skipped`` and the walk goes on, so a later, smaller node may still fit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

Prioritization = Literal["seed_first", "graph_first", "balanced"]
PRIORITIZATIONS: tuple[Prioritization, ...] = ("seed_first", "graph_first", "balanced")
Group = Literal["seed", "graph"]


@dataclass(frozen=True)
class NodeText:
    id: str
    group: Group
    text: str
    tokens: int

    @property
    def chars(self) -> int:
        return len(self.text)

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "group": self.group, "text": self.text, "tokens": self.tokens,
                "chars": self.chars}


@dataclass
class ContextResult:
    node_texts: list[NodeText] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (id, reason)
    budget_tokens: int | None = None
    max_chars: int | None = None
    prioritization: Prioritization = "seed_first"

    @property
    def total_tokens(self) -> int:
        return sum(n.tokens for n in self.node_texts)

    @property
    def total_chars(self) -> int:
        return sum(n.chars for n in self.node_texts)

    def to_json(self) -> dict[str, Any]:
        return {
            "node_texts": [n.to_json() for n in self.node_texts],
            "total_tokens": self.total_tokens,
            "total_chars": self.total_chars,
            "skipped": [{"id": i, "reason": r} for i, r in self.skipped],
            "budget_tokens": self.budget_tokens,
            "max_chars": self.max_chars,
            "prioritization": self.prioritization,
        }


def priority_order(seeds: Sequence[str], graph: Sequence[str],
                   prioritization: Prioritization) -> list[tuple[str, Group]]:
    """The ids in the order they are offered to the budget, each once, with its group."""
    seed_ids = list(dict.fromkeys(seeds))
    graph_ids = [g for g in dict.fromkeys(graph) if g not in set(seed_ids)]
    s: list[tuple[str, Group]] = [(i, "seed") for i in seed_ids]
    g: list[tuple[str, Group]] = [(i, "graph") for i in graph_ids]
    if prioritization == "seed_first":
        return s + g
    if prioritization == "graph_first":
        return g + s
    if prioritization == "balanced":
        out: list[tuple[str, Group]] = []
        for i in range(max(len(s), len(g))):
            out.extend(s[i:i + 1] + g[i:i + 1])
        return out
    raise ValueError(f"unknown prioritization {prioritization!r}; choose one of {PRIORITIZATIONS}")


def pack(
    order: Sequence[tuple[str, Group]],
    texts: dict[str, str],
    count_tokens: Callable[[str], int],
    budget_tokens: int | None,
    max_chars: int | None,
) -> tuple[list[NodeText], list[tuple[str, str]]]:
    """Take each node whole if it fits both budgets; ``texts`` lacks ids the caller cannot read."""
    taken: list[NodeText] = []
    skipped: list[tuple[str, str]] = []
    tokens_left = budget_tokens
    chars_left = max_chars
    for node_id, group in order:
        text = texts.get(node_id)
        if text is None:
            skipped.append((node_id, "not found"))
            continue
        tokens = count_tokens(text)
        if tokens_left is not None and tokens > tokens_left:
            skipped.append((node_id, f"budget_tokens: needs {tokens}, {tokens_left} left"))
            continue
        if chars_left is not None and len(text) > chars_left:
            skipped.append((node_id, f"max_chars: needs {len(text)}, {chars_left} left"))
            continue
        taken.append(NodeText(node_id, group, text, tokens))
        tokens_left = None if tokens_left is None else tokens_left - tokens
        chars_left = None if chars_left is None else chars_left - len(text)
    return taken, skipped
