"""The web UI's collection overview (issue 32), in headless Chromium against a real `excerpt
serve`: a key's collection shows its counts and last import in one line, its sources with their
snapshots (a retired one marked), and example questions from its headings, each of which asks
through the form; the overview is open on the start page, closes once a request goes out (the
answer is not pushed down), opens again for another collection and goes with the key.
Everything is what `GET /v1/collections/{c}/overview` tells the key: the board's source, its
headings and its metadata never reach the page of a key without the board's tag (in the
overview or in the filters offered), and a collection the key sees nothing of shows nothing.
Each view is looked at (tests/a11y.looked_at: screenshots, no sideways scroll, axe)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.a11y import looked_at
from tests.browser import console_errors, watched
from tests.http import call
from tests.ui_office import HIDDEN, Office, serve_office


@pytest.fixture(scope="module")
def office(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
           free_port: Callable[[], int]) -> Iterator[Office]:
    yield from serve_office(tmp_path_factory.mktemp("web-ui-overview"), shared_data,
                            free_port())


@pytest.fixture
def ui(page: Any, office: Office) -> Iterator[Any]:
    """The page, failing the test on a console error or a request that leaves the server."""
    with watched(page, office.url):
        yield page


def opened(page: Any, office: Office, collection: str, who: str = "ana") -> None:
    """The page with ``who``'s key, ``collection`` picked and its overview shown."""
    page.goto(office.url + "/")
    page.fill("#key", office.keys[who])
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", collection)
    shown(page, collection)


def shown(page: Any, collection: str) -> None:
    page.wait_for_function("""c => !document.getElementById('overview').hidden &&
        document.getElementById('overview-name').textContent === c""", arg=collection)


def overview(office: Office, collection: str, who: str = "ana") -> dict[str, Any]:
    status, got = call(f"{office.url}/v1/collections/{collection}/overview", office.keys[who])
    assert status == 200, got
    return dict(got)


def is_open(page: Any) -> bool:
    return bool(page.eval_on_selector("#overview-box", "d => d.open"))


def asked(office: Office, body: dict[str, Any], who: str = "ana") -> dict[str, Any]:
    """The answer to the body the page sent to /v1/ask/stream, asked again of /v1/ask (the
    page stops reading the stream at its answer, so Chromium may not keep the body)."""
    status, answer = call(f"{office.url}/v1/ask", office.keys[who], body)
    assert status == 200, answer
    return dict(answer)


def test_the_overview_shows_the_counts_sources_and_example_questions(
        ui: Any, office: Office, tmp_path: Path) -> None:
    opened(ui, office, "books")
    told = overview(office, "books")
    c = told["counts"]
    assert ui.inner_text("#overview-name") == "books" and is_open(ui)
    assert ui.inner_text("#overview-counts") == (
        f"{c['documents']} documents · {c['nodes']:,} passages · 1 source · 1 snapshot · "
        f"last import {told['last_import'][:16].replace('T', ' ')} UTC")
    assert c["documents"] == 2 and c["nodes"] > 2000
    questions = ui.locator("#example-list button").all_inner_texts()
    assert questions == [e["question"] for e in told["examples"]] and len(questions) == 3
    [source] = ui.locator("#overview-sources li").all_inner_texts()
    [snapshot] = told["snapshots"]
    assert source.startswith("books\n") and f"{c['nodes']:,} passages" in source
    assert f"1 snapshot: {snapshot['snapshot_id']}" in source and "retired" not in source
    looked_at(ui, tmp_path, "overview-books")
    # the handbook: another collection, its own overview (Korean page included)
    ui.select_option("#collection", "handbook")
    shown(ui, "handbook")
    assert ui.inner_text("#overview-counts").startswith("4 documents · 6 passages")
    assert ui.locator("#example-list button").all_inner_texts() == [
        e["question"] for e in overview(office, "handbook")["examples"]]


def test_an_example_question_asks_through_the_form_and_the_overview_closes(
        ui: Any, office: Office, tmp_path: Path) -> None:
    opened(ui, office, "handbook")
    question = ui.locator("#example-list button").first.inner_text()
    with ui.expect_response("**/v1/ask/stream") as sent:
        ui.locator("#example-list button").first.click()
    body = sent.value.request.post_data_json
    assert body["question"] == question and body["collection"] == "handbook"
    assert "where" not in body  # no filter chosen
    assert sent.value.status == 200
    answer = asked(office, body)
    assert answer["quotes"] and not answer["cautious"]  # made from a heading: answerable
    ui.wait_for_function("document.getElementById('status').textContent.startsWith('Answered')")
    assert ui.input_value("#query") == question
    assert not is_open(ui)  # closed to its summary line: the answer is what is read now
    box = ui.locator("#overview-box").bounding_box()
    assert box is not None and box["height"] < 80
    looked_at(ui, tmp_path, "overview-closed")
    ui.click("#overview-box summary")  # opened again by its summary
    assert is_open(ui)
    ui.select_option("#collection", "books")  # another collection: its overview, open
    shown(ui, "books")
    ui.fill("#query", "youth")
    ui.click("#search-button")
    ui.wait_for_selector("#hits:not([hidden])")
    assert not is_open(ui)


def test_a_refused_request_leaves_the_overview_open_and_sign_out_takes_it(
        ui: Any, office: Office) -> None:
    opened(ui, office, "books")
    ui.click("#ask-button")  # no question: refused in the page, nothing sent
    assert ui.locator("#query-error").is_visible() and is_open(ui)
    ui.click("#sign-out")
    ui.wait_for_function("document.getElementById('status').textContent.includes('Signed out')")
    assert ui.locator("#overview").is_hidden() and ui.locator("#filters").is_hidden()


def test_a_retired_source_is_marked_and_the_boards_source_is_never_shown(
        ui: Any, office: Office, tmp_path: Path) -> None:
    opened(ui, office, "office")
    told = overview(office, "office")
    assert {s["source"] for s in told["sources"]} == {"old", "public"}
    sources = {li.get_attribute("data-source"): li
               for li in ui.locator("#overview-sources li").all()}
    assert set(sources) == {"old", "public"}
    old = sources["old"]
    assert old.locator(".label.retired").inner_text() == "retired"
    assert "not searched" in old.inner_text() and "(retired)" in old.inner_text()
    assert sources["public"].locator(".retired").count() == 0
    assert ui.inner_text("#overview-counts").startswith("1 document · ")  # old is not read
    looked_at(ui, tmp_path, "overview-retired")
    page_text = seen(ui)
    for word in HIDDEN:
        assert word not in page_text, word
    # the same page for a key with the board's tag shows it: the check above can fail
    opened(ui, office, "office", who="ben")
    assert "Northwind" in seen(ui) and "board.md" in seen(ui)


def seen(page: Any) -> str:
    """Everything the page holds in its overview and filters: its text, and every option of
    the filter pickers for each key offered (datalists are not text)."""
    values = []
    for key in page.locator("#filter-key option").evaluate_all("os => os.map(o => o.value)"):
        page.select_option("#filter-key", key)
        values += page.locator("#filter-values option").evaluate_all(
            "os => os.map(o => o.value + ' ' + o.label)")
    return "\n".join([page.inner_text("#overview"), page.content(), *values])


def test_a_collection_the_key_sees_nothing_of_shows_nothing(page: Any, office: Office) -> None:
    """vault holds only the board's source: ana's picker does not list it, a saved choice of it
    is not used, and its overview asked for by name (the page's own module) shows nothing."""
    ui = page
    errors = console_errors(ui)
    ui.goto(office.url + "/")
    ui.evaluate("() => localStorage.setItem('excerpt-collection', 'vault')")
    opened(ui, office, "books")
    names = ui.locator("#collection option").evaluate_all("os => os.map(o => o.value)")
    assert names == ["books", "handbook", "office"]
    with ui.expect_response("**/v1/collections/vault/overview") as refused:
        ui.evaluate("() => import('/static/overview.js').then((m) => m.showOverview('vault'))")
    assert refused.value.status == 404
    ui.wait_for_function("document.getElementById('overview').hidden")
    assert ui.locator("#overview-error").is_hidden() and ui.locator("#filters").is_hidden()
    assert "vault" not in ui.inner_text("body") and "Northwind" not in ui.content()
    opened(ui, office, "vault", who="ben")  # ben's key sees it
    assert "Northwind" in ui.inner_text("#overview")
    assert [e.split(" (")[0] for e in errors] == [  # Chromium's line for the 404, only
        "Failed to load resource: the server responded with a status of 404"]


def test_an_overview_that_comes_after_a_request_went_out_comes_closed(
        ui: Any, office: Office) -> None:
    """On a slow server the overview can arrive after a search was sent: it then shows as its
    one summary line, not open above the results (which it would push down)."""
    held: list[Any] = []

    def hold(route: Any) -> None:  # answered only when let go
        held.append(route)

    ui.route("**/v1/collections/*/overview", hold)
    ui.goto(office.url + "/")
    ui.fill("#key", office.keys["ana"])
    ui.dispatch_event("#key", "change")
    ui.wait_for_selector("#collection[aria-busy=false]", state="attached")
    ui.select_option("#collection", "books")
    ui.fill("#query", "Sibyl")
    ui.click("#search-button")
    ui.wait_for_selector("#hits:not([hidden])")
    assert ui.locator("#overview").is_hidden() and held
    for route in held:
        route.continue_()
    shown(ui, "books")
    assert ui.get_attribute("#overview-box", "open") is None  # closed: its summary line only
    ui.click("#overview-box > summary")  # and it opens on demand
    assert ui.locator("#example-list button").first.is_visible()
