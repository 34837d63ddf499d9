"""Issue 28's breaks found through HTTP, tried again on a real ``excerpt serve`` process: no
request value becomes a server path (a sync's ``name``), no reranker a request names by path,
no body read past its route's limit. Each test failed on the main of issue 28."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.parse
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from tests.aio import run_async
from tests.http import add_keys, call, excerpt_serve, zipped
from tests.unit.rerank.tiny_cross_encoder import tiny_model, tiny_tokenizer_json

NOTES = {"river.txt": b"The river runs past the old stone mill and the willow.",
         "keys.yaml": b"keys: []\n"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, free_port: Callable[[], int]
           ) -> Iterator[tuple[str, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("edges")
    home = root / "store" / "home"
    home.mkdir(parents=True)
    keys = add_keys(home)
    model = make_cross_encoder(root)  # the operator's: named by the settings file
    settings = root / "settings.toml"
    settings.write_text(f'cross_encoder_model = "{model}"\nbody_max_kb = 64\n', "utf-8")
    with excerpt_serve(["--home", str(home), "--settings", str(settings)], free_port()) as url:
        status, body = _sync(url, keys["ivy"], zipped({"river.txt": NOTES["river.txt"]}),
                             name="field-notes")
        assert status == 200, body
        yield url, keys, home


def make_cross_encoder(folder: Path) -> Path:
    model = folder / "model" / "model.onnx"
    model.parent.mkdir()
    model.write_bytes(tiny_model())
    tiny_tokenizer_json(model.parent / "tokenizer.json")
    return model


def _sync(url: str, key: str, body: bytes, **query: str) -> tuple[int, object]:
    params = urllib.parse.urlencode({"collection": "notes", "embedder": "none", **query},
                                    doseq=True)
    return call(f"{url}/v1/sync?{params}", key, body, method="POST")


def _tree(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


@pytest.mark.parametrize("name", ["../../..", "../x", "..", "ABSOLUTE", "a/b",
                                  "a\\..\\..", "evil\x00", "new\nline", " ", "."])
def test_a_sync_name_never_becomes_a_server_path(
        served: tuple[str, dict[str, str], Path], name: str) -> None:
    url, keys, home = served
    keys_before = (home / "keys.yaml").read_bytes()
    around = home.parent.parent
    owned = around / "owned"  # ABSOLUTE: a path outside the store, absolute
    name = name.replace("ABSOLUTE", str(owned))
    before = _tree(around)
    status, body = _sync(url, keys["ivy"], zipped(NOTES), name=name)
    assert status in (400, 422), body
    assert isinstance(body, dict) and body["kind"] in ("input", "validation"), body
    assert str(home) not in json.dumps(body)
    assert (home / "keys.yaml").read_bytes() == keys_before
    after = _tree(around)
    assert {p for p in after - before if "/uploads/" not in f"/{p}/"} == set(), after - before
    assert not owned.exists()


def test_a_sync_name_is_refused_before_the_body_is_read(
        served: tuple[str, dict[str, str], Path]) -> None:
    """The refusal comes from the query string alone: a client that sends only the headers
    (a large declared body it never sends) gets its 400 at once."""
    url, keys, _ = served
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall((f"POST /v1/sync?collection=notes&name=..%2F..&embedder=none HTTP/1.1\r\n"
                      f"Host: {host}\r\nAuthorization: Bearer {keys['ivy']}\r\n"
                      "Content-Type: application/zip\r\nContent-Length: 100000\r\n\r\n"
                      ).encode())
        answer = sock.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 400"), answer[:200]


def test_a_plain_sync_name_still_syncs(served: tuple[str, dict[str, str], Path]) -> None:
    url, keys, home = served
    status, body = _sync(url, keys["ivy"], zipped(NOTES), name="field-notes")
    assert status == 200, body
    assert isinstance(body, dict) and (body["name"], body["unchanged"]) == ("field-notes", 1)
    assert body["added"] == 1  # keys.yaml: an ordinary file of the folder, inside the store
    assert list((home / "uploads").iterdir()) == []


@pytest.mark.parametrize("field", ["acl_tag", "classification"])
def test_a_blank_tag_is_refused_before_the_disk(served: tuple[str, dict[str, str], Path],
                                                field: str) -> None:
    """A blank tag was dropped: what was meant for a group became public."""
    url, keys, _ = served
    status, body = _sync(url, keys["ivy"], zipped(NOTES), name="tagged", **{field: " "})
    assert status == 400 and isinstance(body, dict) and field in body["error"], body
    status, body = call(f"{url}/v1/ingest?filename=a.txt&collection=notes&{field}=",
                        keys["ivy"], b"a lantern in the harbor", method="POST")
    assert status == 400 and isinstance(body, dict) and field in body["error"], body


PROBES = ["cross-encoder:/etc/passwd", "cross-encoder:/no/such/file.onnx",
          "cross-encoder:{model}", "CROSS-ENCODER:{model}", "{model}", "../../etc"]


def _probes(home: Path) -> list[str]:
    model = home.parent.parent / "model" / "model.onnx"
    return [p.format(model=model) for p in PROBES]


def test_a_request_never_names_a_reranker_by_path(
        served: tuple[str, dict[str, str], Path]) -> None:
    """A path from a request was probed ("is not a file" or not) and loaded by ONNX Runtime;
    now every path is refused alike, before any file is looked at."""
    url, keys, home = served
    answers = set()
    for probe in _probes(home):
        query = urllib.parse.urlencode({"q": "river", "collection": "notes", "mode": "bm25",
                                        "rerank": probe})
        status, body = call(f"{url}/v1/search?{query}", keys["alice"])
        assert status == 400 and isinstance(body, dict), body
        answers.add(body["error"].replace(probe[:80], "PATH"))
        status, body = call(f"{url}/v1/ask", keys["alice"],
                            {"question": "river?", "collection": "notes", "rerank": probe})
        assert status in (400, 422) and isinstance(body, dict), body
        answers.add(body["error"].replace(probe[:80], "PATH"))
        assert str(home.parent) not in json.dumps(body)
    assert len(answers) == 2, answers  # one text per route whatever the path: nothing probed


def test_the_operators_cross_encoder_is_chosen_by_name(
        served: tuple[str, dict[str, str], Path]) -> None:
    url, keys, _ = served
    query = urllib.parse.urlencode({"q": "river mill", "collection": "notes", "mode": "bm25",
                                    "rerank": "cross-encoder"})
    status, body = call(f"{url}/v1/search?{query}", keys["alice"])
    assert status == 200 and isinstance(body, dict), body
    assert body["hits"] and "rerank" in body["timings_ms"]


def test_mcp_never_takes_a_reranker_path(served: tuple[str, dict[str, str], Path]) -> None:
    url, keys, home = served

    async def body() -> list[str]:
        headers = {"Authorization": f"Bearer {keys['alice']}"}
        async with (create_mcp_http_client(headers=headers) as http,
                    Client(streamable_http_client(f"{url}/mcp", http_client=http)) as client):
            texts = []
            for probe in _probes(home)[:3]:
                for tool, question in (("search", "query"), ("ask", "question")):
                    result = await client.call_tool(tool, {question: "river", "rerank": probe,
                                                           "collection": "notes"})
                    assert result.is_error
                    texts.append(result.content[0].text.replace(probe[:80], "PATH"))
            return texts

    assert len(set(run_async(body))) == 1


def _raw(url: str, head: str) -> str:
    """Sends a request's head alone (its body never follows): the answer."""
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(head.replace("HOST", host).encode())
        answer = b""
        while b"\r\n\r\n" not in answer or not answer.endswith(b"}"):
            piece = sock.recv(4096)
            if not piece:
                break
            answer += piece
        return answer.decode("latin-1")


@pytest.mark.parametrize("route", ["/v1/ask", "/v1/ask/stream", "/v1/chat/completions",
                                   "/v1/memory/notes/query", "/v1/graph", "/v1/context",
                                   "/mcp"])
def test_a_declared_body_over_the_limit_is_refused_unread(
        served: tuple[str, dict[str, str], Path], route: str) -> None:
    url, keys, _ = served
    answer = _raw(url, f"POST {route} HTTP/1.1\r\nHost: HOST\r\n"
                       f"Authorization: Bearer {keys['alice']}\r\n"
                       "Content-Type: application/json\r\n"
                       "Content-Length: 400000000\r\n\r\n")
    assert answer.startswith("HTTP/1.1 413"), answer[:300]
    assert '"kind":"too_large"' in answer.replace(" ", ""), answer


def test_a_chunked_body_is_cut_off_at_the_limit(
        served: tuple[str, dict[str, str], Path]) -> None:
    """No Content-Length: the body is counted as it arrives (64 KB here, settable)."""
    url, keys, _ = served
    host, port = urllib.parse.urlsplit(url).netloc.split(":")
    piece = b'{"intent": "add", "data": {"speaker": "user", "turn": 1, "text": "' + b"a" * 8192

    def body() -> Iterator[bytes]:
        yield piece
        for _ in range(2000):  # 16 MB if nothing stopped it
            yield b"a" * 8192

    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        connection.request("POST", "/v1/memory/notes/query", body(),
                           {"Authorization": f"Bearer {keys['alice']}",
                            "Content-Type": "application/json"}, encode_chunked=True)
        response = connection.getresponse()
        status, answer = response.status, json.loads(response.read())
    except (BrokenPipeError, ConnectionResetError):  # refused while still sending: also fine
        status, answer = 413, {"kind": "too_large"}
    finally:
        connection.close()
    assert (status, answer["kind"]) == (413, "too_large"), answer
    status, hits = call(f"{url}/v1/search?q=river&collection=notes&mode=bm25", keys["alice"])
    assert status == 200 and isinstance(hits, dict) and hits["hits"], hits


def test_bodies_under_their_route_limit_still_work(
        served: tuple[str, dict[str, str], Path]) -> None:
    """The chat route has its own, larger limit (chat_body_max_kb): a 100 KB history fits."""
    url, keys, _ = served
    history = [{"role": "user", "content": "tell me about the willow " * 200},
               {"role": "assistant", "content": "The willow stands by the river. " * 100}] * 8
    body = {"model": "excerpt:notes",
            "messages": [*history, {"role": "user", "content": "What runs past the mill?"}]}
    assert len(json.dumps(body)) > 64 * 1024
    status, answer = call(f"{url}/v1/chat/completions", keys["alice"], body)
    assert status == 200, answer
    status, answer = call(f"{url}/v1/ask", keys["alice"],
                          {"question": "What runs past the mill?", "collection": "notes",
                           "mode": "bm25"})
    assert status == 200, answer


def test_stored_text_has_a_limit_on_every_interface(
        served: tuple[str, dict[str, str], Path]) -> None:
    url, keys, _ = served
    status, answer = call(f"{url}/v1/memory/notes/query", keys["alice"],
                          {"intent": "add", "data": {"speaker": "user", "turn": 1,
                                                     "text": "word " * 12_000}})
    assert status == 200, answer  # 60,000 characters: seed 002's large utterance fits
