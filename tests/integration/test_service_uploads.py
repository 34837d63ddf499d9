"""`POST /v1/ingest` (uploads) at its edges: bad file names and malformed files are 400s that
name the upload and never a server path; an upload's temporary copy lives under
``<home>/uploads`` and a server killed mid-upload has its leftovers removed on the next start
(issue 15, items 10 and 13)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.http import call, wait_started, zipped

from excerpt.cli.main import cli
from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app


def add_key(home: Path, name: str, role: str) -> str:
    out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", name, "--role", role,
                                   "--json"])
    assert out.exit_code == 0, out.output
    return str(json.loads(out.output)["key"])


def upload(url: str, key: str, name: str, data: bytes, fmt: str = "auto") -> tuple[int, Any]:
    query = urllib.parse.urlencode({"filename": name, "collection": "up", "embedder": "none",
                                    "format": fmt})
    return call(f"{url}/v1/ingest?{query}", key, data, method="POST")


@pytest.fixture(scope="module")
def uploads(tmp_path_factory: pytest.TempPathFactory,
            serving: Callable[[Any], AbstractContextManager[str]]
            ) -> Iterator[tuple[str, str, Path]]:
    home = tmp_path_factory.mktemp("uploads") / "home"
    key = add_key(home, "ivy", "ingester")
    with serving(create_app(Engine(home), KeyRing.load(home / "keys.yaml"))) as url:
        yield url, key, home


BAD_NAMES = ["a\x00b.txt", "x" * 252 + ".txt", "é" * 127 + ".txt", "a\nb.txt", "tab\there.txt",
             "dir/x.txt", "../../etc/passwd", "..\\x.txt", "..", ".", " "]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_a_file_name_that_is_not_a_plain_name_is_refused(
        uploads: tuple[str, str, Path], name: str) -> None:
    url, key, home = uploads
    status, body = upload(url, key, name, b"Kimchi is fermented cabbage.")
    assert status == 400 and set(body) == {"error", "kind"} and body["kind"] == "input", body
    assert str(home) not in body["error"] and "/tmp" not in body["error"]
    assert "filename" in body["error"]


MALFORMED = [
    ("bad.hwpx", b"garbage, not a zip", "auto"),
    ("book.hwpx", zipped({"Contents/section0.xml": b"<not xml"}), "auto"),
    ("corpus.jsonl", b"{not json\n", "auto"),
    ("corpus.jsonl", b'{"_id": 1}\n', "auto"),
    ("bundle.zip", b"PK\x03\x04 a broken zip", "code-bundle"),
    ("notes.txt", b"\xff\xfe\x00\x00" * 10, "auto"),
]


@pytest.mark.parametrize(("name", "data", "fmt"), MALFORMED,
                         ids=[f"{m[0]}-{i}" for i, m in enumerate(MALFORMED)])
def test_a_malformed_upload_is_a_400_naming_the_upload_not_a_server_path(
        uploads: tuple[str, str, Path], name: str, data: bytes, fmt: str) -> None:
    url, key, home = uploads
    status, body = upload(url, key, name, data, fmt)
    if status == 200:  # read as something (an undecodable text is skipped, reported)
        text = json.dumps(body)
    else:
        assert status == 400 and set(body) == {"error", "kind"}, body
        assert name in body["error"], body
        text = body["error"]
    assert str(home) not in text and "/tmp" not in text and "uploads/" not in text, text


def test_no_upload_leaves_a_copy_behind(uploads: tuple[str, str, Path]) -> None:
    url, key, home = uploads
    assert upload(url, key, "kept.txt", b"Kimchi is fermented cabbage.")[0] == 200
    assert upload(url, key, "bad.hwpx", b"garbage")[0] == 400
    assert upload(url, key, "empty.txt", b"")[0] == 400
    assert list((home / "uploads").iterdir()) == []


def stall_an_upload(port: int, key: str) -> socket.socket:
    """An upload that announces 10 MB and sends 64 KB of it, then waits."""
    conn = socket.create_connection(("127.0.0.1", port), timeout=10)
    conn.sendall(f"POST /v1/ingest?filename=stalled.txt&embedder=none HTTP/1.1\r\n"
                 f"Host: 127.0.0.1\r\nAuthorization: Bearer {key}\r\n"
                 f"Content-Length: {10_000_000}\r\n\r\n".encode() + b"x" * 65536)
    return conn


def start(home: Path, port: int) -> subprocess.Popen[bytes]:
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                               "--port", str(port)], stderr=subprocess.PIPE)
    wait_started(f"http://127.0.0.1:{port}", server)
    return server


def wait_for(check: Callable[[], bool], seconds: float = 15) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_server_killed_mid_upload_cleans_the_leftover_on_its_next_start(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    home = tmp_path / "home"
    key = add_key(home, "ivy", "ingester")
    port = free_port()
    server = start(home, port)
    conn = stall_an_upload(port, key)
    try:
        assert wait_for(lambda: any(p.stat().st_size for p in home.glob("uploads/*/stalled.txt")))
        os.kill(server.pid, signal.SIGKILL)
        server.wait(timeout=10)
    finally:
        conn.close()
        if server.poll() is None:
            server.kill()
        server.communicate(timeout=10)
    assert list(home.glob("uploads/*/stalled.txt"))  # the kill left the partial copy
    server = start(home, port)
    try:
        assert list((home / "uploads").iterdir()) == []  # removed by the restart
    finally:
        server.terminate()
        _, log = server.communicate(timeout=10)
    assert b"Traceback" not in log
