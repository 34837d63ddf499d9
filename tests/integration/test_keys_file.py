"""The keys file under a running `excerpt serve` and under concurrent `excerpt keys` commands:
a keys file the server cannot read makes every key invalid (and says so only in the server's
log), and parallel writers lose no key change (issue 15, items 6 and 7)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from tests.http import call

from excerpt.cli.main import cli

SECRET_LINE = "# the vault combination is 0451"
BROKEN_YAML = f"keys:\n  - name: alice\n    sha256: [unclosed\n{SECRET_LINE}\n"


def excerpt(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def add_key(home: Path, name: str, *args: str) -> str:
    out, _ = excerpt(home, "keys", "add", name, "--json", *args).communicate(timeout=60)
    return str(json.loads(out)["key"])


def get(url: str, key: str | None) -> tuple[int, Any]:
    return call(url, key or None, timeout=10)


def wait_healthy(url: str, server: subprocess.Popen[str]) -> None:
    for _ in range(300):
        if server.poll() is not None:
            raise RuntimeError(f"the server ended: {server.communicate()[1][-2000:]}")
        try:
            urllib.request.urlopen(f"{url}/-/health", timeout=1).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError("the server did not start")


def rewrite(path: Path, text: str) -> None:
    """Write and move the mtime on, so that a reload is due even within one clock tick."""
    path.write_text(text, "utf-8")
    later = path.stat().st_mtime + 5
    os.utime(path, (later, later))


@dataclass
class Served:
    url: str
    keys_file: Path
    key: str
    server: subprocess.Popen[str]

    def stop(self) -> str:
        """Stops the server; its log (stderr)."""
        if self.server.poll() is None:
            self.server.terminate()
        return self.server.communicate(timeout=10)[1]


@pytest.fixture
def served(tmp_path: Path, free_port: Callable[[], int]) -> Iterator[Served]:
    home = tmp_path / "home"
    key = add_key(home, "alice")
    port = free_port()
    server = excerpt(home, "serve", "--port", str(port))
    try:
        wait_healthy(f"http://127.0.0.1:{port}", server)
        yield Served(f"http://127.0.0.1:{port}", home / "keys.yaml", key, server)
    finally:
        if server.poll() is None:
            server.terminate()
            server.communicate(timeout=10)


def refused_without_leak(served: Served, key: str | None) -> None:
    status, body = get(f"{served.url}/-/version", key)
    assert status == 503 and set(body) == {"error", "kind"}, (status, body)
    assert body["kind"] == "unavailable"
    text = json.dumps(body)
    assert str(served.keys_file.parent) not in text and "keys.yaml" not in text
    assert "0451" not in text and "unclosed" not in text


def test_a_keys_file_broken_while_serving_makes_no_key_valid_and_leaks_nothing(
        served: Served) -> None:
    good = served.keys_file.read_text("utf-8")
    assert get(f"{served.url}/-/version", served.key)[0] == 200
    rewrite(served.keys_file, BROKEN_YAML)
    for caller in (None, "exk_wrong", served.key):
        refused_without_leak(served, caller)
    rewrite(served.keys_file, good)
    assert get(f"{served.url}/-/version", served.key)[0] == 200  # repaired: served again
    rewrite(served.keys_file, "keys:\n  - name: alice\n    role: wizard\n    sha256: ab\n")
    refused_without_leak(served, served.key)  # valid YAML, but not a keys file
    rewrite(served.keys_file, good)
    assert get(f"{served.url}/-/version", served.key)[0] == 200
    log = served.stop()
    assert "not valid YAML" in log and "unknown role" in log and "Traceback" not in log


def test_a_keys_file_deleted_while_serving_makes_no_key_valid(served: Served) -> None:
    good = served.keys_file.read_text("utf-8")
    served.keys_file.unlink()
    refused_without_leak(served, served.key)
    refused_without_leak(served, served.key)
    rewrite(served.keys_file, good)
    assert get(f"{served.url}/-/version", served.key)[0] == 200
    log = served.stop()
    assert log.count("no API key is valid") == 1  # said once, when the file went
    assert "does not exist" in log and "Traceback" not in log


def test_serve_refuses_to_start_with_a_broken_keys_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "keys.yaml").write_text(BROKEN_YAML, "utf-8")
    proc = excerpt(home, "serve", "--port", "1")  # one real process; the rest in-process
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 1 and "Traceback" not in err
    assert "keys.yaml" in err and "not valid YAML" in err
    for text in ("keys: {alice: 1}\n", "- alice\n", "keys:\n  - {name: a, sha256: b, "
                 "acl_tags: 7}\n", "keys:\n  - {name: a, sha256: b, revokd: true}\n",
                 "\xff\xfe"):
        (home / "keys.yaml").write_bytes(text.encode("latin-1"))
        result = CliRunner().invoke(cli, ["--home", str(home), "serve", "--port", "1"])
        assert result.exit_code == 1, (text, result.output)
        assert not isinstance(result.exception, Exception), (text, result.exception)
        assert "keys.yaml" in result.output, text


def test_parallel_key_writers_lose_no_change(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for name in ("old0", "old1", "old2", "old3"):
        assert CliRunner().invoke(cli, ["--home", str(home), "keys", "add", name]).exit_code == 0
    writers = [excerpt(home, "keys", "add", f"new{i}", "--json") for i in range(6)]
    writers += [excerpt(home, "keys", "revoke", f"old{i}", "--json") for i in range(3)]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err
    keys_file = home / "keys.yaml"
    entries = {e["name"]: e for e in yaml.safe_load(keys_file.read_text("utf-8"))["keys"]}
    assert {f"new{i}" for i in range(6)} <= set(entries)
    assert not any(entries[f"new{i}"]["revoked"] for i in range(6))
    assert all(entries[f"old{i}"]["revoked"] for i in range(3)) and not entries["old3"]["revoked"]
    assert keys_file.stat().st_mode & 0o777 == 0o600
    assert sorted(p.name for p in home.iterdir() if "keys" in p.name) == [
        "keys.yaml", "keys.yaml.lock"]  # no temporary file left behind
