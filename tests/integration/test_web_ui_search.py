"""The web UI's search view and its filters (issue 32), in headless Chromium against a real
`excerpt serve`: a search says how many results it found, where and how ("30 results in books
· bm25"); the collection's metadata keys (from its overview: only what the key may see) are
offered as filters with their common values; a chosen filter is a chip, narrows the search
(each hit holds the value, the count drops), goes with an ask too (`where` in the body, the
quotes from the filtered passages), and removing its chip restores the search; a value the
server refuses is said next to the filters in the API's words; the filters go when the
collection changes; a filter naming the board's hidden document finds what a made-up value
finds: nothing. Each view is looked at (tests/a11y.looked_at)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from tests.a11y import looked_at
from tests.browser import console_errors
from tests.integration.test_web_ui_overview import asked, opened
from tests.ui_office import Office, serve_office

REFUSED = "Failed to load resource: the server responded with a status of 400"


@pytest.fixture(scope="module")
def office(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
           free_port: Callable[[], int]) -> Iterator[Office]:
    yield from serve_office(tmp_path_factory.mktemp("web-ui-search"), shared_data, free_port())


@pytest.fixture
def ui(page: Any, office: Office) -> Iterator[Any]:
    """The page, failing the test on a console error (but Chromium's line for a request the
    server refused, which the test says it expects) or a request that leaves the server."""
    errors = console_errors(page)
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.refusals = 0  # the 400s a test expects
    yield page
    assert [e.split(" (")[0] for e in errors] == [REFUSED] * page.refusals, errors
    assert all(u.startswith((office.url + "/", "data:")) for u in requests), requests


def searched(page: Any, query: str | None = None, k: int = 30,
             action: Callable[[], None] | None = None) -> dict[str, Any]:
    """Runs a search: ``query`` typed and Search pressed, or ``action`` (a filter added or
    removed: the search on show runs again). Returns the URL's parameters, the status and the
    JSON of its response once the page has shown it."""
    if query is not None:
        page.select_option("#mode", "bm25")
        page.fill("#k", str(k))
        page.fill("#query", query)
    with page.expect_response(lambda r: "/v1/search?" in r.url) as sent:
        if action is not None:
            action()
        else:
            page.click("#search-button")
    response = sent.value
    page.wait_for_function("!document.getElementById('status').textContent.startsWith('Search')")
    params = parse_qs(urlparse(response.url).query)
    return {"params": params, "status": response.status,
            "json": response.json() if response.ok else None}


def add_filter(page: Any, key: str, value: str, enter: bool = False) -> None:
    page.select_option("#filter-key", key)
    page.fill("#filter-value", value)
    if enter:
        page.press("#filter-value", "Enter")
    else:
        page.click("#filter-add")


def filtered(page: Any, key: str, value: str, enter: bool = False) -> dict[str, Any]:
    """A filter added while a search is on show: the search it runs again (:func:`searched`)."""
    return searched(page, action=lambda: add_filter(page, key, value, enter))


def unfiltered(page: Any, chip: int = -1) -> dict[str, Any]:
    """The ``chip``-th filter's chip removed: the search it runs again."""
    return searched(page, action=lambda: page.locator("#filter-chips button").nth(chip).click())


def chips(page: Any) -> list[str]:
    return list(page.locator("#filter-chips li span").all_inner_texts())


def status(page: Any) -> str:
    return str(page.inner_text("#status"))


def test_the_filters_offered_are_the_collections_metadata(ui: Any, office: Office) -> None:
    opened(ui, office, "books")
    keys = ui.locator("#filter-key option").evaluate_all("os => os.map(o => o.value)")
    # language: every passage is English, a filter on it would narrow nothing
    assert keys == ["", "author", "division", "part", "book", "chapter"]
    ui.select_option("#filter-key", "author")
    options = ui.locator("#filter-values option").evaluate_all(
        "os => os.map(o => [o.value, o.label])")
    assert [value for value, _ in options] == ["Homer", "Oscar Wilde"]
    assert all(label.endswith(" passages") for _, label in options)
    assert ui.get_attribute("#filter-value", "placeholder") == "e.g. Homer"
    ui.select_option("#collection", "handbook")  # another collection: its own keys
    ui.wait_for_function("document.getElementById('overview-name').textContent === 'handbook'")
    keys = ui.locator("#filter-key option").evaluate_all("os => os.map(o => o.value)")
    assert keys == ["", "language", "path", "section"]  # format: one value, every passage


def test_a_filter_narrows_the_search_and_its_chip_restores_it(
        ui: Any, office: Office, tmp_path: Path) -> None:
    opened(ui, office, "books")
    plain = searched(ui, "Sibyl")
    assert "where" not in plain["params"]
    assert status(ui) == "30 results in books · bm25"
    narrowed = filtered(ui, "chapter", "7")  # the search on show runs again, filtered
    assert narrowed["params"]["where"] == ["chapter=7"]
    hits = narrowed["json"]["hits"]
    assert 0 < len(hits) < 30 and all(h["metadata"]["chapter"] == 7 for h in hits)
    assert status(ui) == f"{len(hits)} results in books · bm25 · chapter = 7"
    assert chips(ui) == ["chapter: 7"] and ui.locator("#hit-list li").count() == len(hits)
    assert ui.locator("#hit-list .place").all_inner_texts() == [
        "The Picture of Dorian Gray · chapter 7"] * len(hits)
    looked_at(ui, tmp_path, "search-filtered")
    # a second filter, added with Enter (not an ask), on a text value
    both = filtered(ui, "author", "Oscar Wilde", enter=True)
    assert sorted(both["params"]["where"]) == ["author=Oscar Wilde", "chapter=7"]
    assert len(both["json"]["hits"]) == len(hits)
    assert chips(ui) == ["chapter: 7", "author: Oscar Wilde"]
    assert status(ui).endswith("· chapter = 7 · author = Oscar Wilde")
    # the same key again replaces its filter (a where holds one value per key)
    assert filtered(ui, "chapter", "8")["params"]["where"] == ["author=Oscar Wilde", "chapter=8"]
    assert chips(ui) == ["author: Oscar Wilde", "chapter: 8"]
    assert unfiltered(ui)["params"]["where"] == ["author=Oscar Wilde"]
    assert "where" not in unfiltered(ui)["params"]  # each chip removed runs it again
    assert chips(ui) == [] and ui.locator("#filter-chips").is_hidden()
    assert status(ui) == "30 results in books · bm25"
    assert ui.evaluate("document.activeElement.id") == "filter-key"  # the focus kept nearby


def test_a_filter_goes_with_an_ask(ui: Any, office: Office, tmp_path: Path) -> None:
    opened(ui, office, "books")
    add_filter(ui, "author", "Homer")
    ui.fill("#query", "What does Lord Henry say about youth and beauty?")
    with ui.expect_response("**/v1/ask/stream") as sent:
        ui.click("#ask-button")
    body = sent.value.request.post_data_json
    assert body["where"] == ["author=Homer"] and body["collection"] == "books"
    answer = asked(office, body)
    read = {d["id"].split(":")[0] for d in answer["documents"]}
    assert read == {"pg6130"}  # the Iliad only: Lord Henry is not there
    ui.wait_for_function("document.getElementById('status').textContent.startsWith('Answered')")
    looked_at(ui, tmp_path, "ask-filtered")
    # without the filter the same question is answered from Dorian Gray
    ui.locator("#filter-chips button").click()  # an answer is not asked again on its own
    assert chips(ui) == []
    with ui.expect_response("**/v1/ask/stream") as sent:
        ui.click("#ask-button")
    body = sent.value.request.post_data_json
    assert "where" not in body
    assert {q["id"].split(":")[0] for q in asked(office, body)["quotes"]} == {"pg174"}


def test_a_refused_value_is_said_next_to_the_filters(
        ui: Any, office: Office, tmp_path: Path) -> None:
    opened(ui, office, "books")
    ui.click("#filter-add")  # nothing chosen: refused in the page, nothing sent
    assert ui.inner_text("#filter-value-error") == "Choose what to filter by first."
    assert ui.evaluate("document.activeElement.id") == "filter-key"
    ui.select_option("#filter-key", "chapter")
    ui.click("#filter-add")
    assert ui.inner_text("#filter-value-error") == "Type or pick a value of chapter."
    assert ui.get_attribute("#filter-value", "aria-invalid") == "true"
    searched(ui, "Sibyl")
    assert ui.locator("#filter-value-error").is_hidden()  # the next request cleared it
    ui.refusals = 2
    refused = filtered(ui, "chapter", "null")  # a value check_where refuses: not a scalar
    assert refused["status"] == 400 and refused["params"]["where"] == ["chapter=null"]
    said = ui.inner_text("#filter-value-error")
    assert said.startswith("where chapter=null: a metadata filter takes a string, a number")
    assert ui.locator("#hits").is_hidden() and status(ui) == ""  # said there, not twice
    looked_at(ui, tmp_path, "filter-refused")
    ui.fill("#query", "a question")  # an ask is refused in the same place
    with ui.expect_response("**/v1/ask/stream") as sent:
        ui.click("#ask-button")
    assert sent.value.status == 400
    ui.wait_for_function("!document.getElementById('filter-value-error').hidden")
    assert ui.inner_text("#filter-value-error") == said
    assert searched(ui, "Sibyl")["status"] == 400  # the filter stands until removed
    ui.refusals = 3
    assert unfiltered(ui)["status"] == 200
    assert ui.locator("#filter-value-error").is_hidden() and status(ui).startswith("30 results")


def test_filters_go_with_the_collection_and_find_nothing_hidden(
        ui: Any, office: Office) -> None:
    opened(ui, office, "books")
    add_filter(ui, "author", "Homer")
    assert chips(ui) == ["author: Homer"]
    ui.select_option("#collection", "office")
    ui.wait_for_function("document.getElementById('overview-name').textContent === 'office'")
    assert chips(ui) == []  # another collection's filters would name keys it may not have
    assert "where" not in searched(ui, "Saturdays")["params"]
    assert status(ui) == "1 result in office · bm25"
    # the board's heading as a section: what a made-up section finds, nothing
    ui.select_option("#filter-key", "section")
    offered = ui.locator("#filter-values option").evaluate_all("os => os.map(o => o.value)")
    assert sorted(offered) == ["Cafeteria hours", "Cafeteria hours > Weekend brunch"]
    for section in ("Northwind merger", "Nowhere at all"):
        got = filtered(ui, "section", section)
        assert got["json"]["hits"] == []
        assert status(ui) == (f"No results in office · bm25 · section = {section}: nothing "
                              "this key may see matches.")
