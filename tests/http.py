"""What the service tests share: one HTTP request with urllib, its status and body, and the
cast of API keys the service tests use."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
import zipfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from email.message import Message
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli

CAST: tuple[tuple[str, ...], ...] = (
    ("alice",), ("bob", "--acl-tag", "board", "--clearance", "secret"),
    ("root", "--role", "admin"), ("ivy", "--role", "ingester"), ("eve",))
"""alice reads public nodes, bob also the board's secret ones, root is an admin, ivy an
ingester, and eve's key is revoked by :func:`add_keys`."""


def error_shaped(body: Any) -> bool:
    """The service's one error shape: ``error`` and ``kind``, and ``param`` (the request's
    field at fault) only on an input error that names one."""
    return (isinstance(body, dict) and {"error", "kind"} <= set(body) <= {"error", "kind", "param"}
            and ("param" not in body or (body["kind"] == "input" and bool(body["param"]))))


def request(url: str, key: str | None = None, body: Any = None, *, method: str | None = None,
            headers: dict[str, str] | None = None) -> urllib.request.Request:
    """The request :func:`call` sends: ``body`` a dict as JSON, bytes as they are, None makes a
    GET; ``key`` as the bearer token."""
    sent = dict(headers or {})
    if key is not None:
        sent.setdefault("Authorization", f"Bearer {key}")
    data = body if isinstance(body, bytes) or body is None else json.dumps(body).encode()
    if body is not None and not isinstance(body, bytes):
        sent.setdefault("Content-Type", "application/json")
    return urllib.request.Request(url, data, sent,
                                  method=method or ("GET" if data is None else "POST"))


def exchange(sent: urllib.request.Request, timeout: float = 60) -> tuple[int, bytes, Message]:
    """Sends ``sent``: the status, the raw body and the headers (an error status too)."""
    try:
        with urllib.request.urlopen(sent, timeout=timeout) as response:
            return int(response.status), response.read(), response.headers
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), exc.headers


def call(url: str, key: str | None = None, body: Any = None, *, method: str | None = None,
         headers: dict[str, str] | None = None, timeout: float = 60) -> tuple[int, Any]:
    """One request (see :func:`request`). Returns the status and the body parsed as JSON (an
    event stream or a body that is not JSON as its text)."""
    status, raw, _ = exchange(request(url, key, body, method=method, headers=headers), timeout)
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw.decode("utf-8", "replace")


@contextmanager
def excerpt_serve(args: Sequence[str], port: int) -> Iterator[str]:
    """A real ``python -m excerpt ARGS serve --port PORT`` process (``args``: ``--home`` and
    the like); its URL once it answers; stopped when the block ends, and its log must hold no
    traceback (a request may fail, the server never)."""
    server = subprocess.Popen([sys.executable, "-m", "excerpt", *args, "serve", "--port",
                               str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_started(url, server)
        yield url
    finally:
        server.terminate()
        _, log = server.communicate(timeout=10)
    assert b"Traceback" not in log, log.decode()[-3000:]


def wait_started(url: str, process: subprocess.Popen[bytes], tries: int = 300) -> None:
    """Waits until ``url``/-/health answers; fails the test when ``process`` (its stderr a
    pipe) exits first or nothing answers within ``tries`` tenths of a second."""
    for _ in range(tries):
        try:
            urllib.request.urlopen(f"{url}/-/health", timeout=1).close()
            return
        except OSError:
            if process.poll() is not None:
                pytest.fail(f"the server exited: {process.communicate()[1].decode()[-2000:]}")
            time.sleep(0.1)
    pytest.fail("the server did not start")


def add_keys(home: Path, cast: Iterable[Sequence[str]] = CAST,
             revoke: Sequence[str] = ("eve",)) -> dict[str, str]:
    """Keys for ``cast`` (name and `keys add` options) in ``home``'s keys file; the names in
    ``revoke`` are revoked at once. Returns each name's key."""
    keys: dict[str, str] = {}
    for name, *options in cast:
        out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", name, *options,
                                       "--json"])
        assert out.exit_code == 0, out.output
        keys[name] = json.loads(out.output)["key"]
    for name in revoke:
        out = CliRunner().invoke(cli, ["--home", str(home), "keys", "revoke", name])
        assert out.exit_code == 0, out.output
    return keys


def zipped(members: Mapping[str, bytes | str], compression: int = zipfile.ZIP_STORED) -> bytes:
    """A zip archive of ``members`` (name -> content), as the upload and sync routes take."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()
