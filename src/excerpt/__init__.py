"""excerpt: a grounded retrieval engine.

>>> from excerpt import Engine, Filters, Principal, AskOptions
>>> engine = Engine(".excerpt")                                    # doctest: +SKIP
>>> engine.ingest("examples/handbook", collection="demo")          # doctest: +SKIP
>>> engine.ask("How is a snapshot published?", Filters("demo"))    # doctest: +SKIP

The engine wires every stage (ingest, search, graph, context, ask); the CLI (``excerpt``) is a
thin layer over it. Names here are the stable Python API.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from excerpt.compose.ask import AskOptions, AskResult
    from excerpt.engine import Engine, SearchResult
    from excerpt.errors import ExcerptError
    from excerpt.settings import Settings
    from excerpt.types import Filters, Principal

_HOME = {
    "AskOptions": "excerpt.compose.ask",
    "AskResult": "excerpt.compose.ask",
    "Engine": "excerpt.engine",
    "SearchResult": "excerpt.engine",
    "ExcerptError": "excerpt.errors",
    "Settings": "excerpt.settings",
    "Filters": "excerpt.types",
    "Principal": "excerpt.types",
}
"""Where each public name lives. They load on first use (PEP 562), so importing one part of
the package (the CLI's search, say) does not import the rest: ``AskOptions`` alone brings the
answer composer and numpy in."""

__all__ = [
    "AskOptions",
    "AskResult",
    "Engine",
    "ExcerptError",
    "Filters",
    "Principal",
    "SearchResult",
    "Settings",
]


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOME[name]), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
