"""The library both framework retrievers' tests read: Dorian Gray (BM25 only: seconds, not a
minute of embedding) and the board's minutes, tagged ``board``, in collection ``books``; the
question each asks, and the board's node a reader must never get."""

from __future__ import annotations

from pathlib import Path

from excerpt import Engine

QUERY = "Lord Henry on influence"
BOARD_QUERY = "board minutes on the secret merger"
BOARD_ID = "minutes.md:0000"


def ingest_books(home: Path, books: Path) -> Engine:
    """The library in a new home at ``home`` (``books``: Dorian Gray's file)."""
    engine = Engine(home)
    engine.ingest(books, collection="books", embedder="none")
    minutes = home.parent / "minutes"
    minutes.mkdir()
    (minutes / "minutes.md").write_text(
        "# Board minutes\n\nThe board discussed the secret merger; Lord Henry's influence "
        "on the board minutes was noted.\n", encoding="utf-8")
    engine.ingest(minutes, collection="books", acl_tags=["board"], embedder="none")
    return engine
