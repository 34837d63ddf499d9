"""tools/run_retrieval_integration_tests.sh: builds an isolated store, runs, logs, tears down."""

from __future__ import annotations

import os
import re
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "run_retrieval_integration_tests.sh"


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=REPO, text=True,
                          capture_output=True, env={**os.environ, **env}, timeout=600)


def leftovers(tmp: Path) -> list[Path]:
    return list(tmp.glob("excerpt-integration.*"))


def test_runner_imports_runs_logs_and_cleans_up(shared_data: Callable[..., Path],
                                               tmp_path: Path) -> None:
    shared_data("fake_enterprise")
    logs = tmp_path / "logs"
    done = run({"INTEGRATION_LOG_DIR": str(logs), "TMPDIR": str(tmp_path)},
               "-k", "retrieval_case or test_b1 or test_b2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "set Fake_snapshot: fdb0d25c05c0b1647d4954a0f1850aff13570970, " in done.stdout
    # 17 in process, and the 15 retrieval cases again over HTTP against the runner's server
    assert "32 passed" in done.stdout
    assert 'name="test_http_retrieval_case[3.5]"' in (logs / "junit.xml").read_text()
    pid = int(re.search(r"service: http://127\.0\.0\.1:\d+ \(pid (\d+)\)", done.stdout)[1])
    assert not Path(f"/proc/{pid}").exists()  # the server was stopped
    assert (logs / "serve.log").read_text().startswith("excerpt on http://127.0.0.1:")
    assert (logs / "pipeline_traces" / "latest.json").is_file()
    # each retrieval case's question logged twice: by the in-process engine and by the server
    assert (logs / "test_results_latest.log").read_text().count("Question:") == 30
    assert leftovers(tmp_path) == []


def test_runner_fails_cleanly_on_a_broken_bundle(tmp_path: Path) -> None:
    broken = tmp_path / "Release_BROKEN.zip"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("Release_BROKEN/repo_meta.json", "{not json")
    done = run({"INTEGRATION_BUNDLE_GLOB": str(broken), "TMPDIR": str(tmp_path),
                "INTEGRATION_LOG_DIR": str(tmp_path / "logs")})
    assert done.returncode != 0
    assert "repo_meta.json" in done.stderr
    assert leftovers(tmp_path) == []
