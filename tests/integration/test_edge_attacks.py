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
from tests.http import add_keys, call, excerpt_serve, zipped

NOTES = {"river.txt": b"The river runs past the old stone mill and the willow.",
         "keys.yaml": b"keys: []\n"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory, free_port: Callable[[], int]
           ) -> Iterator[tuple[str, dict[str, str], Path]]:
    root = tmp_path_factory.mktemp("edges")
    home = root / "store" / "home"
    home.mkdir(parents=True)
    keys = add_keys(home)
    with excerpt_serve(["--home", str(home)], free_port()) as url:
        yield url, keys, home


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
    assert isinstance(body, dict) and (body["name"], body["added"]) == ("field-notes", 2)
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
