"""OpenAI-compatible chat (issue 18 item 2), through the official `openai` client against a real
`excerpt serve` process: the models are the collections a key may read, a completion (streamed
or not) is the /v1/ask answer with its citations in a structured field (in the final streamed
chunk too), the messages are the conversation (a follow-up is resolved from the earlier ones),
errors come in OpenAI's shape, and a key never sees a hidden node through chat."""

from __future__ import annotations

import json
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import openai
import pytest
from openai import OpenAI
from tests.http import add_keys, call, excerpt_serve, exchange, request

from excerpt.engine import Engine
from excerpt.rerank.base import RerankResult

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
SECRET = ("# Board minutes\n\nThe board approved the Zephyrine merger of the snapshot stores: "
          "the Zephyrine merger closes in March and its price stays secret.\n")
HIDDEN_QUESTION = "What did the board approve about the Zephyrine merger?"
QUESTION = "How are snapshots published?"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, free_port: Callable[[], int],
           shared_data: Callable[..., Path]) -> Iterator[dict[str, Any]]:
    """A real `excerpt serve` over the handbook (plus a board-only page), a collection "vault"
    with board-only nodes alone, and the Iliad as "books" when the shared data is there."""
    folder = tmp_path_factory.mktemp("chat")
    home, board = folder / "home", folder / "board"
    board.mkdir()
    (board / "minutes.md").write_text(SECRET, encoding="utf-8")
    engine = Engine(home)
    engine.ingest(HANDBOOK, collection="handbook", embedder="none")
    engine.ingest(board, collection="handbook", acl_tags=["board"],
                  classification_labels=["secret"], embedder="none")
    engine.ingest(board, collection="vault", acl_tags=["board"], embedder="none")
    try:
        engine.ingest(shared_data("books", "pg6130_iliad_pope.txt"), collection="books",
                      embedder="none")
        books = True
    except pytest.skip.Exception:
        books = False
    engine.close()
    keys = add_keys(home)
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        yield {"url": url, "keys": keys, "books": books}


def client(served: dict[str, Any], name: str = "alice", key: str | None = None) -> OpenAI:
    return OpenAI(base_url=f"{served['url']}/v1", api_key=key or served["keys"][name],
                  max_retries=0)


def ask(served: dict[str, Any], question: str, collection: str = "handbook",
        name: str = "alice") -> dict[str, Any]:
    status, body = call(f"{served['url']}/v1/ask", served["keys"][name],
                        {"question": question, "collection": collection})
    assert status == 200, body
    answer: dict[str, Any] = body
    return answer


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_models_are_the_collections_the_key_may_read(served: dict[str, Any]) -> None:
    alice = client(served).models.list()
    ids = [m.id for m in alice.data]
    assert ids == ["excerpt:books", "excerpt:handbook"] if served["books"] else [
        "excerpt:handbook"]
    model = alice.data[-1]
    assert (model.object, model.owned_by) == ("model", "excerpt") and model.created > 0
    # bob holds the board's tag: the collection of board-only nodes is a model for him only
    assert "excerpt:vault" in [m.id for m in client(served, "bob").models.list().data]
    assert client(served).models.retrieve("excerpt:handbook").id == "excerpt:handbook"
    with pytest.raises(openai.NotFoundError):
        client(served).models.retrieve("excerpt:vault")
    status, raw, _ = exchange(request(f"{served['url']}/v1/models", served["keys"]["alice"]))
    assert status == 200 and json.loads(raw)["object"] == "list"


def test_a_completion_is_the_ask_answer_with_its_citations(served: dict[str, Any]) -> None:
    reply = client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user(QUESTION)])
    expected = ask(served, QUESTION)
    message = reply.choices[0].message
    assert reply.object == "chat.completion" and reply.model == "excerpt:handbook"
    assert reply.choices[0].finish_reason == "stop" and message.role == "assistant"
    assert message.content is not None and message.content.startswith(expected["answer"])
    assert "[1]" in message.content and expected["citations"]
    extra = message.model_extra["excerpt"]  # type: ignore[index]
    assert extra["citations"] == expected["citations"]
    assert extra["quotes"] == expected["quotes"] and extra["cautious"] == expected["cautious"]
    # a front end that shows only the text still shows what each [n] is
    for c in expected["citations"]:
        assert f"[{c['n']}] {c['title']} ({c['id']})" in message.content
    assert reply.usage is not None and reply.usage.completion_tokens > 0
    parts = client(served).chat.completions.create(  # content as text parts: the same ask
        model="excerpt:handbook", temperature=0.2, max_tokens=50,
        messages=[{"role": "user", "content": [{"type": "text", "text": QUESTION}]}])
    assert parts.choices[0].message.model_extra["excerpt"] == extra  # type: ignore[index]


def test_a_streamed_completion_carries_the_citations_in_its_final_chunk(
        served: dict[str, Any]) -> None:
    chunks = list(client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user(QUESTION)], stream=True))
    expected = ask(served, QUESTION)
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text.startswith(expected["answer"]) and "[1]" in text
    assert chunks[0].choices[0].delta.role == "assistant"
    assert len({c.id for c in chunks}) == 1
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    extra = last.choices[0].delta.model_extra["excerpt"]  # type: ignore[index]
    assert extra["citations"] == expected["citations"] and extra["quotes"] == expected["quotes"]
    assert all(c.choices[0].finish_reason is None for c in chunks[:-1])
    body = {"model": "excerpt:handbook", "messages": [user(QUESTION)], "stream": True}
    status, raw, headers = exchange(request(f"{served['url']}/v1/chat/completions",
                                            served["keys"]["alice"], body))
    assert status == 200 and headers["content-type"].startswith("text/event-stream")
    assert raw.decode().rstrip().endswith("data: [DONE]")
    counted = list(client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user(QUESTION)], stream=True,
        stream_options={"include_usage": True}))
    assert counted[-1].choices == [] and counted[-1].usage is not None
    assert counted[-2].choices[0].finish_reason == "stop"


def test_a_follow_up_is_resolved_from_the_earlier_messages(served: dict[str, Any]) -> None:
    first = client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user(QUESTION)])
    follow = client(served).chat.completions.create(
        model="excerpt:handbook",
        messages=[{"role": "system", "content": "Answer from the handbook."}, user(QUESTION),
                  {"role": "assistant", "content": first.choices[0].message.content},
                  user("Can it be half written?")])
    extra = follow.choices[0].message.model_extra["excerpt"]  # type: ignore[index]
    assert extra["resolution"] == "pronoun" and extra["asked"] == "Can it be half written?"
    resolved = extra["resolved_question"]
    assert resolved.startswith("Can snapshots") and " it " not in resolved
    assert extra["citations"] == ask(served, resolved)["citations"]
    alone = client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user("Can it be half written?")])
    assert alone.choices[0].message.model_extra["excerpt"]["resolution"] is None  # type: ignore


def test_who_killed_him_is_asked_about_the_hero_named_before(served: dict[str, Any]) -> None:
    if not served["books"]:
        pytest.skip("the Iliad (shared data books/) is not there")
    reply = client(served).chat.completions.create(
        model="excerpt:books",
        messages=[user("Who is Patroclus?"), {"role": "assistant", "content": "A Greek."},
                  user("And who killed him?")], stream=True)
    chunks = list(reply)
    extra = chunks[-1].choices[0].delta.model_extra["excerpt"]  # type: ignore[index]
    assert extra["resolved_question"] == "Who killed Patroclus?"  # its "And" dropped
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "Hector kills him" in text  # Book XVI's argument: "... and Hector kills him"
    assert extra["citations"] == ask(served, "Who killed Patroclus?", "books")["citations"]


def _revenge_follow_up(served: dict[str, Any]) -> tuple[Any, Any]:
    """"Who kills Patroclus?", then "And who kills him in revenge?" through chat."""
    if not served["books"]:
        pytest.skip("the Iliad (shared data books/) is not there")
    first = client(served).chat.completions.create(
        model="excerpt:books", messages=[user("Who kills Patroclus?")])
    follow = client(served).chat.completions.create(
        model="excerpt:books",
        messages=[user("Who kills Patroclus?"),
                  {"role": "assistant", "content": first.choices[0].message.content},
                  user("And who kills him in revenge?")])
    return first, follow


@pytest.mark.data
def test_him_is_the_name_asked_about_before_and_the_verb_is_not_repeated(
        served: dict[str, Any]) -> None:
    """Issue 28 item 12: "him" was "kills Patroclus", the previous question's whole phrase,
    and the question read "And who kills kills Patroclus in revenge?"."""
    _, follow = _revenge_follow_up(served)
    extra = follow.choices[0].message.model_extra["excerpt"]  # type: ignore[index]
    assert (extra["resolution"], extra["resolved_question"]) == (
        "pronoun", "Who kills Patroclus in revenge?")


@pytest.mark.data
def test_the_revenge_follow_up_moves_on_from_the_previous_answer(
        served: dict[str, Any]) -> None:
    """The resolved question alone still matches Book XVI's argument ("... and Hector kills
    him") best; inside the conversation, the sentences just quoted give way to new ones that
    answer as surely: Achilles, who owes Patroclus "the fate of Hector" (Book XVIII)."""
    first, follow = _revenge_follow_up(served)
    before = first.choices[0].message.model_extra["excerpt"]  # type: ignore[index]
    after = follow.choices[0].message.model_extra["excerpt"]  # type: ignore[index]
    alone = ask(served, "Who kills Patroclus in revenge?", "books")
    assert alone["citations"][0]["id"] == before["citations"][0]["id"]  # what it would repeat
    assert after["citations"][0]["id"] != before["citations"][0]["id"]
    said = first.choices[0].message.content or ""
    assert not any(q["text"] in said for q in after["quotes"])  # nothing quoted twice
    assert "Achilles" in (follow.choices[0].message.content or "")


def test_no_key_a_wrong_key_or_a_revoked_one_is_401_in_openai_shape(
        served: dict[str, Any]) -> None:
    for key in ("exk_wrong", served["keys"]["eve"]):
        with pytest.raises(openai.AuthenticationError):
            client(served, key=key).chat.completions.create(
                model="excerpt:handbook", messages=[user(QUESTION)])
        with pytest.raises(openai.AuthenticationError):
            client(served, key=key).models.list()
    for key in (None, "exk_wrong"):
        status, body = call(f"{served['url']}/v1/chat/completions", key,
                            {"model": "excerpt:handbook", "messages": [user(QUESTION)]})
        assert status == 401
        assert set(body["error"]) == {"message", "type", "param", "code"}
        assert body["error"]["code"] == "invalid_api_key"


def test_an_unknown_model_and_one_the_key_may_not_read_are_the_same_404(
        served: dict[str, Any]) -> None:
    answers = {}
    for model in ("excerpt:nope", "excerpt:vault", "gpt-4o"):
        with pytest.raises(openai.NotFoundError):
            client(served).chat.completions.create(model=model, messages=[user("Who?")])
        status, body = call(f"{served['url']}/v1/chat/completions", served["keys"]["alice"],
                            {"model": model, "messages": [user("Who?")], "stream": True})
        assert status == 404
        answers[model] = json.dumps(body).replace(model, "MODEL")
    assert len(set(answers.values())) == 1, answers
    assert json.loads(answers["gpt-4o"])["error"]["code"] == "model_not_found"


@pytest.mark.parametrize(("body", "param"), [
    ({"model": "excerpt:handbook"}, "messages"),
    ({"model": "excerpt:handbook", "messages": []}, "messages"),
    ({"model": "excerpt:handbook", "messages": [{"role": "assistant", "content": "Hi"}]},
     "messages.0.role"),
    ({"model": "excerpt:handbook", "messages": [user(QUESTION)], "n": 2}, "n"),
    ({"model": "excerpt:handbook", "messages": [user(QUESTION)],
      "excerpt": {"mode": "psychic"}}, "excerpt.mode"),
    ({"model": "excerpt:handbook", "messages": [user(QUESTION)],
      "excerpt": {"snapshots": "x"}}, "excerpt.snapshots"),
    ({"model": "excerpt:handbook", "messages": [
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]},
     "messages.0.content"),
    ({"model": "excerpt:handbook", "messages": [user("snap\x00shots")]}, None),
])
def test_a_bad_body_is_400_in_openai_shape(served: dict[str, Any], body: dict[str, Any],
                                           param: str | None) -> None:
    status, answer = call(f"{served['url']}/v1/chat/completions", served["keys"]["alice"], body)
    assert status == 400, answer
    assert answer["error"]["type"] == "invalid_request_error"
    if param is not None:
        assert answer["error"]["param"] == param


def test_the_excerpt_field_narrows_the_scope_and_never_widens_it(
        served: dict[str, Any]) -> None:
    with pytest.raises(openai.PermissionDeniedError):  # all access needs an admin key
        client(served).chat.completions.create(
            model="excerpt:handbook", messages=[user(QUESTION)],
            extra_body={"excerpt": {"all_access": True}})
    reply = client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user(QUESTION)],
        extra_body={"excerpt": {"mode": "bm25", "where": ["headings=Atomic imports"]}})
    cited = reply.choices[0].message.model_extra["excerpt"]["citations"]  # type: ignore[index]
    assert cited and all("Atomic imports" in c["metadata"]["headings"] for c in cited)
    with pytest.raises(openai.NotFoundError):
        client(served).chat.completions.create(
            model="excerpt:handbook", messages=[user(QUESTION)],
            extra_body={"excerpt": {"snapshot": "no-such-snapshot"}})


def hidden_seen(reply_text: str, extra: dict[str, Any]) -> bool:
    """Whether the board's page shows in the text, a quote or a citation (the question
    itself names the merger, so it is not looked at)."""
    shown = {key: extra[key] for key in ("citations", "quotes")}
    ids = {c["id"] for c in extra["citations"]} | {q["id"] for q in extra["quotes"]}
    return ("Zephyrine" in reply_text + json.dumps(shown)
            or any(i.startswith("minutes.md") for i in ids))


@pytest.mark.parametrize("stream", [False, True])
def test_a_key_never_sees_a_hidden_node_through_chat(served: dict[str, Any],
                                                     stream: bool) -> None:
    def chat(name: str, **extra_body: Any) -> tuple[str, dict[str, Any]]:
        made = client(served, name).chat.completions.create(
            model="excerpt:handbook", messages=[user(HIDDEN_QUESTION)], stream=stream,
            extra_body={"excerpt": extra_body} if extra_body else None)
        if not stream:
            message = made.choices[0].message  # type: ignore[union-attr]
            return message.content or "", message.model_extra["excerpt"]  # type: ignore
        chunks = list(made)  # type: ignore[arg-type]
        text = "".join(c.choices[0].delta.content or "" for c in chunks)
        return text, chunks[-1].choices[0].delta.model_extra["excerpt"]  # type: ignore

    assert hidden_seen(*chat("bob"))  # the question reaches the page for who may read it
    assert not hidden_seen(*chat("alice"))
    assert not hidden_seen(*chat("alice", acl_tag=["board"], clearance=["secret"]))
    assert not hidden_seen(*chat("bob", acl_tag=[]))  # bob narrowed to public nodes
    with pytest.raises(openai.NotFoundError):  # only hidden nodes: no such model for alice
        chat_vault = client(served).chat.completions.create(
            model="excerpt:vault", messages=[user(HIDDEN_QUESTION)], stream=stream)
        list(chat_vault) if stream else None  # type: ignore[call-overload]


def test_chat_answers_with_the_servers_ask_settings(tmp_path: Path,
                                                    free_port: Callable[[], int]) -> None:
    """ask_doc_limit, ask_max_quotes and reranker from the settings file, as the CLI reads
    them: the chat cites and quotes what `excerpt ask` does (nothing hard-coded in chat)."""
    from click.testing import CliRunner

    from excerpt.cli.main import cli

    home, settings = tmp_path / "home", tmp_path / "settings.yml"
    settings.write_text("ask_doc_limit: 2\nask_max_quotes: 1\nreranker: features\n", "utf-8")
    Engine(home).ingest(HANDBOOK, collection="demo", embedder="none")
    base = ["--home", str(home), "--settings", str(settings)]
    out = CliRunner().invoke(cli, [*base, "ask", QUESTION, "--collection", "demo", "--json",
                                   "--no-llm"])
    assert out.exit_code == 0, out.output
    by_cli = json.loads(out.output)
    assert len(by_cli["documents"]) == 2 and len(by_cli["quotes"]) == 1
    key = add_keys(home, [("alice",)], revoke=())["alice"]
    with excerpt_serve(base, free_port()) as url:
        reply = OpenAI(base_url=f"{url}/v1", api_key=key, max_retries=0).chat.completions.create(
            model="excerpt:demo", messages=[user(QUESTION)])
    extra = reply.choices[0].message.model_extra["excerpt"]  # type: ignore[index]
    assert extra["citations"] == by_cli["citations"] and extra["quotes"] == by_cli["quotes"]
    assert (reply.choices[0].message.content or "").startswith(by_cli["answer"])


def test_an_ask_that_fails_is_a_400_or_an_error_line_of_the_stream(
        served: dict[str, Any]) -> None:
    """The handbook has no vectors: a semantic ask fails inside the engine, before the answer
    (a 400) or after the stream began (a data line the openai client raises)."""
    semantic = {"excerpt": {"mode": "semantic"}}
    with pytest.raises(openai.BadRequestError, match="no embeddings in this view"):
        client(served).chat.completions.create(model="excerpt:handbook",
                                               messages=[user(QUESTION)], extra_body=semantic)
    stream = client(served).chat.completions.create(
        model="excerpt:handbook", messages=[user(QUESTION)], stream=True, extra_body=semantic)
    with pytest.raises(openai.APIError, match="no embeddings in this view"):
        list(stream)


class SlowReranker:
    """The one test double here: a reranker that takes two seconds (time is the seam: the
    real late-interaction reranker took 0.5 to 3 s here, so the client sometimes left after
    the ask had finished and the test was flaky); it keeps the retrieval order."""

    name = "slow"

    def rerank(self, query: str, documents: Sequence[str], limit: int) -> list[RerankResult]:
        time.sleep(2)
        return [RerankResult(i, 1.0 / (1 + i)) for i in range(min(limit, len(documents)))]


def test_a_client_leaving_a_streamed_chat_stops_its_ask(
        shared_data: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        serving: Callable[[Any], AbstractContextManager[str]]) -> None:
    """A reranker that takes seconds (the server's settings): the client reads the first
    chunk and leaves; the ask is counted cancelled, never finished."""
    from excerpt.edge.keys import KeyRing
    from excerpt.rerank import base
    from excerpt.server.app import create_app
    from excerpt.settings import Settings

    monkeypatch.setitem(base._FACTORIES, "slow", SlowReranker)
    home = tmp_path / "home"
    engine = Engine(home, Settings(reranker="slow", ask_doc_limit=100))
    engine.ingest(shared_data("books", "pg174_dorian_gray.txt"), collection="books",
                  embedder="none")
    key = add_keys(home, [("ana",)], revoke=())["ana"]
    app = create_app(engine, KeyRing.load(home / "keys.yaml"))
    work = app.state.streams
    body = {"model": "excerpt:books", "stream": True, "excerpt": {"mode": "bm25"},
            "messages": [user("What does Lord Henry say about youth and beauty?")]}
    with serving(app) as url:
        with urllib.request.urlopen(request(f"{url}/v1/chat/completions", key, body),
                                    timeout=60) as response:
            assert json.loads(response.readline().removeprefix(b"data: "))["choices"][0][
                "delta"]["role"] == "assistant"
            started = time.monotonic() + 1.5  # the ask task may start just after the first
            while not work.to_json()["running"] and time.monotonic() < started:  # chunk
                time.sleep(0.01)
            assert work.to_json()["running"] == 1  # the slow reranker holds it for 2 s
        deadline = time.monotonic() + 60
        while work.to_json()["running"] and time.monotonic() < deadline:
            time.sleep(0.02)
    assert work.to_json() == {"running": 0, "finished": 0, "cancelled": 1}
