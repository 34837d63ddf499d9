"""Traces written by concurrent searches (issue 15, item 15): no search fails because of its
trace, no trace is lost or half-written, log entries do not interleave, in threads of one
process, in several processes sharing one log folder, and over HTTP.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from excerpt.engine import Engine
from excerpt.provenance import TraceLog
from excerpt.settings import Settings
from excerpt.types import Filters

HANDBOOK = Path(__file__).resolve().parents[2] / "examples" / "handbook"
WORDS = ["snapshot", "search", "access", "ingestion", "tags", "import", "ranking", "filters"]


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The handbook, BM25 only (fast)."""
    made = tmp_path_factory.mktemp("traces") / "home"
    Engine(made, Settings()).ingest(HANDBOOK, collection="hb", embedder="none")
    return made


def searches(engine: Engine, tag: str, count: int, threads: int = 8) -> list[int]:
    def one(n: int) -> int:
        result = engine.search(f"{WORDS[n % len(WORDS)]} {tag}-{n}", Filters("hb"), mode="bm25",
                               k=3)
        return len(result.hits)

    with ThreadPoolExecutor(threads) as pool:
        return list(pool.map(one, range(count)))


def check_logs(logs: Path, questions: list[str]) -> None:
    """One valid trace file per search, a valid latest.json, one whole log entry per search."""
    traces = logs / "pipeline_traces"
    files = sorted(p for p in traces.iterdir() if p.name != "latest.json")
    assert len(files) == len(questions)
    asked = [json.loads(p.read_text("utf-8"))["stages"][0]["state_before"]["query"]
             for p in files]
    assert sorted(asked) == sorted(questions)
    assert json.loads((traces / "latest.json").read_text("utf-8"))["kind"] == "search"
    lines = (logs / TraceLog.RESULTS_LOG).read_text("utf-8").splitlines()
    headers = [i for i, line in enumerate(lines) if line.startswith("=== ")]
    assert len(headers) == len(questions)
    for i in headers:  # an entry is whole: its lines follow its header
        assert lines[i + 1].startswith("Question: ") and lines[i + 5].startswith("Observed sec")
    assert sorted(line[len("Question: "):] for line in lines
                  if line.startswith("Question: ")) == sorted(questions)


def questions(tag: str, count: int) -> list[str]:
    return [f"{WORDS[n % len(WORDS)]} {tag}-{n}" for n in range(count)]


def test_threads_tracing_at_once_lose_nothing(home: Path, tmp_path: Path) -> None:
    engine = Engine(home, Settings(log_dir=str(tmp_path / "logs")))
    assert len(searches(engine, "t", 240)) == 240  # every search returned
    check_logs(tmp_path / "logs", questions("t", 240))


PROCESS = """
import sys
from concurrent.futures import ThreadPoolExecutor
from excerpt.engine import Engine
from excerpt.settings import Settings
from excerpt.types import Filters
home, logs, tag, count, words = sys.argv[1:]
engine = Engine(home, Settings(log_dir=logs))
words = words.split(",")
def one(n):
    engine.search(f"{words[n % len(words)]} {tag}-{n}", Filters("hb"), mode="bm25", k=3)
with ThreadPoolExecutor(6) as pool:
    list(pool.map(one, range(int(count))))
"""


def test_processes_sharing_a_log_folder_lose_nothing(home: Path, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    procs = [subprocess.Popen([sys.executable, "-c", PROCESS, str(home), str(logs), tag, "80",
                               ",".join(WORDS)], stderr=subprocess.PIPE, text=True)
             for tag in ("p", "q")]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    check_logs(logs, questions("p", 80) + questions("q", 80))


def test_a_trace_that_cannot_be_written_is_logged_not_raised(
        home: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the log folder should be", "utf-8")
    engine = Engine(home, Settings(log_dir=str(blocked)))
    with caplog.at_level(logging.WARNING, logger="excerpt.provenance.trace"):
        result = engine.search("snapshot", Filters("hb"), mode="bm25", k=3)
    assert result.hits
    assert any("trace" in r.getMessage() for r in caplog.records)


def test_concurrent_requests_with_tracing_get_no_5xx(
        home: Path, tmp_path: Path,
        serving: Callable[[Any], AbstractContextManager[str]]) -> None:
    from excerpt.cli.main import cli
    from excerpt.edge.keys import KeyRing
    from excerpt.server.app import create_app

    out = CliRunner().invoke(cli, ["--home", str(home), "keys", "add", "reader", "--json"])
    assert out.exit_code == 0, out.output
    key = json.loads(out.output)["key"]
    engine = Engine(home, Settings(log_dir=str(tmp_path / "logs")))
    app = create_app(engine, KeyRing.load(home / "keys.yaml"))

    def get(url: str) -> int:
        request = urllib.request.Request(url, headers={"Authorization": f"Bearer {key}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:
                response.read()
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code

    with serving(app) as url:
        urls = [f"{url}/v1/search?q={q.replace(' ', '+')}&collection=hb&mode=bm25&k=3"
                for q in questions("h", 120)]
        with ThreadPoolExecutor(12) as pool:
            statuses = list(pool.map(get, urls))
    assert statuses == [200] * len(urls)
    check_logs(tmp_path / "logs", questions("h", 120))


def test_a_trace_the_database_refuses_is_logged_not_raised(
        pg_url: str, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """PostgreSQL keeps traces in a table too; when that insert fails (here the table is
    gone), the search still answers and the failure is a warning."""
    import psycopg

    engine = Engine(tmp_path / "scratch", Settings(log_dir=str(tmp_path / "log")),
                    store_url=pg_url)
    engine.ingest(HANDBOOK, collection="hb", embedder="none")
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("DROP TABLE traces")
    with caplog.at_level(logging.WARNING, logger="excerpt.engine"):
        result = engine.search("snapshot", Filters("hb"), mode="bm25", k=3)
    engine.close()
    assert result.hits
    assert any("trace not kept" in r.getMessage() for r in caplog.records)
    assert len(list((tmp_path / "log" / "pipeline_traces").glob("2*.json"))) == 1
