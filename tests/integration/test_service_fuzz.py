"""schemathesis against a real `excerpt serve` and its OpenAPI document, with an admin key over
every route: no server error, every response's status, content type, headers and body as the
document says, and no route that answers without the key (issues 7 and 15). The default suite
runs a bounded number of examples; the larger run is marked slow."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from tests.http import call, wait_started

from excerpt.cli.main import cli
from excerpt.engine import Engine

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
CHECKS = ("not_a_server_error,status_code_conformance,content_type_conformance,"
          "response_headers_conformance,response_schema_conformance,ignored_auth")


@pytest.fixture
def server(tmp_path: Path, free_port: Callable[[], int]) -> Iterator[tuple[str, str, Path]]:
    """A real `excerpt serve` on a free port over the handbook, and an admin key; checks its
    log for tracebacks when it stops."""
    home = tmp_path / "home"
    Engine(home).ingest(HANDBOOK, collection="default", embedder="none")
    added = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "fuzz", "--role",
                                     "admin", "--json"])
    key = json.loads(added.output)["key"]
    port = free_port()
    process = subprocess.Popen([sys.executable, "-m", "excerpt", "--home", str(home), "serve",
                                "--port", str(port)], stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_started(url, process)
        yield url, key, tmp_path
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=10)
    assert b"Traceback" not in stderr, stderr.decode()[-3000:]


def schemathesis(url: str, key: str, folder: Path, examples: int) -> str:
    """Runs `st run` with ``examples`` per operation and phase; its output, once it passed."""
    st = Path(sys.executable).parent / "st"
    run = subprocess.run(
        [str(st), "run", f"{url}/openapi.json", "--header", f"Authorization: Bearer {key}",
         "--max-examples", str(examples), "--seed", "1", "--checks", CHECKS, "--no-color",
         "--generation-allow-x00", "true"],
        capture_output=True, text=True, timeout=1800, cwd=folder)
    assert run.returncode == 0, run.stdout[-5000:]
    cases = re.search(r"(\d+) generated, (\d+) passed", run.stdout)
    assert cases and cases[1] == cases[2], run.stdout[-3000:]
    _, document = call(f"{url}/openapi.json")
    operations = sum(len(item) for item in document["paths"].values())
    assert f"Tested: {operations}" in run.stdout  # every route of the document
    print(f"schemathesis, {examples} examples: {cases[0]}")  # shown with -rP
    return run.stdout


def test_no_server_error_and_every_response_as_documented(
        server: tuple[str, str, Path]) -> None:
    schemathesis(*server, examples=10)


@pytest.mark.slow
def test_no_server_error_and_every_response_as_documented_at_length(
        server: tuple[str, str, Path]) -> None:
    schemathesis(*server, examples=300)
