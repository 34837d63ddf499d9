"""The memory daemon as a real process (`excerpt memory serve`) and the CLI in front of it:
same JSON as the durable store directly, parallel clients lose and reorder nothing."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli


def post(url: str, conversation: str, intent: str, data: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{url}/v1/memory/{conversation}/query",
        json.dumps({"intent": intent, "data": data}).encode(), {"Content-Type":
                                                                "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


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
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{url}/-/health", timeout=1) as response:
                    assert json.loads(response.read())["backend"] == "durable"
                    break
            except OSError:
                if process.poll() is not None:
                    pytest.fail(f"daemon exited: {process.stderr.read().decode()}")  # type: ignore[union-attr]
                time.sleep(0.1)
        else:
            pytest.fail("daemon did not start")
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
