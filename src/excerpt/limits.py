"""How much one call may ask for: every counted option's bounds, declared once for every
interface (issue 28 item 11).

The CLI (``search -k``, ``ask --doc-limit``, ``graph --max-depth``…), the HTTP routes and bodies
and the MCP tools take these options under the same names and bounds, and refuse a value outside
them with the same sentence, :func:`refusal` (``k must be between 1 and 100 (got 1000000)``):
the CLI as a usage error (exit 2), HTTP as a 400 in the one error shape, MCP as a tool error.
`excerpt eval -k` is not bounded here: an evaluation may rank deeper than a reader reads.
"""

from __future__ import annotations

from excerpt.errors import InputError

__all__ = ["LIMITS", "MAX_K", "refusal", "within"]

MAX_K = 100
"""Hits one search returns at most, and passages one ask composes from at most."""

LIMITS: dict[str, tuple[int, int]] = {
    "k": (1, MAX_K),
    "doc_limit": (1, MAX_K),
    "fetch_limit": (1, 3 * MAX_K),  # a reranker's pool: 3 x k, as `--rerank` fetches
    "max_quotes": (1, 20),
    "max_depth": (0, 10),
    "max_nodes": (1, 10_000),
    "budget_tokens": (1, 1_000_000),
    "max_chars": (0, 10_000_000),
}
"""Each counted option's lowest and highest value, by its name in the HTTP bodies and MCP
tools (the CLI spells it ``-k``, ``--doc-limit``, ``--max-depth``…)."""


def refusal(name: str, value: object) -> str:
    """The one sentence refusing ``value`` for option ``name`` on every interface."""
    low, high = LIMITS[name]
    return f"{name} must be between {low} and {high} (got {value})"


def within(name: str, value: int | None) -> int | None:
    """``value`` when it is None (the default) or inside ``name``'s bounds, else InputError."""
    if value is not None:
        low, high = LIMITS[name]
        if not low <= value <= high:
            raise InputError(refusal(name, value), param=name)
    return value
