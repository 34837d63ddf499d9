"""Issue 28's breaks found through HTTP, tried again on a real ``excerpt serve`` process: no
request value becomes a server path (a sync's ``name``), no reranker a request names by path,
no body read past its route's limit. Each test failed on the main of issue 28."""

from __future__ import annotations

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
    settings.write_text(f'cross_encoder_model = "{model}"\n', "utf-8")
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


@pytest.mark.parametrize("name", ["../../..", "../x", "..", "/tmp/excerpt-owned", "a/b",
                                  "a\\..\\..", "evil\x00", "new\nline", " ", "."])
def test_a_sync_name_never_becomes_a_server_path(
        served: tuple[str, dict[str, str], Path], name: str) -> None:
    url, keys, home = served
    keys_before = (home / "keys.yaml").read_bytes()
    around = home.parent.parent
    before = _tree(around)
    status, body = _sync(url, keys["ivy"], zipped(NOTES), name=name)
    assert status in (400, 422), body
    assert isinstance(body, dict) and body["kind"] in ("input", "validation"), body
    assert str(home) not in json.dumps(body)
    assert (home / "keys.yaml").read_bytes() == keys_before
    after = _tree(around)
    assert {p for p in after - before if "/uploads/" not in f"/{p}/"} == set(), after - before
    assert not Path("/tmp/excerpt-owned").exists()


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
