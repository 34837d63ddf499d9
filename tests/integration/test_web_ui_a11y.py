"""The web UI's accessibility (issue 32), in headless Chromium against a real `excerpt serve`
process: every view the UI has today (the start page before and after a key, search results, an
error, k refused in place, an answer (a turn of the conversation) and a cautious one, its
provenance opened, the passage in context, a code hit's dependencies and /docs), at a desktop
width (1280 px) and a phone's (390 px) in the light theme and at 360 px in the dark one, checked
with axe-core injected into the page: no serious or critical violation. Each view's full-page
screenshot is saved (into pytest's tmp dir, and also into $EXCERPT_UI_SCREENSHOTS when it is
set, to keep them as artefacts) and checked to be a PNG of the page's width; nothing scrolls
sideways."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.a11y import axe_violations, looked_at, severe
from tests.browser import (
    CAUTIOUS,
    CONFIDENT,
    LOOKS,
    Site,
    books_and_code,
    console_errors,
    serve_home,
)

from excerpt.engine import Engine

TURN = "#turns > .turn:last-child"  # the conversation's last turn
ANSWERED = TURN + "[data-state=answered]"


@pytest.fixture(scope="module")
def site(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
         free_port: Callable[[], int]) -> Iterator[Site]:
    """A small home: a book, a code archive and the handbook; one reader's key."""
    home = tmp_path_factory.mktemp("web-ui-a11y") / "home"
    engine = Engine(home)
    books_and_code(engine, shared_data, handbook=True)
    engine.close()
    yield from serve_home(home, free_port())


# -- the views: each leaves the page showing one state of the UI -----------------------------

def with_key(page: Any, site: Site, collection: str = "books") -> None:
    page.goto(site.url + "/")
    page.fill("#key", site.key)
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", collection)


def send(page: Any, query: str, button: str) -> None:
    page.select_option("#mode", "bm25")
    page.fill("#query", query)
    page.click(button)


def start(page: Any, site: Site) -> None:
    page.goto(site.url + "/")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    assert page.inner_text("#status") == "Paste an API key to start."


def keyed(page: Any, site: Site) -> None:
    with_key(page, site)
    assert page.locator("#collection option").count() == 3


def results(page: Any, site: Site) -> None:
    with_key(page, site)
    send(page, "portrait Basil", "#search-button")
    page.wait_for_selector("#hits:not([hidden])")
    assert page.locator("#hit-list mark").count() > 0


def error(page: Any, site: Site) -> None:
    with_key(page, site)
    send(page, "youth " * 400, "#search-button")  # over the service's 2,000 characters
    page.wait_for_selector("#query-error:not([hidden])")


def refused(page: Any, site: Site) -> None:
    with_key(page, site)
    page.fill("#k", "500")  # over the server's 100: refused in the page, next to k
    send(page, CONFIDENT, "#ask-button")
    page.wait_for_selector("#k-error:not([hidden])")


def answer(page: Any, site: Site) -> None:
    with_key(page, site)
    send(page, CONFIDENT, "#ask-button")
    page.wait_for_selector(ANSWERED, timeout=30_000)
    assert page.locator(f"{TURN} .source").count() > 0
    assert page.locator(f"{TURN} .caution").is_hidden()
    # a citation is reached and pressed by keyboard: it opens its source card
    page.focus("#query")
    page.keyboard.press("Tab")
    for _ in range(12):
        if page.evaluate("document.activeElement.classList.contains('cite')"):
            break
        page.keyboard.press("Tab")
    n = page.evaluate("document.activeElement.classList.contains('cite') && "
                      "document.activeElement.dataset.n")
    assert n, "no citation is reached by Tab"
    page.keyboard.press("Enter")
    assert page.get_attribute(".source.active", "data-n") == n


def cautious(page: Any, site: Site) -> None:
    with_key(page, site)
    send(page, CAUTIOUS, "#ask-button")
    page.wait_for_selector(f"{ANSWERED} .answer.cautious", timeout=30_000)
    assert page.locator(f"{TURN} .caution").is_visible()


def provenance(page: Any, site: Site) -> None:
    with_key(page, site)
    send(page, CONFIDENT, "#ask-button")
    page.wait_for_selector(ANSWERED, timeout=30_000)
    page.click(f"{TURN} .provenance summary")  # opened: its stages and passages checked too
    assert page.locator(f"{TURN} .passages li").count() > 0


def passage(page: Any, site: Site) -> None:
    answer(page, site)
    page.locator(f"{TURN} .source a.in-context").first.click()
    page.wait_for_selector("#passage:not([hidden])")
    assert page.locator("#passage-text mark.quoted").count() == 1


def dependencies(page: Any, site: Site) -> None:
    with_key(page, site, "code")
    send(page, "SearchByTracking", "#search-button")
    page.wait_for_selector("#hits:not([hidden])")
    page.locator("#hit-list button.deps").first.click()
    page.wait_for_selector("#graph:not([hidden])")
    assert page.locator("#tree li").count() > 1


def docs(page: Any, site: Site) -> None:
    page.goto(site.url + "/docs")
    page.wait_for_selector("#routes section")
    # docstrings read as prose: ``code`` as <code>, no backticks left
    assert "`" not in page.inner_text("#routes") and page.locator("#routes p code").count() > 5


VIEWS: dict[str, Callable[[Any, Site], None]] = {
    "start": start, "keyed": keyed, "results": results, "error": error, "refused": refused,
    "answer": answer, "cautious": cautious, "provenance": provenance, "passage": passage,
    "dependencies": dependencies, "docs": docs}


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
def test_every_view_has_no_serious_or_critical_axe_violation(
        page: Any, site: Site, tmp_path: Path, view: Callable[[Any, Site], None]) -> None:
    """Each view built once (at the phone's width, where more can go wrong), then looked at in
    every look: resized and its colour scheme switched, as a reader's page would be."""
    errors = console_errors(page)
    page.set_viewport_size({"width": LOOKS["phone"][0], "height": 900})
    view(page, site)
    looked_at(page, tmp_path, view.__name__)
    # no console error but, in the error view, Chromium's line for the refused request
    refused = ["Failed to load resource: the server responded with a status of 400"]
    assert [e.split(" (")[0] for e in errors] == (refused if view is error else []), errors


def test_axe_reports_what_a_bad_page_breaks(page: Any) -> None:
    """The check above can fail: on a page without a language, with a nameless button, an image
    without alt text and faint text, axe reports each as serious or critical."""
    page.set_content('<html><head><title>bad</title></head><body><main><button></button>'
                     '<img src="data:,"><p style="color:#bbb;background:#fff">faint</p>'
                     '</main></body></html>')
    found = {v["id"]: v for v in severe(axe_violations(page))}
    assert set(found) == {"html-has-lang", "button-name", "image-alt", "color-contrast"}, found
    assert found["button-name"]["targets"] == ["button"] and found["image-alt"]["impact"] == \
        "critical"
    assert found["color-contrast"]["targets"] == ["p"]
