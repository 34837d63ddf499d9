"""schemathesis against `excerpt serve`'s OpenAPI document: generated requests on every route,
no server error and no response that breaks its schema (issue 7)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"


def test_no_server_error_and_every_response_in_its_schema(
        tmp_path: Path, free_port: Callable[[], int]) -> None:
    home = tmp_path / "home"
    Engine(home).ingest(HANDBOOK, collection="default", embedder="none")
    added = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "fuzz", "--role",
                                     "admin", "--json"])
    key = json.loads(added.output)["key"]
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                               "--port", str(port)], stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                urllib.request.urlopen(f"{url}/-/health", timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        st = Path(sys.executable).parent / "st"
        run = subprocess.run(
            [str(st), "run", f"{url}/openapi.json", "--header", f"Authorization: Bearer {key}",
             "--max-examples", "10", "--seed", "1", "--checks",
             "not_a_server_error,response_schema_conformance"],
            capture_output=True, text=True, timeout=600, cwd=tmp_path)
        assert run.returncode == 0, run.stdout[-3000:]
        assert "passed" in run.stdout
    finally:
        server.terminate()
        _, stderr = server.communicate(timeout=10)
    assert b"Traceback" not in stderr, stderr.decode()[-3000:]
