"""Why each passage was chosen: pipeline traces and logs (PROV-O events come with `ask`)."""

from excerpt.provenance.trace import (
    Trace,
    TraceLog,
    context_entry,
    graph_entry,
    retrieval_filters,
    search_entry,
)

__all__ = ["Trace", "TraceLog", "context_entry", "graph_entry", "retrieval_filters",
           "search_entry"]
