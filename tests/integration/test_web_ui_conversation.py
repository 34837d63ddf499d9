"""The web UI's conversation view (issue 32), against a real `excerpt serve` process: over HTTP,
a streamed ask (POST /v1/ask/stream) keeps the same conversation as POST /v1/ask (a follow-up
resolved alike, from the same stored turns) and the ask's `documents` say what each passage is
(title, source, metadata, the start of its text) without ever naming one the key may not see;
in headless Chromium, questions and answers in turns with a follow-up resolved and said
("Understood as"), "New conversation", the answering sentence first in a marked lead block,
who wrote the answer and the cautious state said plainly, each [n] opening its source card
(its place, the quote in its context, "open in context" to the passage), copy and share with
the real clipboard (a link with no key that asks the question again in a fresh tab), and the
view checked with axe at every look (tests.a11y.looked_at)."""

from __future__ import annotations

import json
import re
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import pytest
from tests.a11y import looked_at
from tests.browser import CAUTIOUS, CONFIDENT, console_errors, watched
from tests.http import add_keys, call, excerpt_serve

from excerpt.engine import Engine

FOLLOW_UP = "And what does he say about art?"
RESOLVED = "What does Lord Henry say about art?"
# a board note that answers the confident question well: ben's asks read it, ana's never
SECRET = ("Lord Henry says youth and beauty are the board's merger secret: youth, beauty and "
          "the Northwind merger.")
LAST = "#turns > .turn:last-child"
ANSWERED = LAST + "[data-state=answered]"


class Site:
    def __init__(self, url: str, keys: dict[str, str]) -> None:
        self.url, self.keys = url, keys


@pytest.fixture(scope="module")
def site(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory,
         free_port: Callable[[], int]) -> Iterator[Site]:
    """Dorian Gray and a board note tagged `board` in "books"; ana reads the public text, ben
    the board's note too."""
    root = tmp_path_factory.mktemp("web-ui-conversation")
    engine = Engine(root / "home")
    engine.ingest(shared_data("books", "pg174_dorian_gray.txt"), collection="books",
                  embedder="none")
    (root / "board.txt").write_text(SECRET, "utf-8")
    engine.ingest(root / "board.txt", collection="books", embedder="none", source="board",
                  acl_tags=["board"])
    engine.ingest(shared_data("books", "pg6130_iliad_pope.txt"), collection="iliad",
                  embedder="none")
    engine.close()
    keys = add_keys(root / "home", [("ana",), ("ben", "--acl-tag", "board")], revoke=())
    with excerpt_serve(["--home", str(root / "home")], free_port()) as url:
        yield Site(url, keys)


def ask_json(site: Site, who: str, body: dict[str, Any]) -> dict[str, Any]:
    status, answer = call(f"{site.url}/v1/ask", site.keys[who],
                          {"collection": "books", "mode": "bm25", **body})
    assert status == 200, answer
    return dict(answer)


def ask_streamed(site: Site, who: str, body: dict[str, Any]) -> dict[str, Any]:
    """The answer event's data of POST /v1/ask/stream (after its stage events)."""
    sent = urllib.request.Request(
        f"{site.url}/v1/ask/stream",
        json.dumps({"collection": "books", "mode": "bm25", **body}).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {site.keys[who]}"})
    with urllib.request.urlopen(sent, timeout=60) as response:
        events = [block.split("\n") for block in response.read().decode().split("\n\n") if block]
    names = [lines[0].removeprefix("event: ") for lines in events]
    assert names[0] == "stage" and names[-1] == "answer", names
    return dict(json.loads(events[-1][1].removeprefix("data: ")))


# -- over HTTP: the stream's conversation, the documents ------------------------------------------

SAME = ("answer", "citations", "quotes", "documents", "cautious", "turn", "asked",
        "resolved_question", "resolution", "conversation")


def test_a_streamed_follow_up_is_resolved_as_the_asked_one(site: Site) -> None:
    plain = [ask_json(site, "ana", {"question": q, "conversation": "plain"})
             for q in (CONFIDENT, FOLLOW_UP)]
    streamed = [ask_streamed(site, "ana", {"question": q, "conversation": "streamed"})
                for q in (CONFIDENT, FOLLOW_UP)]
    assert streamed[1]["resolved_question"] == plain[1]["resolved_question"] == RESOLVED
    assert streamed[1]["resolution"] == "pronoun" and streamed[1]["turn"] == 2
    for by_post, by_stream in zip(plain, streamed, strict=True):
        assert {k: by_post[k] for k in SAME if k != "conversation"} == \
            {k: by_stream[k] for k in SAME if k != "conversation"}
    # the same stored turns: a question asked plainly, its follow-up streamed
    ask_json(site, "ana", {"question": CONFIDENT, "conversation": "mixed"})
    mixed = ask_streamed(site, "ana", {"question": FOLLOW_UP, "conversation": "mixed"})
    assert (mixed["resolved_question"], mixed["turn"]) == (RESOLVED, 2)
    # a key's conversations are its own: ben's "plain" has no turn yet
    assert ask_streamed(site, "ben", {"question": FOLLOW_UP, "conversation": "plain"})[
        "resolved_question"] == FOLLOW_UP
    # a name that is not plain is refused before the stream starts, as POST /v1/ask refuses it
    status, refused = call(f"{site.url}/v1/ask/stream", site.keys["ana"],
                           {"question": CONFIDENT, "collection": "books", "conversation": "a/b"})
    assert status == 400 and "conversation" in refused["error"]


def test_the_documents_say_what_each_passage_is_and_never_name_a_hidden_one(site: Site) -> None:
    answer = ask_json(site, "ana", {"question": CONFIDENT})
    assert answer["documents"]
    for doc in answer["documents"]:
        assert set(doc) == {"id", "score", "title", "source", "metadata", "text_start", "chars"}
        assert doc["title"] == "The Picture of Dorian Gray"
        assert isinstance(doc["metadata"]["chapter"], int)
        assert 0 < len(doc["text_start"]) <= 200 and doc["chars"] >= len(doc["text_start"])
    for quote in answer["quotes"]:  # each quote with the words around it in its passage
        around = quote["context"]
        assert set(around) == {"before", "after", "more_before", "more_after"}
        assert len(around["before"]) <= 120 and len(around["after"]) <= 120
    # ben's ask reads the board's note; ana's never, whatever rights her request names
    bens = ask_json(site, "ben", {"question": CONFIDENT})
    secret = [d for d in bens["documents"] if "Northwind" in d["text_start"]]
    assert len(secret) == 1 and secret[0]["source"] == "board"
    for body in ({}, {"acl_tag": ["board"]}):
        for answered in (ask_json(site, "ana", {"question": CONFIDENT, **body}),
                         ask_streamed(site, "ana", {"question": CONFIDENT, **body})):
            assert secret[0]["id"] not in [d["id"] for d in answered["documents"]]
            assert "Northwind" not in json.dumps(answered)


# -- in Chromium ----------------------------------------------------------------------------------

@pytest.fixture
def ui(page: Any, site: Site) -> Iterator[Any]:
    """The page, with the clipboard granted; failing the test on a console error or a request
    that leaves the server."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    with watched(page, site.url):
        yield page


def keyed(page: Any, site: Site) -> None:
    page.goto(site.url + "/")
    page.fill("#key", site.keys["ana"])
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", "books")
    page.select_option("#mode", "bm25")
    page.wait_for_selector("#overview:not([hidden])")  # the page as it stands before an ask


def ask(page: Any, question: str, turns: int) -> Any:
    """Asks ``question``; the conversation's last turn once answered (the ``turns``-th)."""
    page.fill("#query", question)
    page.click("#ask-button")
    page.wait_for_selector(f"#turns > .turn:nth-child({turns})[data-state=answered]",
                           timeout=30_000)
    assert page.locator("#turns > .turn").count() == turns
    return page.locator(LAST)


def test_questions_and_answers_in_turns_with_a_follow_up_resolved(
        ui: Any, site: Site, tmp_path: Path) -> None:
    keyed(ui, site)
    first = ask(ui, CONFIDENT, 1)
    assert first.locator(".asked").inner_text() == CONFIDENT
    assert first.locator(".understood").is_hidden()
    second = ask(ui, FOLLOW_UP, 2)
    assert second.locator(".asked").inner_text() == FOLLOW_UP
    assert second.locator(".understood").inner_text() == f"Understood as: {RESOLVED}"
    turns = ui.locator("#turns > .turn")
    assert turns.nth(0).locator(".asked").inner_text() == CONFIDENT  # kept, above
    assert turns.nth(0).locator(".sources .source").count() > 0
    # the page sent one conversation id with both asks: answered as the API's second turn
    talk = [ask_json(site, "ana", {"question": q, "conversation": "as-the-page"})
            for q in (CONFIDENT, FOLLOW_UP)]
    assert second.locator(".sources .source").evaluate_all(
        "els => els.map(e => e.dataset.id)") == [q["id"] for q in talk[1]["quotes"]]
    looked_at(ui, tmp_path, "conversation")
    ui.click("#new-conversation")
    assert ui.locator("#conversation").is_hidden() and turns.count() == 0
    assert "new conversation" in ui.inner_text("#status").lower()
    again = ask(ui, FOLLOW_UP, 1)  # nothing before it now: asked as it stands
    assert again.locator(".understood").is_hidden()
    ui.fill("#key", site.keys["ben"])  # another key: its conversations are its own
    assert turns.count() == 0 and ui.locator("#conversation").is_hidden()


SHIFTS = """window.shifts = [];
new PerformanceObserver((list) => list.getEntries().forEach((e) => window.shifts.push(e.value)))
  .observe({type: 'layout-shift', buffered: true});"""


def test_the_answering_sentence_leads_and_the_reader_is_said(ui: Any, site: Site) -> None:
    ui.set_viewport_size({"width": 390, "height": 900})  # a phone: the status line wraps first
    ui.add_init_script(SHIFTS)
    keyed(ui, site)
    ui.evaluate("window.shifts = []")
    ask(ui, CONFIDENT, 1)
    turn = ask(ui, FOLLOW_UP, 2)  # nothing moves as the stages and the answers come
    assert sum(ui.evaluate("window.shifts")) < 0.01, ui.evaluate("window.shifts")
    ui.click("#new-conversation")
    turn = ask(ui, CONFIDENT, 1)
    answer = ask_json(site, "ana", {"question": CONFIDENT})
    first_sentence = answer["answer"].split("[1]")[0] + "[1]"
    lead = turn.locator(".lead")
    assert lead.is_visible() and lead.inner_text() == first_sentence
    assert lead.locator(".cite").all_inner_texts() == ["[1]"]
    assert turn.locator(".rest").inner_text().startswith(
        answer["answer"][len(first_sentence):].strip().split(" [2]")[0])
    assert turn.locator(".reader").inner_text() == "Answered from quotes"
    assert turn.locator(".caution").is_hidden()
    marked = lead.evaluate("e => [getComputedStyle(e).backgroundColor, "
                           "getComputedStyle(e).borderLeftWidth]")
    plain = turn.locator(".rest").evaluate("e => getComputedStyle(e).backgroundColor")
    assert marked[0] != plain and marked[1] == "4px"
    assert ui.inner_text("#status") == "Answered."


def test_a_cautious_answer_says_so_plainly_and_leads_with_nothing(
        ui: Any, site: Site, tmp_path: Path) -> None:
    keyed(ui, site)
    turn = ask(ui, CAUTIOUS, 1)
    caution = turn.locator(".caution")
    assert caution.is_visible()
    assert caution.inner_text() == "No passage answers this closely; these are the nearest quotes."
    assert turn.locator(".lead").is_hidden() and turn.locator(".rest").inner_text()
    assert turn.locator(".answer.cautious").count() == 1
    assert ui.inner_text("#status") == "Answered with caution."
    looked_at(ui, tmp_path, "cautious-turn")


def test_a_citation_opens_its_card_and_the_card_opens_the_passage(
        ui: Any, site: Site, tmp_path: Path) -> None:
    keyed(ui, site)
    turn = ask(ui, CONFIDENT, 1)
    cites = turn.locator(".answer .cite")
    n = cites.nth(1).get_attribute("data-n")
    cites.nth(1).click()
    card = turn.locator(".source.active")
    assert card.count() == 1 and card.get_attribute("data-n") == n
    assert ui.evaluate("document.activeElement.dataset.n") == n  # focused: read next
    assert re.fullmatch(r"\[\d+\] The Picture of Dorian Gray · chapter \d+",
                        card.locator(".source-head").inner_text().replace("\n", " "))
    answer = ask_json(site, "ana", {"question": CONFIDENT})
    quote = next(q for q in answer["quotes"] if str(q["n"]) == n)
    assert card.locator("mark.quoted").text_content() == quote["text"]
    context = card.locator("blockquote").text_content()
    assert context.count(quote["text"]) == 1 and len(context) > len(quote["text"])
    looked_at(ui, tmp_path, "source-card")
    card.locator("a.in-context").click()
    ui.wait_for_selector("#passage:not([hidden])")
    assert ui.text_content("#passage-text mark.quoted") == quote["text"]
    assert ui.inner_text("#passage-place").endswith(quote["id"])
    # the provenance: each passage considered by its place and the start of its text
    turn.locator(".provenance summary").click()
    considered = turn.locator(".passages li")
    assert considered.count() == len(answer["documents"])
    assert all(re.match(r"The Picture of Dorian Gray · chapter \d+", t)
               for t in considered.locator(".place").all_inner_texts())
    assert all(g for g in considered.locator(".glimpse").all_inner_texts())
    looked_at(ui, tmp_path, "provenance-open")


def test_an_iliad_citation_names_its_book(ui: Any, site: Site) -> None:
    """The Gutenberg ingester records the Iliad's books (metadata ``book``, and ``part`` for its
    arguments and notes): each card says which book, as `excerpt ask` does (book=N)."""
    keyed(ui, site)
    ui.select_option("#collection", "iliad")
    turn = ask(ui, "Who kills Patroclus?", 1)
    places = turn.locator(".source .place").all_inner_texts()
    assert places and all(re.match(r"^The Iliad · book \d+( · argument)?$", p) for p in places), \
        places
    answer = ask_json(site, "ana", {"question": "Who kills Patroclus?", "collection": "iliad"})
    assert all(f"· book {q['metadata']['book']}" in p
               for q, p in zip(answer["quotes"], places, strict=True)), places


def test_copy_and_share_a_link_that_asks_again_without_the_key(
        ui: Any, site: Site) -> None:
    keyed(ui, site)
    ui.fill("#k", "4")
    ui.wait_for_selector("#filters:not([hidden])")  # a filter goes with the asks, and the link
    ui.select_option("#filter-key", "chapter")
    ui.fill("#filter-value", "2")
    ui.click("#filter-add")
    ask(ui, CONFIDENT, 1)
    turn = ask(ui, FOLLOW_UP, 2)
    answer = turn.locator(".lead").inner_text() + " " + turn.locator(".rest").inner_text()
    turn.locator("button.copy").click()
    ui.wait_for_function("document.querySelector('#turns > .turn:last-child .done')"
                         ".textContent.includes('copied')")
    copied = ui.evaluate("navigator.clipboard.readText()")
    said, sources = copied.split("\n\nSources:\n")
    assert " ".join(said.split()) == " ".join(answer.split())
    lines = sources.split("\n")
    assert len(lines) == turn.locator(".source").count()
    assert all(s.startswith(f"[{i}] The Picture of Dorian Gray · chapter 2: “")
               for i, s in enumerate(lines, start=1))
    turn.locator("button.share").click()
    ui.wait_for_function("document.querySelector('#turns > .turn:last-child .done')"
                         ".textContent.startsWith('Link copied')")
    link = ui.evaluate("navigator.clipboard.readText()")
    assert site.keys["ana"] not in link and "key" not in link.lower()
    parsed = urlparse(link)
    assert f"{parsed.scheme}://{parsed.netloc}" == site.url and parsed.fragment.startswith("ask?")
    params = {k: v[0] for k, v in parse_qs(parsed.fragment.removeprefix("ask?")).items()}
    assert params == {"q": RESOLVED, "collection": "books", "mode": "bm25", "k": "4",
                      "where": "chapter=2"}
    # a fresh tab: no key, so nothing is asked until one is pasted; then the same answer
    fresh = ui.context.new_page()
    fresh_errors = console_errors(fresh)
    fresh.goto(link)
    fresh.wait_for_selector("#collection[aria-busy=false]", state="attached")
    assert fresh.locator("#turns > .turn").count() == 0
    fresh.focus("#key")
    fresh.evaluate("t => navigator.clipboard.writeText(t)", site.keys["ana"])
    fresh.keyboard.press("Control+V")
    fresh.wait_for_selector(ANSWERED, timeout=30_000)
    again = fresh.locator(LAST)
    assert again.locator(".asked").inner_text() == RESOLVED
    assert fresh.input_value("#k") == "4" and fresh.input_value("#mode") == "bm25"
    assert fresh.locator("#filter-chips li").evaluate_all(
        "ls => ls.map(l => l.dataset.where)") == ["chapter=2"]
    alone = ask_json(site, "ana", {"question": RESOLVED, "doc_limit": 4,  # a new conversation
                                   "where": ["chapter=2"]})
    assert [q["id"] for q in alone["quotes"]] == again.locator(".source").evaluate_all(
        "els => els.map(e => e.dataset.id)")
    assert "#ask" not in fresh.url and fresh_errors == []
    # the same link in a tab that has its key: asked at once
    fresh.goto(site.url + "/")
    fresh.goto(link)
    fresh.wait_for_selector(ANSWERED, timeout=30_000)
    assert fresh.locator("#turns > .turn").count() == 1
    fresh.close()
