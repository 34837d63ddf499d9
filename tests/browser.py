"""Helpers the browser tests share (fixtures are in conftest.py)."""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def console_errors(page: Any) -> list[str]:
    """The console errors ``page`` logs from now on (failed loads included)."""
    seen: list[str] = []
    page.on("console", lambda m: seen.append(m.text) if m.type == "error" else None)
    return seen


@contextmanager
def watched(page: Any, url: str,
            tolerated: Callable[[str], bool] = lambda _: False) -> Iterator[Any]:
    """``page`` for one test, which then fails on a console error (but those ``tolerated``
    says the test asked for) or on any request that left the server at ``url``."""
    errors = console_errors(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    yield page
    assert [e for e in errors if not tolerated(e)] == []
    assert all(u.startswith((url + "/", "data:")) for u in requests), requests


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's header (and proof that it is one)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return int(width), int(height)


SHOTS = "EXCERPT_UI_SCREENSHOTS"


def keep(shot: Path) -> None:
    """Copies a screenshot into $EXCERPT_UI_SCREENSHOTS when that is set (test artefacts)."""
    folder = os.environ.get(SHOTS)
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(folder) / shot.name)


WIDTHS = {"desktop": 1280, "phone": 390}
"""The widths every view is looked at: a desktop's and a phone's."""
LOOKS = {"desktop": (1280, "light"), "phone": (390, "light"), "narrow-dark": (360, "dark")}
"""Width and colour scheme the accessibility checks look at each view in: the two widths in the
light theme, and the narrowest phone the UI supports in the dark one (the system's preference,
as Chromium emulates it)."""
HANDBOOK = Path(__file__).resolve().parents[1] / "examples" / "handbook"
CAUTIOUS = "What does the painting of Dorian show about the tax rate of London?"
"""A question Dorian Gray answers only with caution."""
CONFIDENT = "What does Lord Henry say about youth and beauty?"
"""A question Dorian Gray answers plainly."""


def shots(page: Any, folder: Path, name: str) -> None:
    """Full-page screenshots of ``page`` at :data:`WIDTHS`, saved into ``folder`` (and kept,
    :func:`keep`), each a PNG of the page's width with nothing scrolling sideways."""
    for label, width in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": 900})
        shot = folder / f"{name}-{label}.png"
        shot_width, _ = png_size(page.screenshot(path=str(shot), full_page=True))
        keep(shot)
        assert shot_width == width
        assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
    page.set_viewport_size({"width": 1100, "height": 900})


def books_and_code(engine: Any, shared_data: Any, handbook: bool = False) -> None:
    """What most browser tests serve: Dorian Gray in "books", the seed's fake enterprise
    release in "code" and, with ``handbook``, examples/handbook in "handbook" (no vectors: the
    page, not the ranking, is under test)."""
    engine.ingest(shared_data("books", "pg174_dorian_gray.txt"), collection="books",
                  embedder="none")
    engine.ingest(shared_data("fake_enterprise", "Release_FAKE_ENTERPRISE_1.0.zip"),
                  collection="code", embedder="none")
    if handbook:
        engine.ingest(HANDBOOK, collection="handbook", embedder="none")


class Site:
    """A served home for the browser tests: its URL and a reader's key."""

    def __init__(self, url: str, key: str) -> None:
        self.url, self.key = url, key


def serve_home(home: Path, port: int) -> Iterator[Site]:
    """``excerpt serve`` over ``home`` (which holds "books") on ``port``, with one reader's
    key, ana's, checked to search before the site is handed out."""
    from tests.http import add_keys, call, excerpt_serve

    keys = add_keys(home, [("ana",)], revoke=())
    with excerpt_serve(["--home", str(home)], port) as url:
        assert call(f"{url}/v1/search?q=youth&collection=books&mode=bm25",
                    keys["ana"])[0] == 200
        yield Site(url, keys["ana"])
