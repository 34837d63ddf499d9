"""The web UI names a document passage's page and section (issue 19 item 4), in headless
Chromium against a real ``excerpt serve``: an ask "on page 12" quotes the passages of page 12,
each placed as ``pump.pdf · p. 12`` (``p. 11–12`` when it spans pages, the printed label when
the PDF gives one, then the section), search hits likewise, and a Markdown section by its
heading path as before. The nodes carry the metadata the PDF reader writes
(ingest/documents/blocks.py), published as a BEIR corpus, and a real PDF (tests/pdfs.py, pages
labelled i, 1, 2, 3) is placed by its printed page; screenshots are taken and checked."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.browser import console_errors, png_size
from tests.http import add_keys, excerpt_serve
from tests.page_corpus import LABELLED, MANUAL, PAGES, beir
from tests.pdfs import write_manual

from excerpt.engine import Engine

TURN = "#turns > .turn:last-child"  # the conversation's last turn: the question just asked


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory,
           free_port: Any) -> Iterator[tuple[str, str]]:
    """(the server's URL, a key that reads every collection)."""
    root = tmp_path_factory.mktemp("web-ui-places")
    (root / "manual.md").write_text(MANUAL, "utf-8")
    engine = Engine(root / "home")
    engine.ingest(beir(root / "pump", PAGES), collection="pump", fmt="beir", embedder="none")
    engine.ingest(beir(root / "valve", LABELLED), collection="valve", fmt="beir",
                  embedder="none")
    engine.ingest(root / "manual.md", collection="manual", embedder="none")
    engine.ingest(write_manual(root / "widgets.pdf"), collection="pdf", embedder="none")
    engine.close()
    keys = add_keys(root / "home", [("ana",)], revoke=())
    with excerpt_serve(["--home", str(root / "home")], free_port()) as url:
        yield url, keys["ana"]


@pytest.fixture
def ui(page: Any) -> Iterator[Any]:
    errors = console_errors(page)
    yield page
    assert errors == []


def open_collection(page: Any, served: tuple[str, str], collection: str) -> None:
    url, key = served
    page.goto(url + "/")
    page.fill("#key", key)
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", collection)
    page.select_option("#mode", "bm25")


def ask(page: Any, question: str) -> dict[str, str]:
    """The places of the quotes shown, by node id."""
    page.fill("#query", question)
    page.click("#ask-button")
    page.wait_for_selector(f"{TURN}[data-state=answered]", timeout=30_000)
    return places(page, f"{TURN} .source")


def places(page: Any, selector: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in page.locator(selector).all():
        where = item.locator(".place")
        assert where.get_attribute("data-kind") == "document"
        found[item.get_attribute("data-id") or ""] = where.inner_text()
    return found


def shot_of(page: Any, selector: str, path: Path) -> tuple[int, int]:
    """A screenshot of ``selector``, checked to be a PNG of the element's size."""
    data = page.locator(selector).screenshot(path=str(path))
    box = page.locator(selector).bounding_box()
    width, height = png_size(data)
    assert abs(width - box["width"]) < 2 and abs(height - box["height"]) < 2
    return width, height


def test_a_quote_on_page_12_says_p_12(ui: Any, served: tuple[str, str], tmp_path: Path) -> None:
    open_collection(ui, served, "pump")
    found = ask(ui, "What happens to the pump pressure on page 12?")
    assert found == {"p11-12": "pump.pdf · p. 11–12 · 4.2 Alarms", "p12": "pump.pdf · p. 12"}
    width, height = shot_of(ui, f"{TURN} .sources", tmp_path / "quotes.png")
    assert width > 300 and height > 40
    place = ui.locator(f"{TURN} .source .place").last
    assert place.is_visible() and shot_of(ui, f"{TURN} .source:last-child .place",
                                          tmp_path / "place.png")[0] > 20


def test_a_printed_page_label_is_the_page_shown(ui: Any, served: tuple[str, str]) -> None:
    open_collection(ui, served, "valve")
    assert ask(ui, "What is the valve pressure on page 12?") == {"at-24": "pump.pdf · p. 12"}


def test_search_hits_name_their_page(ui: Any, served: tuple[str, str]) -> None:
    open_collection(ui, served, "pump")
    ui.fill("#query", "pump pressure log")
    ui.click("#search-button")
    ui.wait_for_selector("#hits:not([hidden])")
    found = places(ui, "#hit-list > li")
    assert found["p13"] == "pump.pdf · p. 13" and found["p11"] == "pump.pdf · p. 11"


def test_a_markdown_section_is_named_by_its_headings(ui: Any, served: tuple[str, str]) -> None:
    open_collection(ui, served, "manual")
    found = ask(ui, "What must operators check about the boiler pressure in section 2.1?")
    assert found == {"manual.md:0002": "manual.md · 2 Operation > 2.1 Requirements"}


def test_a_real_pdf_quote_shows_its_printed_page(ui: Any, served: tuple[str, str],
                                                 tmp_path: Path) -> None:
    open_collection(ui, served, "pdf")
    found = ask(ui, "Which parts are listed on page 2?")
    assert found == {"widgets.pdf:0002": "widgets.pdf · p. 2 · 3 Parts table"}
    width, height = shot_of(ui, f"{TURN} .source", tmp_path / "pdf-quote.png")
    assert width > 300 and height > 40


PLACES = [  # metadata -> (kind, label): documents gain page and chapter; the others as before
    ({"path": "b.epub", "format": "epub", "chapter": 3, "chapter_title": "Storms",
      "section": "Storms > At sea"}, ["document", "b.epub · chapter 3 Storms · Storms > At sea"]),
    ({"path": "m.pdf", "page": 5, "page_label": "iv", "pages": [5]}, ["document", "m.pdf · p. iv"]),
    ({"path": "m.pdf", "page": 17, "page_end": 18, "page_label": "11", "page_end_label": "12"},
     ["document", "m.pdf · p. 11–12"]),
    ({"path": "m.pdf", "page": 11, "page_end": 12, "pages": [11, 12], "section": "2 Design"},
     ["document", "m.pdf · p. 11–12 · 2 Design"]),
    ({"path": "notes.md", "section": "Setup"}, ["document", "notes.md · Setup"]),
    ({"book": 1, "chapter": 3}, ["book", "The Iliad · book 1 · chapter 3"]),
    ({"book": 17, "part": "argument"}, ["book", "The Iliad · book 17 · argument"]),
    ({"book": 1, "part": "body"}, ["book", "The Iliad · book 1"]),
    ({"part": "front"}, ["book", "The Iliad · front matter"]),
    ({"regulation": "교원인사규정", "chapter": "제2장 임용", "article": "제15조",
      "caption": "(임용)"},
     ["regulation", "교원인사규정 · 제2장 임용 · 제15조 (임용)"]),
    ({"file": "src/a.py", "code_language": "python", "class": "A", "member": "run"},
     ["code", "src/a.py · A.run"]),
]


def test_places_of_every_kind(ui: Any, served: tuple[str, str]) -> None:
    ui.goto(served[0] + "/")
    found = ui.evaluate("""async (cases) => {
        const p = await import('/static/places.js');
        return cases.map((m) => { const w = p.place(m, 'The Iliad', '/x/iliad.txt');
                                  return [w.kind, w.label]; });
    }""", [m for m, _ in PLACES])
    assert found == [expected for _, expected in PLACES]
