"""The memory daemon as a real process (`excerpt memory serve`) and the CLI in front of it:
same JSON as the durable store directly, parallel clients lose and reorder nothing, only
loopback Host names are served (DNS rebinding), and every error has one shape."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from tests.http import call, wait_started

from excerpt.cli.main import cli


def post(url: str, conversation: str, intent: str, data: dict[str, Any]) -> tuple[int, Any]:
    return call(f"{url}/v1/memory/{conversation}/query", None,
                {"intent": intent, "data": data}, timeout=30)


@pytest.fixture(scope="module")
def daemon(tmp_path_factory: pytest.TempPathFactory,
           free_port: Callable[[], int]) -> Iterator[tuple[str, Path]]:
    home = tmp_path_factory.mktemp("memory") / "home"
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "excerpt", "--home", str(home), "memory", "serve",
         "--port", str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_started(url, process)
        assert call(f"{url}/-/health")[1]["backend"] == "durable"
        yield url, home
    finally:
        process.terminate()
        process.wait(timeout=10)


def cli_json(*args: str) -> tuple[int, Any]:
    result = CliRunner().invoke(cli, [*args, "--json"])
    return result.exit_code, json.loads(result.output) if result.output.strip() else None


def test_the_cli_through_the_daemon_prints_the_contracts_json(
        daemon: tuple[str, Path], tmp_path: Path) -> None:
    url, _ = daemon
    code, added = cli_json("--home", str(tmp_path / "h"), "memory", "--daemon", url, "trip",
                           "add", "--speaker", "user", "--turn", "1", "A hotel in Busan?")
    assert code == 0 and added["utterances"][0]["utterance_index"] == 0
    code, found = cli_json("--home", str(tmp_path / "h"), "memory", "trip", "--daemon", url,
                           "search", "hotel Busan")
    assert code == 0 and found["utterances"][0]["text"] == "A hotel in Busan?"
    assert "relevance_score" in found["utterances"][0]
    code, stats = cli_json("--home", str(tmp_path / "h"), "memory", "--daemon", url, "trip",
                           "stats")
    assert stats["utterances"] == 1
    assert not (tmp_path / "h" / "memory.db").exists()  # nothing written locally


def test_parallel_clients_lose_and_reorder_nothing(daemon: tuple[str, Path]) -> None:
    url, _ = daemon
    assert post(url, "busy", "config", {"buffer_size": 500})[0] == 200
    acknowledged: dict[int, list[int]] = {c: [] for c in range(4)}

    def client(c: int) -> None:
        for i in range(25):
            status, body = post(url, "busy", "add", {"speaker": "user", "turn": c,
                                                     "text": f"client {c} message {i}"})
            assert status == 200
            acknowledged[c].append(body["utterances"][0]["utterance_index"])

    threads = [threading.Thread(target=client, args=(c,)) for c in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    _, read = post(url, "busy", "read", {})
    stored = read["utterances"]
    assert [u["utterance_index"] for u in stored] == list(range(100))
    for c in range(4):
        mine = [u["text"] for u in stored if u["turn_number"] == c]
        assert mine == [f"client {c} message {i}" for i in range(25)]  # in the client's order
        assert acknowledged[c] == sorted(acknowledged[c])


def test_bad_requests_get_a_json_error(daemon: tuple[str, Path]) -> None:
    url, _ = daemon
    status, body = post(url, "trip", "teleport", {})
    assert status == 400 and "unknown intent" in body["error"] and body["kind"] == "input"
    status, body = post(url, "trip", "add", {"speaker": "robot", "turn": 1, "text": "x"})
    assert status == 400 and body["kind"] == "input"
    status, body = post(url, "trip", "last", {"n": "many"})
    assert status == 400 and "'n'" in body["error"]


def test_the_durable_store_directly_and_a_daemon_that_is_down(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    home = str(tmp_path / "home")
    for turn, text in enumerate(["First we fly to Seoul.", "Then the train to Busan.",
                                 "Finally a ferry to Jeju."], start=1):
        code, _ = cli_json("--home", home, "memory", "trip", "add", "--speaker", "user",
                           "--turn", str(turn), text)
        assert code == 0
    assert cli_json("--home", home, "memory", "trip", "config", "--buffer-size", "2")[0] == 0
    _, last = cli_json("--home", home, "memory", "trip", "last", "5")
    assert [u["text"] for u in last["utterances"]] == ["Then the train to Busan.",
                                                       "Finally a ferry to Jeju."]
    _, summary = cli_json("--home", home, "memory", "trip", "summary")
    assert "Seoul" in summary["summary"] and summary["token_count"] > 0
    _, deleted = cli_json("--home", home, "memory", "trip", "delete", "2")
    assert deleted == {"deleted": True, "utterance_index": 2}
    _, empty = cli_json("--home", home, "memory", "nobody", "read")
    assert empty == {"utterances": []}
    down = CliRunner().invoke(cli, ["--home", home, "memory", "--daemon",
                                    f"http://127.0.0.1:{free_port()}", "trip", "read"])
    assert down.exit_code == 1 and "cannot be reached" in down.output
    assert CliRunner().invoke(cli, ["--home", home, "memory", "read"]).exit_code == 2


def raw(url: str, method: str, path: str, body: bytes | None = None,
        host: str | None = "localhost") -> tuple[int, Any]:
    """One request with the Host header as given (None: no Host header at all)."""
    port = int(url.rsplit(":", 1)[1])
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        if host is not None:
            conn.putheader("Host", host)
        if body is not None:
            conn.putheader("Content-Type", "application/json")
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        payload = response.read()
        if not (response.getheader("Content-Type") or "").startswith("application/json"):
            return response.status, payload.decode("utf-8", "replace")
        return response.status, json.loads(payload)
    finally:
        conn.close()


def test_only_loopback_host_names_are_served(daemon: tuple[str, Path]) -> None:
    """A page that rebinds its own name to 127.0.0.1 still sends that name as Host."""
    url, _ = daemon
    port = url.rsplit(":", 1)[1]
    for host in ("localhost", f"localhost:{port}", "127.0.0.1", f"127.0.0.1:{port}",
                 f"[::1]:{port}", "[::1]", "LocalHost"):
        assert raw(url, "GET", "/-/health", host=host)[0] == 200, host
    add = json.dumps({"intent": "add", "data": {"speaker": "user", "turn": 1,
                                                "text": "rebound"}}).encode()
    for host in ("evil.example", f"evil.example:{port}", "127.0.0.1.evil.example",
                 f"localhost.evil.example:{port}", "localhost@evil.example", "[::1", ""):
        for method, path, body in (("GET", "/-/health", None),
                                   ("POST", "/v1/memory/rebind/query", add)):
            status, answer = raw(url, method, path, body, host=host)
            assert status == 400 and answer["kind"] == "host", (host, answer)
            assert set(answer) == {"error", "kind"}
    # No Host at all: uvicorn refuses the HTTP/1.1 request itself (400, before the app).
    assert raw(url, "POST", "/v1/memory/rebind/query", add, host=None)[0] == 400
    assert post(url, "rebind", "read", {}) == (200, {"utterances": []})  # nothing was added


def test_every_error_has_one_shape(daemon: tuple[str, Path]) -> None:
    url, _ = daemon
    cases = [
        ("GET", "/nowhere", None, 404),
        ("GET", "/v1/memory/trip/query", None, 405),
        ("DELETE", "/-/health", None, 405),
        ("POST", "/v1/memory/trip/query", b"{not json", 400),
        ("POST", "/v1/memory/trip/query", b"[1, 2]", 400),
        ("POST", "/v1/memory/trip/query", b"", 400),
        ("POST", "/v1/memory/trip/query", b'{"data": {}}', 400),
        ("POST", "/v1/memory/trip/query", b'{"intent": "read", "data": [1]}', 400),
        ("POST", "/v1/memory/trip/query", b'{"intent": 7}', 400),
    ]
    for method, path, body, expected in cases:
        status, answer = raw(url, method, path, body)
        assert status == expected, (method, path, body, answer)
        assert set(answer) == {"error", "kind"} and answer["error"], answer
    status, answer = raw(url, "POST", "/v1/memory/trip/query", b'{"data": {}}')
    assert "intent" in answer["error"] and answer["kind"] == "input"


def test_the_openapi_document_lists_the_errors(daemon: tuple[str, Path]) -> None:
    url, _ = daemon
    status, doc = raw(url, "GET", "/openapi.json")
    assert status == 200
    query = doc["paths"]["/v1/memory/{conversation}/query"]["post"]["responses"]
    assert {"200", "400", "404", "500"} <= set(query) and "422" not in query
    assert "400" in doc["paths"]["/-/health"]["get"]["responses"]  # a foreign Host
    error = doc["components"]["schemas"]["Error"]
    assert set(error["properties"]) == {"error", "kind"}
    assert "requestBody" in doc["paths"]["/v1/memory/{conversation}/query"]["post"]
    assert raw(url, "GET", "/docs")[0] == 404  # no page that loads assets from a CDN


def test_a_store_failure_is_a_500_in_the_one_shape(tmp_path: Path) -> None:
    from fastapi.testclient import TestClient

    from excerpt.memory import MemoryStore, SQLiteBackend
    from excerpt.server.memory_api import create_memory_app

    backend = SQLiteBackend.at_home(tmp_path)
    app = create_memory_app(MemoryStore(backend, embedder=None), "durable")
    client = TestClient(app, base_url="http://localhost", raise_server_exceptions=False)
    assert client.post("/v1/memory/t/query", json={"intent": "read"}).status_code == 200
    backend.close()  # the store is gone from under the daemon
    answer = client.post("/v1/memory/t/query", json={"intent": "read"})
    assert answer.status_code == 500 and answer.json()["kind"] == "store"
    assert str(tmp_path) not in answer.text  # the log names the file, the caller learns none
    bad = client.post("/v1/memory/t/query", content=b"{oops",
                      headers={"Content-Type": "application/json"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("the body is not valid JSON")


def test_host_names_as_the_daemon_compares_them() -> None:
    from excerpt.server.memory_api import allowed_hosts, host_name

    assert host_name("LocalHost:8765") == "localhost" and host_name("[::1]:80") == "[::1]"
    for malformed in ("localhost:80x", "[::1", "[::1]x", "a:b:c", ""):
        assert host_name(malformed) == "", malformed
    assert allowed_hosts() == {"localhost", "127.0.0.1", "[::1]"}
    assert allowed_hosts("::1") == {"localhost", "127.0.0.1", "[::1]"}
    assert {"10.0.0.5", "memory.lan"} <= allowed_hosts("10.0.0.5", ["memory.lan:8765"])
