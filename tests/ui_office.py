"""The served home the overview and search browser tests share: Dorian Gray and the Iliad in
"books", the handbook, and an office collection where one source is the board's (ACL tag
"board") and one was retired by a sync, with a reader's key that may not see the board's and a
board member's that may."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

from excerpt.engine import Engine
from tests.browser import HANDBOOK
from tests.http import add_keys, call, excerpt_serve

PUBLIC_MD = """# Cafeteria hours

The cafeteria serves lunch from noon until two in the afternoon on weekdays.

## Weekend brunch

On Saturdays the cafeteria serves brunch from ten until one.
"""
BOARD_MD = """# Northwind merger

The merger with Northwind closes in March; the board cut the cafeteria lunch budget.

## Quarterly dividend plan

The board plans a quarterly dividend once the merger closes.
"""
OLD_MD = """# Parking permits

Parking permits are renewed every January at the front desk.
"""
HIDDEN = ("Northwind", "merger", "dividend", "board.md", "board")
"""Words of the board's source (its headings, its path, its name): none may reach a page
shown to a key without the board's tag."""


class Office:
    """The served home: its URL and keys (ana: public only; ben: also the board's tag)."""

    def __init__(self, url: str, keys: dict[str, str]) -> None:
        self.url, self.keys = url, keys


def serve_office(root: Path, data: Callable[..., Path], port: int) -> Iterator[Office]:
    """Builds the home under ``root`` (``data``: tests' shared_data) and serves it on
    ``port``, checked to answer a search before it is handed out."""
    home = root / "home"
    engine = Engine(home)
    engine.ingest(data("books"), collection="books", embedder="none")
    engine.ingest(HANDBOOK, collection="handbook", embedder="none")
    for name, text in (("public.md", PUBLIC_MD), ("board.md", BOARD_MD), ("old.md", OLD_MD)):
        (root / name).write_text(text, "utf-8")
    engine.ingest(root / "old.md", collection="office", embedder="none", source="old")
    engine.ingest(root / "public.md", collection="office", embedder="none", source="public")
    engine.ingest(root / "board.md", collection="office", embedder="none", source="board",
                  acl_tags=["board"])
    engine.ingest(root / "board.md", collection="vault", embedder="none", source="board",
                  acl_tags=["board"])
    engine.store.retire_sources("office", ["old"])  # what a sync does when old.md is deleted
    engine.close()
    keys = add_keys(home, [("ana",), ("ben", "--acl-tag", "board")], revoke=())
    with excerpt_serve(["--home", str(home)], port) as url:
        assert call(f"{url}/v1/search?q=youth&collection=books&mode=bm25",
                    keys["ana"])[0] == 200
        yield Office(url, keys)
