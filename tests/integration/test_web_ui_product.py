"""The web UI as a product (issue 18 item 4), in headless Chromium against a real `excerpt
serve` process on a free loopback port: the collection picker lists the key's collections and
nothing else; every request clears what the last one showed, and an error is shown plainly;
an ask streams its stages (POST /v1/ask/stream) before its answer; a cautious answer says so;
quotes name their book and chapter, regulation and article, or source file, and link to the
passage in context; search snippets are cut at word boundaries around the matched words and
mark whole words only; k and the snapshot picker narrow a search. Each test takes screenshots
and checks them, and fails on a console error or a request to anywhere but the server."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from tests.browser import (
    CAUTIOUS,
    CONFIDENT,
    books_and_code,
    console_errors,
    png_size,
    shots,
)
from tests.http import add_keys, call, excerpt_serve

from excerpt.engine import Engine

MENU_OLD = "The cafeteria serves lunch from noon until two in the afternoon on weekdays."
MENU_NEW = "The cafeteria serves lunch from eleven until three, and on Saturdays too."
HOURS = "The library opens at nine; the cafeteria next door closes at four."
SECRET = "The board approved the lunch budget cut for the cafeteria as part of the merger."
TOC = ("규   정   집\n\n차   례\n\n제1편  일반\n\n\t\t교원인사규정\t1-0-1\n"
       "\t\t강사료지급규정\t1-0-2\n\t\t기타규정\t1-0-3\n\n제1편\n\n")
RULES = """교원인사규정
제1조 (목적) 이 규정은 교원의 강의료 지급 기준을 정한다.
제2조 (지급) 강의료는 매월 말일에 지급하며, 강의료 지급 기준은 「강사료지급규정」 제2조에 따른다.
강사료지급규정
제1조 (목적) 이 규정은 강사료에 관한 사항을 정한다.
제2조 (지급) 강사료는 시간당 단가로 매월 지급한다.
기타규정
제1조 (목적) 이 규정은 기타 사항을 정한다.
"""
REFUSED = "Failed to load resource: the server responded with a status of 4"
WORD = re.compile(r"\w", re.UNICODE)


class Site:
    """The served home: its URL, the keys (ana: public only; ben: also the board's tag) and
    the snapshot ids and node ids the tests look for."""

    def __init__(self, url: str, keys: dict[str, str], snapshots: dict[str, str],
                 secret_id: str) -> None:
        self.url, self.keys, self.snapshots, self.secret_id = url, keys, snapshots, secret_id


@pytest.fixture(scope="module")
def site(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
         free_port: Callable[[], int]) -> Iterator[Site]:
    root = tmp_path_factory.mktemp("web-ui-product")
    home = root / "home"
    engine = Engine(home)
    books_and_code(engine, shared_data, handbook=True)
    (root / "rules.txt").write_text(TOC + RULES, "utf-8")
    engine.ingest(root / "rules.txt", collection="rules", embedder="none")
    snapshots = {}
    for name, text in (("menu-v1", MENU_OLD), ("menu-v2", MENU_NEW)):
        (root / "menu.txt").write_text(text, "utf-8")
        snapshots[name] = engine.ingest(root / "menu.txt", collection="notes", embedder="none",
                                        source="menu", snapshot_name=name).snapshot_id or ""
    (root / "hours.txt").write_text(HOURS, "utf-8")
    engine.ingest(root / "hours.txt", collection="notes", embedder="none", source="hours")
    (root / "secret.txt").write_text(SECRET, "utf-8")
    for collection in ("notes", "board"):
        engine.ingest(root / "secret.txt", collection=collection, embedder="none",
                      source="secret", acl_tags=["board"])
    engine.close()
    keys = add_keys(home, [("ana",), ("ben", "--acl-tag", "board")], revoke=())
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        status, found = call(f"{url}/v1/search?q=merger&collection=board&mode=bm25",
                             keys["ben"])
        assert status == 200 and len(found["hits"]) == 1, found
        # the first Korean query loads the analyzer's model: here, not inside a test
        assert call(f"{url}/v1/search?q=%EA%B0%95%EC%9D%98%EB%A3%8C&collection=rules"
                    "&mode=bm25", keys["ana"])[0] == 200
        yield Site(url, keys, snapshots, found["hits"][0]["id"])


@pytest.fixture
def ui(page: Any, site: Site) -> Iterator[Any]:
    """The page, failing the test on a console error or on a request that leaves the
    server (the page's assets, API calls and links all stay on it)."""
    errors = console_errors(page)
    requests: list[str] = []
    refused: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)
    yield page
    # Chromium logs each refused request; only API calls a test makes fail may be refused
    unexpected = [e for e in errors if not e.startswith(REFUSED)]
    assert unexpected == [] and len(errors) == len(refused)
    assert all(u.startswith(site.url + "/v1/") for u in refused), refused
    assert requests and all(u.startswith((site.url + "/", "data:")) for u in requests), requests


def open_as(page: Any, site: Site, who: str, collection: str | None = None) -> None:
    page.goto(site.url + "/")
    page.fill("#key", site.keys[who])
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    if collection:
        page.select_option("#collection", collection)


def run(page: Any, query: str, button: str, mode: str = "bm25") -> None:
    page.select_option("#mode", mode)
    page.fill("#query", query)
    page.click(button)


TURN = "#turns > .turn:last-child"  # the conversation's last turn: the question just asked


def ask(page: Any, question: str) -> None:
    """Asks ``question`` and waits for its answer: a new turn below the others."""
    turns = page.locator("#turns > .turn").count()
    run(page, question, "#ask-button")
    page.wait_for_selector(f"#turns > .turn:nth-child({turns + 1})[data-state=answered]",
                           timeout=30_000)


def search(page: Any, query: str) -> None:
    run(page, query, "#search-button")
    page.wait_for_selector("#hits:not([hidden])")


def shot_of(page: Any, selector: str, path: Path) -> tuple[int, int]:
    """A screenshot of ``selector``, checked to be a PNG of the element's size."""
    data = page.locator(selector).screenshot(path=str(path))
    box = page.locator(selector).bounding_box()
    width, height = png_size(data)
    assert abs(width - box["width"]) < 2 and abs(height - box["height"]) < 2
    return width, height


def options(page: Any, selector: str) -> list[str]:
    return list(page.locator(f"{selector} option").evaluate_all("os => os.map(o => o.value)"))


# -- the collection picker, k and snapshots -------------------------------------------------------

def test_the_picker_lists_the_collections_the_key_may_read_and_no_other(
        ui: Any, site: Site, tmp_path: Path) -> None:
    open_as(ui, site, "ana")
    assert options(ui, "#collection") == ["books", "code", "handbook", "notes", "rules"]
    open_as(ui, site, "ben")
    assert options(ui, "#collection") == ["board", "books", "code", "handbook", "notes", "rules"]
    ui.select_option("#collection", "notes")
    values = options(ui, "#snapshot")
    assert values[0] == "" and len(values) == 5  # latest, menu-v1, menu-v2, hours, secret
    assert f"snapshot:{site.snapshots['menu-v1']}" in values
    labels = ui.locator("#snapshot option").all_inner_texts()
    assert any(t.startswith("menu-v1 · menu · ") for t in labels), labels
    width, height = shot_of(ui, "#search-form", tmp_path / "form.png")
    assert width > 600 and height > 60  # the query row and the controls row


def test_the_picker_remembers_the_collection_and_a_new_key_refills_it(
        ui: Any, site: Site) -> None:
    open_as(ui, site, "ben", "board")
    ui.reload()  # the key and the collection are remembered
    ui.wait_for_selector("#collection[aria-busy=false]", state="attached")
    assert ui.input_value("#collection") == "board"
    ui.fill("#key", site.keys["ana"])
    ui.dispatch_event("#key", "change")
    ui.wait_for_selector("#collection[aria-busy=false]", state="attached")
    assert "board" not in options(ui, "#collection")
    assert ui.input_value("#collection") == "books"  # board is not ana's: the first is chosen


def test_k_and_the_snapshot_picker_narrow_a_search(ui: Any, site: Site, tmp_path: Path) -> None:
    open_as(ui, site, "ana", "notes")
    search(ui, "cafeteria lunch")
    texts = ui.locator("#hit-list .snippet").all_inner_texts()
    assert len(texts) == 2 and any("eleven" in t for t in texts)
    assert not any("noon" in t for t in texts)  # the latest menu only
    ui.fill("#k", "1")
    search(ui, "cafeteria lunch")
    assert ui.locator("#hit-list > li").count() == 1
    ui.fill("#k", "")
    ui.select_option("#snapshot", f"snapshot:{site.snapshots['menu-v1']}")
    search(ui, "cafeteria lunch")
    assert ui.locator("#hit-list .snippet").all_inner_texts() == [MENU_OLD]
    width, height = shot_of(ui, "#hits", tmp_path / "old-menu.png")
    assert height > 60 and width > 600


# -- clearing and errors --------------------------------------------------------------------------

def test_each_request_clears_the_last_and_an_error_is_shown_plainly(
        ui: Any, site: Site, tmp_path: Path) -> None:
    open_as(ui, site, "ana", "books")
    ask(ui, CONFIDENT)
    ui.locator(f"{TURN} .source a.in-context").first.click()
    ui.wait_for_selector("#passage:not([hidden])")
    search(ui, "youth beauty")  # the conversation is put away (kept for the next ask)
    assert ui.locator("#conversation").is_hidden()
    assert not ui.locator(f"{TURN} .source").first.is_visible()
    assert ui.locator("#passage").is_hidden() and "#passage" not in ui.url
    run(ui, CONFIDENT, "#ask-button")  # a search sent before the answer came: the ask is
    search(ui, "Basil")                # dropped, and its answer never shows up
    ui.wait_for_timeout(1000)
    assert ui.locator("#conversation").is_hidden()
    # no turn left waiting for it (one answered before the search was sent is the
    # conversation's: a fast server may answer in the time the search takes to be typed)
    assert ui.locator("#turns > .turn:not([data-state=answered])").count() == 0
    assert ui.locator("#turns > .turn").count() in (1, 2)
    assert "Basil" in ui.inner_text("#hit-list")
    # over the service's 2,000 characters: the service names the field (q), so the page says
    # it next to the question box
    run(ui, "youth " * 400, "#search-button")
    ui.wait_for_selector("#query-error:not([hidden])")
    assert "at most 2000 characters" in ui.inner_text("#query-error")
    assert ui.get_attribute("#query", "aria-invalid") == "true"
    assert ui.locator("#hits").is_hidden() and ui.locator("#hit-list li").count() == 0
    color = ui.eval_on_selector("#query-error", "e => getComputedStyle(e).color")
    assert color == "rgb(164, 0, 0)"
    shot_of(ui, "#query-error", tmp_path / "error.png")
    ask(ui, CONFIDENT)  # an answer clears the error
    assert ui.inner_text("#status") == "Answered." and ui.locator("#query-error").is_hidden()
    run(ui, "youth " * 400, "#ask-button")  # the ask's field is `question`: the same place
    ui.wait_for_selector("#query-error:not([hidden])")
    assert ui.locator("#conversation").is_hidden()
    assert ui.locator("#turns > .turn:not([data-state=answered])").count() == 0


def test_a_hidden_passage_cannot_be_opened_by_its_link(ui: Any, site: Site) -> None:
    link = f"#passage?collection=notes&id={quote(site.secret_id)}"
    open_as(ui, site, "ana", "notes")
    ui.goto(site.url + "/" + link)
    ui.wait_for_selector("#status.error")
    assert "no node" in ui.inner_text("#status") and ui.locator("#passage").is_hidden()
    assert "merger" not in ui.content()
    open_as(ui, site, "ben", "notes")
    ui.goto(site.url + "/" + link)
    ui.wait_for_selector("#passage:not([hidden])")
    assert ui.inner_text("#passage-text") == SECRET


# -- the ask: stages streamed, caution, quotes with their place -----------------------------------

RECORD_STAGES = """
window.seen = [];
new MutationObserver(() => {
  const turn = document.querySelector('#turns > .turn:last-child');
  if (!turn) return;
  const stages = turn.querySelectorAll('.stages li');
  const answer = turn.querySelector('.answer');
  const last = window.seen[window.seen.length - 1];
  const status = document.getElementById('status').textContent;
  const said = [...stages].every(s => status.includes(s.textContent));
  const now = stages.length + ':' + answer.hidden + ':' + said;
  if (last !== now) window.seen.push(now);
}).observe(document, {subtree: true, childList: true, attributes: true});
"""


def test_an_ask_streams_its_stages_before_its_answer(ui: Any, site: Site,
                                                     tmp_path: Path) -> None:
    ui.add_init_script(RECORD_STAGES)
    streams: list[str] = []
    ui.on("response", lambda r: streams.append(r.headers.get("content-type", ""))
          if r.url.endswith("/v1/ask/stream") else None)
    open_as(ui, site, "ana", "books")
    ask(ui, CONFIDENT)
    stages = ui.locator(f"{TURN} .stages li").all_text_contents()  # in the closed disclosure
    assert stages[:3] == ["question", "grounding", "exploration"] and stages[-1] == "synthesis"
    assert len(streams) == 1 and streams[0].startswith("text/event-stream")
    seen = ui.evaluate("window.seen")
    # every stage was on the page while the answer was not yet, and not all at once (two
    # events the server sends together may be shown together), then the answer
    # (each said in the status line, and kept in the provenance disclosure shown with the answer)
    waiting = [int(s.split(":")[0]) for s in seen if ":true:" in s]
    assert waiting == sorted(waiting) and waiting[-1] == len(stages)
    assert len({n for n in waiting if n}) >= 2, seen
    assert all(s.endswith(":true") for s in seen if ":true:" in s and not s.startswith("0:")), seen
    assert seen[-1] == f"{len(stages)}:false:false"
    ms = [int(v) for v in ui.locator(f"{TURN} .stages li").evaluate_all(
        "ls => ls.map(l => l.dataset.ms)")]
    assert ms == sorted(ms)
    width, height = png_size(ui.screenshot(path=str(tmp_path / "ask.png"), full_page=True))
    assert width == 1100 and height > 900  # the answer, its quotes and the provenance summary


def test_a_cautious_answer_says_so_and_a_confident_one_does_not(
        ui: Any, site: Site, tmp_path: Path) -> None:
    open_as(ui, site, "ana", "books")
    ask(ui, CAUTIOUS)
    assert ui.locator(f"{TURN} .caution").is_visible()
    assert ui.locator(f"{TURN} .answer.cautious").count() == 1
    assert ui.inner_text("#status") == "Answered with caution."
    _, cautious_height = shot_of(ui, f"{TURN} .answer", tmp_path / "cautious.png")
    border = ui.eval_on_selector(f"{TURN} .answer", "e => getComputedStyle(e).borderLeftColor")
    assert border == "rgb(216, 155, 0)"
    ask(ui, CONFIDENT)
    assert ui.locator(f"{TURN} .caution").is_hidden()
    assert ui.locator(f"{TURN} .answer.cautious").count() == 0
    _, height = shot_of(ui, f"{TURN} .answer", tmp_path / "confident.png")
    assert min(height, cautious_height) > 150




def test_the_provenance_is_a_closed_disclosure_read_by_keyboard(
        ui: Any, site: Site, tmp_path: Path) -> None:
    open_as(ui, site, "ana", "books")
    ask(ui, CONFIDENT)
    details = ui.locator(f"{TURN} details.provenance")
    stages_list, passages = ui.locator(f"{TURN} .stages"), ui.locator(f"{TURN} .passages li")
    assert details.is_visible() and details.get_attribute("open") is None
    assert stages_list.is_hidden() and ui.locator(f"{TURN} .passages").is_hidden()
    # after the answer and its sources, not before them
    assert ui.evaluate(f"document.querySelector('{TURN} .sources').compareDocumentPosition("
                       f"document.querySelector('{TURN} .provenance')) & "
                       "Node.DOCUMENT_POSITION_FOLLOWING")
    summary = ui.locator(f"{TURN} .provenance summary")
    assert summary.inner_text() == "How this answer was found"
    summary.focus()
    ui.keyboard.press("Enter")
    assert details.get_attribute("open") is not None and stages_list.is_visible()
    ui.keyboard.press("Space")
    assert details.get_attribute("open") is None
    ui.keyboard.press("Space")
    assert details.get_attribute("open") is not None
    # the stages, each with its time
    stages = ui.locator(f"{TURN} .stages li").all_inner_texts()
    assert stages[:3] == ["question", "grounding", "exploration"] and stages[-1] == "synthesis"
    shown = ui.locator(f"{TURN} .stages li").evaluate_all(
        "ls => ls.map(l => getComputedStyle(l, '::after').content)")
    assert all(re.fullmatch(r'" · " attr\(data-ms\) " ms"|" · \d+ ms"', c) for c in shown), shown
    assert all(v.isdigit() for v in ui.locator(f"{TURN} .stages li").evaluate_all(
        "ls => ls.map(l => l.dataset.ms)"))
    assert ui.inner_text(f"{TURN} .timings").startswith("On the server: ")
    # the passages considered, best first, each with its place and the start of its text
    status, answer = call(f"{site.url}/v1/ask", site.keys["ana"], {
        "question": CONFIDENT, "collection": "books", "mode": "bm25"})
    assert status == 200, answer
    scores = [float(v) for v in passages.evaluate_all("ls => ls.map(l => l.dataset.score)")]
    assert scores and scores == sorted(scores, reverse=True)
    assert sorted(passages.evaluate_all("ls => ls.map(l => l.dataset.id)")) == sorted(
        d["id"] for d in answer["documents"])
    quoted = {q["id"]: q for q in answer["quotes"]}
    documents = {d["id"]: d for d in answer["documents"]}
    assert quoted
    for li in passages.all():
        node_id = li.get_attribute("data-id") or ""
        said = f"quoted [{quoted[node_id]['n']}]" if node_id in quoted else "not quoted"
        assert said in li.inner_text()
        assert re.match(r"^The Picture of Dorian Gray · chapter \d+$",
                        li.locator(".place").inner_text())
        glimpse = li.locator(".glimpse").inner_text()
        assert 0 < len(glimpse) <= 161
        assert " ".join(documents[node_id]["text_start"].split()).startswith(glimpse.rstrip("…"))
        assert li.locator("a.in-context").count() == 1
    shots(ui, tmp_path, "provenance")


@pytest.mark.parametrize(("collection", "question", "kind", "place"), [
    ("books", CONFIDENT, "book", r"^The Picture of Dorian Gray · chapter \d+$"),
    ("rules", "강의료는 언제 지급하나요?", "regulation", r"^교원인사규정 · 제2조 \(지급\)$"),
    ("code", "What does SearchByTracking call?", "code",
     r"^src/FakeEnterprise\.Domain/Shipments/ShipmentService\.cs · "
     r"ShipmentService\.SearchByTracking$"),
    ("handbook", "How are snapshots read?", "document",
     r"^01-snapshots\.md · (Snapshots and import runs > )?Reading the latest snapshots$"),
])
def test_quotes_name_their_place_and_open_in_context(
        ui: Any, site: Site, tmp_path: Path, collection: str, question: str, kind: str,
        place: str) -> None:
    open_as(ui, site, "ana", collection)
    ask(ui, question)
    first = ui.locator(f"{TURN} .source").first
    where = first.locator(".place")
    assert where.get_attribute("data-kind") == kind
    assert re.match(place, where.inner_text()), where.inner_text()
    node_id = first.get_attribute("data-id")
    quoted = first.locator("blockquote mark.quoted").text_content()
    first.locator("a.in-context").click()
    ui.wait_for_selector("#passage:not([hidden])")
    assert "#passage?" in ui.url
    status, shown = call(f"{site.url}/v1/passage?id={quote(node_id)}&collection={collection}"
                         "&around=2", site.keys["ana"])
    assert status == 200
    assert ui.text_content("#passage-text .here") == shown["passage"]["text"]
    neighbours = [n["id"] for n in shown["before"] + shown["after"]]
    assert ui.eval_on_selector_all("#passage-text .around",
                                   "els => els.map(e => e.dataset.id)") == neighbours
    for n in shown["before"] + shown["after"]:  # each whole, but for text the next repeats
        assert ui.text_content(f'#passage-text .around[data-id="{n["id"]}"]') in n["text"]
    assert ui.text_content("#passage-text mark.quoted") == quoted
    assert ui.inner_text("#passage-place").endswith(node_id)
    assert ui.get_attribute("#passage-place", "data-kind") == kind
    width, height = shot_of(ui, "#passage", tmp_path / "passage.png")
    assert width > 600 and height > 80


# -- search snippets ------------------------------------------------------------------------------

def test_snippets_mark_whole_words_only(ui: Any, site: Site) -> None:
    ui.goto(site.url + "/")
    parts = ui.evaluate("""async () => {
        const s = await import('/static/snippets.js');
        return [s.snippet('The cage of age, and ages of the sage.', 'age'),
                s.snippet('강의료는 매월 지급하며 강의료를 정한다', '강의료'),
                s.snippet('What is the budget? Budgets budgeted.', 'what budget')];
    }""")
    marks = [[p["text"] for p in one if p["mark"]] for one in parts]
    assert marks == [["age", "ages"], ["강의료는", "강의료를"], ["budget", "Budgets", "budgeted"]]


def test_search_snippets_are_cut_at_word_boundaries_around_the_matches(
        ui: Any, site: Site, tmp_path: Path) -> None:
    open_as(ui, site, "ana", "books")
    ui.fill("#k", "8")
    search(ui, "portrait Basil")
    status, result = call(f"{site.url}/v1/search?q=portrait%20Basil&collection=books"
                          "&mode=bm25&k=8", site.keys["ana"])
    assert status == 200
    snippets = ui.locator("#hit-list .snippet")
    assert snippets.count() == len(result["hits"]) == 8
    for i, hit in enumerate(result["hits"]):
        text = snippets.nth(i).inner_text()
        body = " ".join(hit["text"].split())
        inner = text.removeprefix("…").removesuffix("…").strip()
        at = body.find(inner)
        assert at >= 0, (text, body)  # a piece of the passage, its spaces collapsed
        end = at + len(inner)
        assert at == 0 or not WORD.match(body[at - 1]), text  # starts with a whole word
        assert end == len(body) or not WORD.match(body[end - 1]) or \
            not WORD.match(body[end]), text  # and ends with one
        assert text.startswith("…") == (at > 0) and text.endswith("…") == (end < len(body))
        assert len(inner) <= 240
        marks = snippets.nth(i).locator("mark").all_inner_texts()
        assert marks and {m.lower().rstrip("s") for m in marks} <= {"portrait", "basil"}
    width, height = shot_of(ui, "#hits", tmp_path / "snippets.png")
    assert width > 600 and height > 8 * 60  # eight hits with their snippets
    ui.set_viewport_size({"width": 480, "height": 900})  # a phone: nothing scrolls sideways
    assert ui.evaluate("document.documentElement.scrollWidth - window.innerWidth") <= 0
