"""The web UI end to end in headless Chromium (Debian's package, driven by Playwright through
``executable_path``): a question typed gets a cited answer whose [n] citations focus their
source cards, search shows highlighted matches and security labels per key, code hits open their
dependency tree, and screenshots are taken and checked."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app

PUBLIC = "The cafeteria serves lunch from noon until two in the afternoon on weekdays."
SECRET = "The board approved the lunch budget cut for the cafeteria as part of the merger."


@pytest.fixture(scope="module")
def site(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
         serving: Callable[[Any], AbstractContextManager[str]]
         ) -> Iterator[tuple[str, dict[str, str]]]:
    root = tmp_path_factory.mktemp("web-ui")
    home = root / "home"
    engine = Engine(home)
    books_and_code(engine, shared_data)
    for name, text, tags in (("public", PUBLIC, []), ("secret", SECRET, ["board"])):
        (root / f"{name}.txt").write_text(text, "utf-8")
        engine.ingest(root / f"{name}.txt", collection="notes", embedder="none", source=name,
                      acl_tags=tags)
    keys = {}
    for args in (["ana"], ["ben", "--acl-tag", "board"]):
        out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", *args, "--json"])
        assert out.exit_code == 0, out.output
        keys[args[0]] = json.loads(out.output)["key"]
    with serving(create_app(engine, KeyRing.load(home / "keys.yaml"))) as url:
        yield url, keys


def test_the_page_loads_with_no_console_error(site: tuple[str, dict[str, str]],
                                             page: Any) -> None:
    url, _ = site
    errors = console_errors(page)
    page.goto(url + "/")
    page.wait_for_selector("#query")
    assert errors == []


def submit(page: Any, url: str, key: str, query: str, collection: str, button: str) -> None:
    page.goto(url + "/")
    page.fill("#key", key)
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", collection)
    page.select_option("#mode", "bm25")
    page.fill("#query", query)
    page.click(button)


from tests.browser import books_and_code, console_errors, png_size  # noqa: E402

TURN = "#turns > .turn:last-child"  # the conversation's last turn: the question just asked


def test_a_question_gets_a_cited_answer_and_citations_open_their_source_cards(
        site: tuple[str, dict[str, str]], page: Any, tmp_path: Path) -> None:
    url, keys = site
    submit(page, url, keys["ana"], "What does Lord Henry say about youth and beauty?", "books",
           "#ask-button")
    page.wait_for_selector(f"{TURN}[data-state=answered]", timeout=30_000)
    answer = page.inner_text(f"{TURN} .answer")
    cites = page.locator(f"{TURN} .answer .cite")
    assert cites.count() >= 1 and "[1]" in answer
    quotes = page.locator(f"{TURN} .sources .source")
    assert quotes.count() >= 1 and "pg174" in page.inner_text(f"{TURN} .sources")
    n = cites.nth(cites.count() - 1).get_attribute("data-n")
    cites.nth(cites.count() - 1).click()
    focused = page.locator(".source.active")  # its source card
    assert focused.count() == 1 and focused.get_attribute("data-n") == n
    stages = page.locator(f"{TURN} .stages li").all_text_contents()  # in the closed disclosure
    assert stages[:3] == ["question", "grounding", "exploration"] and stages[-1] == "synthesis"
    assert page.locator(f"{TURN} .passages li").count() >= 1
    shot = page.locator(TURN).screenshot(path=str(tmp_path / "answer.png"))
    box = page.locator(TURN).bounding_box()
    width, height = png_size(shot)
    assert abs(width - box["width"]) < 2 and abs(height - box["height"]) < 2
    assert height > 100  # an answer and its quotes, not an empty panel


def test_search_highlights_matches_and_shows_only_what_the_key_may_see(
        site: tuple[str, dict[str, str]], page: Any) -> None:
    url, keys = site
    submit(page, url, keys["ana"], "lunch budget", "notes", "#search-button")
    page.wait_for_selector("#hits:not([hidden])")
    assert page.locator("#hit-list > li").count() == 1
    assert "merger" not in page.inner_text("#hits")
    assert page.locator("#hit-list mark").first.inner_text().lower() == "lunch"
    submit(page, url, keys["ben"], "lunch budget", "notes", "#search-button")
    page.wait_for_selector("#hits:not([hidden])")
    assert page.locator("#hit-list > li").count() == 2
    assert page.locator("#hit-list .label").all_inner_texts() == ["acl:board"]
    full = page.screenshot(full_page=True)
    assert png_size(full)[0] == 1100


def test_a_code_hit_opens_its_dependency_tree(site: tuple[str, dict[str, str]],
                                              page: Any) -> None:
    url, keys = site
    submit(page, url, keys["ana"], "SearchByTracking shipments", "code", "#search-button")
    page.wait_for_selector("#hits:not([hidden])")
    first = page.locator("#hit-list > li").first
    assert "SearchByTracking" in first.inner_text()
    first.locator("button.deps").click()
    page.wait_for_selector("#graph:not([hidden])")
    root = page.locator("#tree > li.node")
    assert root.get_attribute("data-id") == "C0025"
    child = root.locator("ul > li.node").first
    assert child.get_attribute("data-id") == "C0026"
    assert child.inner_text().startswith("Calls → C0026")


def test_a_wrong_key_is_told_so(site: tuple[str, dict[str, str]], page: Any) -> None:
    url, _ = site
    page.goto(url + "/")
    page.fill("#key", "exk_not_a_key")
    page.dispatch_event("#key", "change")
    # said next to the key (issue 32: every error in place), not in the status line
    page.wait_for_function("document.getElementById('key-error').textContent.includes('API key')")
    assert page.locator("#collection option").count() == 0
    assert page.get_attribute("#key", "aria-invalid") == "true"
    page.fill("#query", "lunch")
    page.click("#search-button")
    page.wait_for_function("document.getElementById('key-error').textContent.includes('API key')")
    assert page.locator("#hits").is_hidden() and page.inner_text("#status") == ""
