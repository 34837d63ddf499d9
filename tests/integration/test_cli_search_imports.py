"""A cold `excerpt search` imports only what a search runs (issue 20, item 4: cold start).

Every module a one-off search process imports is paid for before the first result; the
composer (numpy-heavy extraction), the ingestion pipeline, sync, the graph and context stages,
memory backends and rich's progress bars are not used by a search, so a fresh process that
searches through the CLI entry point must end without them in ``sys.modules``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from excerpt.engine import Engine

NOT_FOR_SEARCH = (
    "excerpt.compose.ask",
    "excerpt.compose.composer",
    "excerpt.compose.extract",
    "excerpt.ingest.pipeline",
    "excerpt.sync",
    "excerpt.memory.backends",
    "excerpt.context.fetch",
    "excerpt.rerank",
    "excerpt.cli.eval_cmd",
    "excerpt.cli.serve_cmd",
    "excerpt.cli.memory_cmd",
    "excerpt.cli.ask_cmd",
    "rich.progress",
    "rich.console",
    "psutil",
)

PROBE = """
import json, sys
from excerpt.cli.main import main
sys.argv = ["excerpt", *sys.argv[1:]]
try:
    main()
except SystemExit as done:
    code = done.code
else:
    code = 0
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}), file=sys.stderr)
"""


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("search_imports")
    doc = root / "notes.md"
    doc.write_text("# Snapshots\n\nA snapshot is published in one transaction.\n\n"
                   "# Imports\n\nAn import reads the files and segments them.\n")
    engine = Engine(root / "home")
    engine.ingest(doc, collection="notes", embedder="none")
    engine.close()
    return root / "home"


def run_search(home: Path, *flags: str) -> tuple[str, set[str]]:
    """A fresh process's `excerpt search` (``flags`` added): its stdout and the modules it
    imported."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, "--home", str(home), "search", "snapshot published",
         "--collection", "notes", "--mode", "bm25", *flags],
        capture_output=True, text=True, timeout=120, check=False)
    report = json.loads(done.stderr.strip().splitlines()[-1])
    assert report["exit"] == 0, done.stderr
    return done.stdout, set(report["modules"])


def test_a_search_imports_none_of_the_heavy_modules(home: Path) -> None:
    out, modules = run_search(home, "--json")
    result = json.loads(out)
    assert result["hits"], result  # the search ran and found the paragraph
    assert "excerpt.engine" in modules and "click" in modules
    assert sorted(m for m in NOT_FOR_SEARCH if m in modules) == []


def test_a_human_search_needs_no_rich_either(home: Path) -> None:
    out, modules = run_search(home)
    assert "snapshot" in out.lower()
    assert not [m for m in modules if m == "rich" or m.startswith("rich.")]
    assert not set(NOT_FOR_SEARCH) & set(modules)
