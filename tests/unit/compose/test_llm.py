"""The OpenAI-compatible client and LLM synthesis, against a scripted local server.

The server is the standard library's http.server on 127.0.0.1 and a free port, in a thread; it
answers ``POST /v1/chat/completions`` with the replies a test scripts and records every request.
No model and no network are involved.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from excerpt.compose.llm import LLMClient, LLMConfig, normalize_base_url
from excerpt.compose.quotes import Quote
from excerpt.compose.synthesis import (
    check_attribution,
    extract_concepts,
    synthesize,
)
from excerpt.errors import ExcerptError, InputError, ServiceError

KEY = "sk-test-SECRET-0123456789"
MODEL = "tiny-test-model"

EN_QUOTES = [
    Quote("handbook:1", "Scholarships are awarded to students with high grades each semester.",
          0.8, 0),
    Quote("handbook:2", "The dean signs every scholarship decision before it is announced.",
          0.5, 1),
]
KO_QUOTES = [
    Quote("장학규정 제6조", "장학금은 성적이 우수한 학생에게 매 학기 지급한다.", 0.9, 0),
    Quote("장학규정 제7조",
          "장학금을 받으려는 학생은 학기마다 신청서를 학생지원처에 제출하여야 한다.", 0.7, 1),
]


@dataclass
class Reply:
    status: int = 200
    body: Any = None          # str sent as it is, anything else as JSON
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


def completion(content: str) -> dict[str, Any]:
    return {"id": "cmpl-1", "object": "chat.completion", "model": MODEL,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}]}


class ScriptedServer:
    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[Recorded] = []
        script = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                script.requests.append(Recorded(self.path, dict(self.headers.items()),
                                                json.loads(raw)))
                reply = script.replies.pop(0) if script.replies else Reply(500, "no reply left")
                time.sleep(reply.delay_s)
                body = reply.body
                text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False)
                data = text.encode("utf-8")
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except OSError:  # the client gave up (timeout test)
                    pass

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.01,),
                                       daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def client(self, timeout_s: float = 5.0, key: str | None = KEY) -> LLMClient:
        return LLMClient(LLMConfig(url=self.url, model=MODEL, api_key=key, timeout_s=timeout_s),
                         retry_backoff_s=0.01)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    s = ScriptedServer()
    yield s
    s.close()


def service_error(client: LLMClient) -> ServiceError:
    with pytest.raises(ServiceError) as info:
        client.chat([{"role": "user", "content": "hi"}])
    assert KEY not in str(info.value)
    assert isinstance(info.value, ExcerptError) and info.value.kind == "service"
    return info.value


# --- configuration -----------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "base"), [
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
    ("http://127.0.0.1:8000/v1/chat/completions", "http://127.0.0.1:8000/v1"),
    ("https://gw.example/openai/chat/completions/", "https://gw.example/openai"),
    ("https://gw.example/api/v2", "https://gw.example/api/v2"),
    (" https://gw.example/v1?api-version=1 ", "https://gw.example/v1?api-version=1"),
])
def test_base_url_is_normalised(given: str, base: str) -> None:
    assert normalize_base_url(given) == base


def test_endpoint_keeps_the_query_string() -> None:
    config = LLMConfig(url="https://gw.example/v1?api-version=1", model="m")
    assert config.endpoint == "https://gw.example/v1/chat/completions?api-version=1"


def test_from_env() -> None:
    assert LLMConfig.from_env({}) is None
    assert LLMConfig.from_env({"EXCERPT_LLM_URL": "  ", "EXCERPT_LLM_MODEL": "m"}) is None
    config = LLMConfig.from_env({"EXCERPT_LLM_URL": "http://127.0.0.1:9/v1/chat/completions",
                                 "EXCERPT_LLM_MODEL": "m", "EXCERPT_LLM_KEY": KEY,
                                 "EXCERPT_LLM_TIMEOUT": "2.5", "EXCERPT_LLM_MAX_TOKENS": "64"})
    assert config == LLMConfig(url="http://127.0.0.1:9/v1", model="m", api_key=KEY,
                               timeout_s=2.5, max_tokens=64, temperature=0.0)
    assert KEY not in repr(config)
    no_key = LLMConfig.from_env({"EXCERPT_LLM_URL": "http://h", "EXCERPT_LLM_MODEL": "m"})
    assert no_key is not None and no_key.api_key is None


@pytest.mark.parametrize("env", [
    {"EXCERPT_LLM_URL": "http://h/v1"},                                     # no model
    {"EXCERPT_LLM_URL": "ftp://h/v1", "EXCERPT_LLM_MODEL": "m"},            # not http
    {"EXCERPT_LLM_URL": "h:8000", "EXCERPT_LLM_MODEL": "m"},
    {"EXCERPT_LLM_URL": "http://h", "EXCERPT_LLM_MODEL": "m", "EXCERPT_LLM_TIMEOUT": "soon"},
    {"EXCERPT_LLM_URL": "http://h", "EXCERPT_LLM_MODEL": "m", "EXCERPT_LLM_TIMEOUT": "0"},
])
def test_bad_configuration_is_refused_by_name(env: dict[str, str]) -> None:
    with pytest.raises(InputError, match=r"EXCERPT_LLM_|timeout"):
        LLMConfig.from_env({**env, "EXCERPT_LLM_KEY": KEY})


# --- the client --------------------------------------------------------------------------------

def test_request_and_success(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion("Hello. [1]")))
    messages = [{"role": "system", "content": "be brief"}, {"role": "user", "content": "안녕?"}]
    assert server.client().chat(messages) == "Hello. [1]"
    (request,) = server.requests
    assert request.path == "/v1/chat/completions"
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.body == {"model": MODEL, "messages": messages, "temperature": 0.0,
                            "max_tokens": 512, "stream": False}


def test_no_key_no_authorization_header(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion("ok")))
    server.client(key=None).chat([{"role": "user", "content": "hi"}])
    assert "Authorization" not in server.requests[0].headers


def test_server_down_is_a_service_error(free_port: Callable[[], int]) -> None:
    config = LLMConfig(url=f"http://127.0.0.1:{free_port()}", model=MODEL, api_key=KEY)
    error = service_error(LLMClient(config))
    assert "cannot be reached" in str(error) and "refused" in str(error)
    assert error.status is None


def test_500_is_retried_once_then_succeeds(server: ScriptedServer) -> None:
    server.replies += [Reply(500, {"error": {"message": "overloaded"}}),
                       Reply(body=completion("fine"))]
    assert server.client().chat([{"role": "user", "content": "hi"}]) == "fine"
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


def test_429_honours_retry_after(server: ScriptedServer) -> None:
    server.replies += [Reply(429, {"error": "slow down"}, {"Retry-After": "0"}),
                       Reply(body=completion("fine"))]
    assert server.client().chat([{"role": "user", "content": "hi"}]) == "fine"
    assert len(server.requests) == 2


def test_at_most_one_retry(server: ScriptedServer) -> None:
    server.replies += [Reply(503, {"detail": "warming up"}), Reply(503, {"detail": "warming up"}),
                       Reply(body=completion("too late"))]
    error = service_error(server.client())
    assert error.status == 503 and "HTTP 503: warming up" in str(error)
    assert len(server.requests) == 2


def test_401_carries_the_servers_message_without_the_key(server: ScriptedServer) -> None:
    # Real servers echo the key they refused; the message must not repeat it.
    server.replies.append(Reply(401, {"error": {"message": f"Incorrect API key provided: {KEY}",
                                                "type": "invalid_request_error"}}))
    error = service_error(server.client())
    assert error.status == 401
    assert "HTTP 401: Incorrect API key provided: ***" in str(error)
    assert server.url in str(error)
    assert len(server.requests) == 1  # not retried


def test_non_json_error_body_is_quoted(server: ScriptedServer) -> None:
    server.replies.append(Reply(404, "<html>Not Found</html>"))
    assert "HTTP 404: <html>Not Found</html>" in str(service_error(server.client()))


def test_malformed_json(server: ScriptedServer) -> None:
    server.replies.append(Reply(200, '{"choices": [ oops'))
    assert "malformed JSON" in str(service_error(server.client()))


@pytest.mark.parametrize("body", [
    {"object": "chat.completion"}, {"choices": []}, [1, 2],
    {"choices": [{"message": {"role": "assistant", "content": None}}]},
])
def test_missing_choices(server: ScriptedServer, body: Any) -> None:
    server.replies.append(Reply(200, body))
    assert "without choices" in str(service_error(server.client()))


def test_timeout(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion("late"), delay_s=1.0))
    start = time.monotonic()
    error = service_error(server.client(timeout_s=0.2))
    assert "did not answer within 0.2 s" in str(error)
    assert time.monotonic() - start < 0.9  # not retried
    assert len(server.requests) == 1


# --- synthesis and the attribution check -------------------------------------------------------

def test_synthesis_sends_the_numbered_quotes(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion(
        "Students with high grades receive scholarships each semester. [1] "
        "The dean signs each scholarship decision [2].")))
    result = synthesize("Who gets a scholarship?", EN_QUOTES, server.client(), "en")
    system, example, shown, user = server.requests[0].body["messages"]
    assert system["role"] == "system" and "English" in system["content"]
    assert (example["role"], shown["role"]) == ("user", "assistant")  # one worked example
    assert shown["content"].endswith("[2]") and "[1]" in shown["content"]
    assert "2 to 4 sentences" in system["content"] and "only" in system["content"]
    assert user["role"] == "user"
    assert f"[1] {EN_QUOTES[0].text}" in user["content"]
    assert f"[2] {EN_QUOTES[1].text}" in user["content"]
    assert "Who gets a scholarship?" in user["content"]
    assert result.answer == ("Students with high grades receive scholarships each semester. [1] "
                             "The dean signs each scholarship decision. [2]")
    assert [k.cites for k in result.kept] == [(1,), (2,)]
    assert result.dropped == ()
    assert result.model == MODEL
    assert result.raw.startswith("Students with high grades")


def test_attribution_check_english(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion(
        "Scholarships go to students with high grades. [1] "
        "Scholarships are generous everywhere. "
        "The rector approves scholarship budgets [9]. "
        "The weather in spring was mild [2].")))
    result = synthesize("Who gets a scholarship?", EN_QUOTES, server.client(), "en")
    assert result.answer == "Scholarships go to students with high grades. [1]"
    assert [(d.text, d.reason) for d in result.dropped] == [
        ("Scholarships are generous everywhere.", "no citation"),
        ("The rector approves scholarship budgets [9].", "cites unknown [9]"),
        ("The weather in spring was mild [2].", "shares < 2 content words with [2]"),
    ]


def test_attribution_check_korean(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion(
        "성적이 우수한 학생은 매 학기 장학금을 받습니다.[1] "
        "장학금을 받으려면 학기마다 신청서를 학생지원처에 제출해야 합니다 [2]. "
        "장학금은 누구나 받을 수 있습니다. "
        "도서관은 밤 10시에 닫습니다 [1]. "
        "기숙사 신청은 별도입니다 [3].")))
    result = synthesize("장학금은 어떻게 받나요?", KO_QUOTES, server.client(), "ko")
    assert "Korean" in server.requests[0].body["messages"][0]["content"]
    assert result.answer == (
        "성적이 우수한 학생은 매 학기 장학금을 받습니다. [1] "
        "장학금을 받으려면 학기마다 신청서를 학생지원처에 제출해야 합니다. [2]")
    assert [d.reason for d in result.dropped] == [
        "no citation", "shares < 2 content words with [1]", "cites unknown [3]"]


def test_nothing_supported_gives_an_empty_answer(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion("I cannot tell from these sources.")))
    result = synthesize("Who gets a scholarship?", EN_QUOTES, server.client(), "en")
    assert result.answer == "" and result.kept == ()
    assert len(result.dropped) == 1


def test_no_quotes_no_call(server: ScriptedServer) -> None:
    result = synthesize("Who gets a scholarship?", [], server.client(), "en")
    assert result.answer == "" and result.raw == ""
    assert server.requests == []


def test_synthesis_lets_endpoint_errors_through(server: ScriptedServer) -> None:
    server.replies.append(Reply(401, {"error": {"message": "bad key"}}))
    with pytest.raises(ServiceError, match="bad key"):
        synthesize("Who gets a scholarship?", EN_QUOTES, server.client(), "en")


@pytest.mark.parametrize(("marks", "cites"), [
    ("[1][2]", (1, 2)), ("[1, 2]", (1, 2)), ("[1-2]", (1, 2)), ("[2] [1]", (2, 1)),
])
def test_marker_forms(marks: str, cites: tuple[int, ...]) -> None:
    kept, dropped = check_attribution(
        f"Scholarships go to students with high grades {marks}.", EN_QUOTES)
    assert dropped == []
    assert kept[0].cites == cites and kept[0].supported_by == (1,)
    assert kept[0].text == "Scholarships go to students with high grades. " + "".join(
        f"[{n}]" for n in cites)


def test_a_sentence_citing_a_real_and_an_invented_quote_is_dropped() -> None:
    kept, dropped = check_attribution(
        "Scholarships go to students with high grades [1][4].", EN_QUOTES)
    assert kept == [] and dropped[0].reason == "cites unknown [4]"


# --- concepts ----------------------------------------------------------------------------------

def test_extract_concepts(server: ScriptedServer) -> None:
    server.replies.append(Reply(body=completion(
        "Concepts:\n1. 장학금\n- 신청 방법\n장학금\n\n"
        "\"학생지원처\"\n성적 기준.\n지급 시기\n제출 서류")))
    concepts = extract_concepts("장학금 신청 방법은?", server.client())
    assert concepts == ["장학금", "신청 방법", "학생지원처", "성적 기준", "지급 시기"]
    prompt = server.requests[0].body["messages"][0]["content"]
    assert "장학금 신청 방법은?" in prompt and "one per line" in prompt


@pytest.mark.parametrize("reply", [Reply(body=completion("")), Reply(body=completion("  \n")),
                                   Reply(500, "down"), Reply(200, "not json")])
def test_extract_concepts_falls_back_to_nothing(server: ScriptedServer, reply: Reply) -> None:
    server.replies += [reply, reply]
    assert extract_concepts("How are scholarships granted?", server.client()) == []


def test_extract_concepts_with_the_server_down(free_port: Callable[[], int]) -> None:
    config = LLMConfig(url=f"http://127.0.0.1:{free_port()}", model=MODEL, api_key=KEY)
    assert extract_concepts("How are scholarships granted?", LLMClient(config)) == []
