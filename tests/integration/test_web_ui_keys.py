"""The web UI's key, errors and keyboard (issue 32), in headless Chromium against a real
`excerpt serve` process: the API key is kept for the tab only (sessionStorage, never
localStorage, an old localStorage copy removed on load), survives a reload in the same tab, is
not in a new tab and is gone after "Sign out", which clears the page; a pasted key loads the
collections at once, the field not left; k outside the server's bounds (500) is refused in the
page next to k, and the last answer's status ("Answered with caution.") goes with the next
request; Enter asks, Ctrl+Enter searches, `/` comes back to the question box; the focus is
visible. Screenshots at 1280 and 390 px are saved (and kept in $EXCERPT_UI_SCREENSHOTS)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.browser import CAUTIOUS, CONFIDENT, Site, serve_home, shots, watched

from excerpt.engine import Engine
from excerpt.limits import MAX_K

KEY = "excerpt-key"
ANSWERED = "#turns > .turn:last-child[data-state=answered]"  # the conversation's last turn


@pytest.fixture(scope="module")
def site(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
         free_port: Callable[[], int]) -> Iterator[Site]:
    """A book and the handbook; one reader's key."""
    home = tmp_path_factory.mktemp("web-ui-keys") / "home"
    engine = Engine(home)
    engine.ingest(shared_data("books", "pg174_dorian_gray.txt"), collection="books",
                  embedder="none")
    engine.ingest(Path(__file__).resolve().parents[2] / "examples" / "handbook",
                  collection="handbook", embedder="none")
    engine.close()
    yield from serve_home(home, free_port())


@pytest.fixture
def ui(page: Any, site: Site) -> Iterator[Any]:
    """The page, failing the test on a console error or a request that leaves the server."""
    with watched(page, site.url):
        yield page


def stored(page: Any) -> dict[str, dict[str, str]]:
    """Everything the page keeps: its sessionStorage and its localStorage."""
    return dict(page.evaluate("""() => Object.fromEntries(['sessionStorage', 'localStorage']
        .map((s) => [s, Object.fromEntries(Object.entries(window[s]))]))"""))


def collections(page: Any) -> list[str]:
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    return list(page.locator("#collection option").evaluate_all("os => os.map(o => o.value)"))


def paste(page: Any, text: str) -> None:
    """``text`` pasted into the focused field from the clipboard (Ctrl+V), as a person does."""
    page.evaluate("t => navigator.clipboard.writeText(t)", text)
    page.keyboard.press("Control+V")


def keyed(page: Any, site: Site) -> None:
    page.goto(site.url + "/")
    page.focus("#key")
    paste(page, site.key)
    assert collections(page) == ["books", "handbook"]
    page.select_option("#collection", "books")
    page.select_option("#mode", "bm25")


@pytest.fixture
def clipboard(page: Any, site: Site) -> Any:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    return page


# -- the key --------------------------------------------------------------------------------------

def test_the_key_is_kept_for_the_tab_only_and_sign_out_forgets_it(
        ui: Any, clipboard: Any, site: Site, tmp_path: Path) -> None:
    ui.goto(site.url + "/")
    ui.evaluate("k => localStorage.setItem('excerpt-key', k)", site.key)  # an older page's
    ui.reload()
    assert KEY not in stored(ui)["localStorage"]  # removed on load, and not used
    assert ui.input_value("#key") == "" and ui.locator("#sign-out").is_hidden()
    assert ui.inner_text("#status") == "Paste an API key to start."
    keyed(ui, site)
    assert stored(ui)["sessionStorage"] == {KEY: site.key}
    assert site.key not in str(stored(ui)["localStorage"])
    assert ui.locator("#sign-out").is_visible()
    ui.fill("#query", "youth")
    ui.click("#search-button")
    ui.wait_for_selector("#hits:not([hidden])")
    shots(ui, tmp_path, "signed-in")
    ui.reload()  # the same tab: the key stays, its collections load
    assert ui.input_value("#key") == site.key and collections(ui) == ["books", "handbook"]
    other = ui.context.new_page()  # another tab of the same browser: no key
    other.goto(site.url + "/")
    assert other.input_value("#key") == "" and stored(other)["sessionStorage"] == {}
    other.close()
    ui.fill("#query", "youth")
    ui.click("#search-button")
    ui.wait_for_selector("#hits:not([hidden])")
    ui.click("#sign-out")
    ui.wait_for_function("document.getElementById('status').textContent.includes('Signed out')")
    assert stored(ui)["sessionStorage"] == {} and site.key not in str(stored(ui))
    assert ui.input_value("#key") == "" and ui.input_value("#query") == ""
    assert collections(ui) == [] and ui.locator("#hits").is_hidden()
    assert ui.locator("#hit-list li").count() == 0 and ui.locator("#sign-out").is_hidden()
    assert ui.evaluate("document.activeElement.id") == "key"
    shots(ui, tmp_path, "signed-out")
    ui.reload()
    assert ui.input_value("#key") == "" and collections(ui) == []


def test_a_pasted_key_loads_the_collections_without_leaving_the_field(
        ui: Any, clipboard: Any, site: Site) -> None:
    ui.goto(site.url + "/")
    assert collections(ui) == []
    ui.evaluate("""() => { window.changes = 0;
        document.getElementById('key').addEventListener('change', () => window.changes++); }""")
    ui.focus("#key")
    paste(ui, site.key)
    assert collections(ui) == ["books", "handbook"]
    assert ui.evaluate("document.activeElement.id") == "key"  # never left: no change event
    assert ui.evaluate("window.changes") == 0 and ui.inner_text("#status") == ""
    # a key typed loads when the typing pauses, and only then: no request per keystroke
    seen: list[str] = []
    ui.on("request", lambda r: seen.append(r.url) if "/v1/snapshots" in r.url else None)
    ui.fill("#key", "")
    ui.type("#key", site.key, delay=20)
    assert collections(ui) == ["books", "handbook"] and len(seen) <= 2


# -- errors in place ------------------------------------------------------------------------------

def test_k_out_of_bounds_is_refused_next_to_k_and_the_old_status_goes(
        ui: Any, clipboard: Any, site: Site, tmp_path: Path) -> None:
    keyed(ui, site)
    assert ui.get_attribute("#k", "max") == str(MAX_K) and ui.get_attribute("#k", "min") == "1"
    ui.fill("#query", CAUTIOUS)
    ui.click("#ask-button")
    ui.wait_for_selector(f"{ANSWERED} .answer.cautious", timeout=30_000)
    assert ui.inner_text("#status") == "Answered with caution."
    asked: list[Any] = []
    ui.on("request", lambda r: asked.append(r) if "/v1/" in r.url else None)
    ui.fill("#k", "500")
    ui.click("#ask-button")
    error = ui.locator("#k-error")
    said = f"k must be between 1 and {MAX_K} (got 500)"
    assert error.is_visible() and error.inner_text() == said
    assert ui.get_attribute("#k", "aria-invalid") == "true"
    assert ui.evaluate("document.activeElement.id") == "k"
    assert ui.inner_text("#status") == "" and ui.locator("#conversation").is_hidden()
    assert asked == []  # refused in the page: nothing sent
    # next to k: on its row, just after it
    k, box = ui.locator("#k").bounding_box(), error.bounding_box()
    assert abs(box["y"] - k["y"]) < 40 and 0 <= box["x"] - (k["x"] + k["width"]) < 60
    shots(ui, tmp_path, "k-refused")
    ui.fill("#k", "3")
    ui.focus("#query")
    ui.keyboard.press("Enter")  # the next request clears the error
    ui.wait_for_selector("#turns > .turn:nth-child(2)[data-state=answered]", timeout=30_000)
    assert error.is_hidden() and ui.get_attribute("#k", "aria-invalid") is None
    assert [r.post_data_json["doc_limit"] for r in asked] == [3]  # k went with the ask
    ui.fill("#query", "")
    ui.click("#search-button")  # an empty question: said next to the box, no tooltip
    assert ui.locator("#query-error").is_visible() and ui.locator("#conversation").is_hidden()
    assert ui.evaluate("document.activeElement.id") == "query" and ui.inner_text("#status") == ""


# -- the keyboard ---------------------------------------------------------------------------------

def test_enter_asks_ctrl_enter_searches_and_slash_comes_back_to_the_box(
        ui: Any, clipboard: Any, site: Site, tmp_path: Path) -> None:
    keyed(ui, site)
    ui.focus("#query")
    ui.keyboard.type(CONFIDENT)
    ui.keyboard.press("Enter")
    ui.wait_for_selector(ANSWERED, timeout=30_000)
    assert ui.locator(f"{ANSWERED} .source").count() > 0 and ui.locator("#hits").is_hidden()
    ui.fill("#query", "portrait Basil")
    ui.keyboard.press("Control+Enter")
    ui.wait_for_selector("#hits:not([hidden])")
    assert ui.locator("#conversation").is_hidden() and ui.locator("#hit-list mark").count() > 0
    # `/` from anywhere but a text field: to the box, its text selected, no "/" typed
    ui.locator("#hit-list a.in-context").first.focus()
    ui.keyboard.press("/")
    assert ui.evaluate("document.activeElement.id") == "query"
    assert ui.input_value("#query") == "portrait Basil"
    assert ui.eval_on_selector("#query", "q => [q.selectionStart, q.selectionEnd]") == [0, 14]
    ui.focus("#k")
    ui.keyboard.press("/")  # typed into a field, it stays there
    assert ui.evaluate("document.activeElement.id") == "k"
    # the focus is visible: Tab from the box to its buttons, each outlined
    ui.focus("#query")
    for expected in ("ask-button", "search-button"):
        ui.keyboard.press("Tab")
        assert ui.evaluate("document.activeElement.id") == expected
        style = ui.evaluate("""() => { const s = getComputedStyle(document.activeElement);
            return [s.outlineStyle, parseFloat(s.outlineWidth)]; }""")
        assert style[0] != "none" and style[1] >= 2, style
    shots(ui, tmp_path, "keyboard-focus")
