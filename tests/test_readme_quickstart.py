"""The README's Quickstart does what it says: it ingests both books before it asks about
Achilles, shows the human-readable output before any ``--json``, and its commands run.

The commands are read from the README itself (the ```bash blocks of its Quickstart section) and
run from a folder that sees the books at ``../shared/data/books``. The fast test runs them in
process (click's runner), adds ``--embedder none`` to the ingest (BM25 only: seconds instead of
a minute of embedding) and leaves out the ``eval`` lines; the slow one runs every line as
written, with the real ``excerpt`` executable in a subprocess.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.conftest import REPO, shared_data_dir

EXCERPT = Path(sys.executable).with_name("excerpt")


def quickstart_blocks() -> list[list[str]]:
    """The Quickstart's bash blocks, each a list of its command lines (comments dropped)."""
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)
    return [[line.split("  #")[0].strip() for line in block.splitlines()
             if line.strip() and not line.startswith(".")] for block in blocks]


def commands() -> list[list[str]]:
    """Every ``excerpt`` command of the Quickstart, in order, as argv lists."""
    return [shlex.split(line) for block in quickstart_blocks() for line in block
            if line.startswith("excerpt ")]


def test_both_books_are_ingested_before_the_achilles_question() -> None:
    argvs = commands()
    achilles = next(i for i, a in enumerate(argvs) if a[1] == "ask" and "Achilles" in a[2])
    ingested = [Path(arg) for a in argvs[:achilles] if a[1] == "ingest"
                for arg in a[2:] if not arg.startswith("-") and "/" in arg]
    names = {"pg174_dorian_gray.txt", "pg6130_iliad_pope.txt"}
    covered = {n for path in ingested for n in names
               if path.name == n or path.as_posix().rstrip("/").endswith("data/books")}
    assert covered == names, f"ingested before the Achilles question: {ingested}"


def test_human_readable_output_comes_before_json() -> None:
    first, *rest = quickstart_blocks()
    assert not any("--json" in line for line in first)
    assert {"ingest", "search", "ask"} <= {shlex.split(line)[1] for line in first
                                           if line.startswith("excerpt ")}
    assert any("--json" in line for block in rest for line in block)
    readme = (REPO / "README.md").read_text("utf-8")
    section = readme.split("\n## Quickstart\n", 1)[1].split("\n## ", 1)[0]
    assert section.index("```console") < section.index("--json")  # an output is shown first
    assert "make demo" in readme and "make test" in readme


def _workspace(root: Path) -> Path:
    """``root/work``, from which ``../shared/data`` is the shared data folder."""
    (root / "work").mkdir()
    (root / "shared").mkdir()
    (root / "shared" / "data").symlink_to(shared_data_dir().resolve(), target_is_directory=True)
    return root / "work"


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def _run(argv: list[str], work: Path, home: Path) -> Ran:
    """``argv`` in a subprocess, as a shell would run it."""
    env = {**os.environ, "EXCERPT_HOME": str(home)}
    env.pop("EXCERPT_SETTINGS", None)
    env.pop("EXCERPT_STORE", None)
    done = subprocess.run([str(EXCERPT), *argv[1:]], cwd=work, env=env, capture_output=True,
                          text=True, timeout=1200)
    return Ran(done.returncode, done.stdout, done.stderr)


def _run_in_process(argv: list[str], home: Path) -> Ran:
    """``argv`` through click's runner (the current folder must be the work folder)."""
    from excerpt.cli.main import cli

    done = CliRunner().invoke(cli, argv[1:], obj={"json": False},
                              env={"EXCERPT_HOME": str(home), "EXCERPT_SETTINGS": None,
                                   "EXCERPT_STORE": None})
    return Ran(done.exit_code, done.stdout, done.stderr)


def _check(argv: list[str], done: Ran) -> None:
    assert done.returncode == 0, f"{shlex.join(argv)} failed: {done.stderr}"
    if "--json" in argv:
        json.loads(done.stdout)  # exactly one JSON object
        return
    assert not done.stdout.lstrip().startswith("{"), f"{shlex.join(argv)} printed JSON"
    if argv[1] == "ingest":
        return
    assert done.stdout.strip(), f"{shlex.join(argv)} printed nothing"
    if argv[1] == "ask" and "Achilles" in argv[2]:
        cited = re.findall(r"^\[\d+\] (\S+)", done.stdout, re.M)
        assert cited and all(c.startswith("pg6130:") for c in cited), done.stdout
    elif argv[1] in ("ask", "search"):  # the Lord Henry lines: Dorian Gray
        assert "pg174:" in done.stdout and "pg6130:" not in done.stdout, done.stdout


def test_quickstart_runs_as_written_bm25_only(
        shared_data: Callable[..., Path], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    shared_data("books", "pg6130_iliad_pope.txt")
    work, home = _workspace(tmp_path), tmp_path / "home"
    monkeypatch.chdir(work)
    ran = []
    for argv in commands():
        if argv[1] == "eval":
            continue
        if argv[1] == "ingest":
            argv = [*argv, "--embedder", "none"]
        _check(argv, _run_in_process(argv, home))
        ran.append(argv[1])
    assert ran.count("ask") == 3 and "snapshots" in ran and ran[0] == "ingest"


@pytest.mark.slow
def test_quickstart_runs_every_line_as_written(
        shared_data: Callable[..., Path], tmp_path: Path) -> None:
    shared_data("scifact", "queries.jsonl")
    shared_data("books", "pg6130_iliad_pope.txt")
    work, home = _workspace(tmp_path), tmp_path / "home"
    cited: dict[str, list[str]] = {}
    for argv in commands():
        done = _run(argv, work, home)
        _check(argv, done)
        if argv[1] == "ask" and "--json" not in argv:
            cited[argv[2]] = re.findall(r"^\[\d+\] (\S+)", done.stdout, re.M)
    assert (work / "out" / "both" / "report.html").is_file()
    assert shown_citations() == cited  # the output the README shows is the output it gets


def shown_citations() -> dict[str, list[str]]:
    """Per question of the Quickstart's console block, the node ids its citations list."""
    readme = (REPO / "README.md").read_text("utf-8")
    console = readme.split("```console\n", 1)[1].split("```", 1)[0]
    shown: dict[str, list[str]] = {}
    for run in console.split("$ ")[1:]:
        command, output = run.split("\n", 1)
        shown[shlex.split(command)[2]] = re.findall(r"^\[\d+\] (\S+)", output, re.M)
    return shown
