"""excerpt: a grounded retrieval engine.

>>> from excerpt import Engine, Filters, Principal, AskOptions
>>> engine = Engine(".excerpt")                                    # doctest: +SKIP
>>> engine.ingest("examples/handbook", collection="demo")          # doctest: +SKIP
>>> engine.ask("How is a snapshot published?", Filters("demo"))    # doctest: +SKIP

The engine wires every stage (ingest, search, graph, context, ask); the CLI (``excerpt``) is a
thin layer over it. Names here are the stable Python API.
"""

from excerpt.compose.ask import AskOptions, AskResult
from excerpt.engine import Engine, SearchResult
from excerpt.errors import ExcerptError
from excerpt.settings import Settings
from excerpt.types import Filters, Principal

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
