"""SIGKILL an `excerpt sync` at random moments: no partial snapshot is ever left, the store
opens consistent, and the next sync completes the folder (each file imported exactly once
more at most, nothing imported twice, nothing missing)."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.store.sqlite import SQLiteStore
from excerpt.sync import SyncOptions

WORDS = ["river", "stone", "lantern", "harbor", "meadow", "copper", "violet", "thunder",
         "orchard", "signal", "quiet", "ember", "falcon", "marble", "willow", "canyon"]
FILES = 60

# `excerpt sync` whether or not cli/main.py imports the command module yet
RUN = "from excerpt.cli import sync_cmd; from excerpt.cli.main import main; main()"


def write_folder(folder: Path, files: int, seed: int) -> None:
    rng = random.Random(seed)
    for i in range(files):
        path = folder / f"part{i % 4}" / f"doc{i:04d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        paragraphs = [" ".join(rng.choices(WORDS, k=50)) + "." for _ in range(3)]
        path.write_text("\n\n".join(paragraphs), encoding="utf-8")


def sync_cmd(home: Path, folder: Path) -> list[str]:
    return [sys.executable, "-c", RUN, "--home", str(home), "sync", str(folder),
            "--collection", "docs", "--embedder", "none", "--no-progress", "--json"]


def check_consistent(home: Path) -> None:
    """Every run ended, every snapshot whole (catalogue, nodes and segment agree), no
    leftover folder, and each live source's latest snapshot holds exactly its file."""
    store = SQLiteStore(home)  # recovery runs here
    try:
        runs = store.runs()
        assert all(r.status in ("completed", "abandoned", "failed") for r in runs)
        snaps = store.snapshots()
        assert {r.snapshot_id for r in runs if r.status == "completed"} == {
            s.snapshot_id for s in snaps}
        for s in snaps:  # its rows, in its own segment or a merged one
            seg = store.segment(s.snapshot_id)
            first, rows = seg.member_range(s.snapshot_id)
            stored = store.nodes_by_ordinal(s.snapshot_id, list(range(s.nodes)))
            assert rows == s.nodes and [n.id for n in stored] == seg.ids[first:first + rows]
        published = set(store._folders().values()) | store.kept_folders()
        assert [p.name for p in store.segments_dir.iterdir() if p.name not in published] == []
        states = store.source_states("docs") if "docs" in store.collections() else {}
        assert all(state.content_hash for state in states.values())
    finally:
        store.close()


def run_to_end(home: Path, folder: Path) -> dict[str, int]:
    out = subprocess.run(sync_cmd(home, folder), capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def kill_after(home: Path, folder: Path, delay: float) -> None:
    proc = subprocess.Popen(sync_cmd(home, folder), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONHASHSEED": "0"})
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def kill_when_published(home: Path, folder: Path, snapshots: int) -> None:
    """SIGKILL the sync as soon as ``snapshots`` files are published: surely mid-pass."""
    proc = subprocess.Popen(sync_cmd(home, folder), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if _published(home) >= snapshots:
                break
            time.sleep(0.005)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()


def _published(home: Path) -> int:
    if not (home / "excerpt.db").exists():
        return 0
    try:
        with sqlite3.connect(f"file:{home / 'excerpt.db'}?mode=ro", uri=True) as conn:
            return int(conn.execute("SELECT count(*) FROM snapshots").fetchone()[0])
    except sqlite3.Error:  # not migrated yet
        return 0


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_folder(tmp_path / "notes", FILES, seed=3)
    return tmp_path / "notes"


def kills_then_resync(tmp_path: Path, folder: Path, kills: int, seed: int) -> None:
    started = time.perf_counter()
    assert run_to_end(tmp_path / "probe", folder)["added"] == FILES
    span = time.perf_counter() - started
    rng = random.Random(seed)
    for attempt, delay in enumerate(sorted(rng.uniform(0.3, span) for _ in range(kills))):
        home = tmp_path / f"home{attempt}"
        kill_after(home, folder, delay)
        check_consistent(home)
        before = run_to_end(home, folder)
        assert before["failed"] == 0 and before["added"] + before["unchanged"] == FILES
        assert before["changed"] == 0  # nothing half-imported needed redoing
        check_consistent(home)
        engine = Engine(home)
        latest = engine.store.latest_snapshots("docs")
        assert len(latest) == len({s.source for s in latest}) == FILES
        again = engine.sync(folder, SyncOptions(collection="docs", embedder="none"))
        assert (again.unchanged, again.added, again.changed) == (FILES, [], [])
        engine.close()


def test_sigkill_mid_sync_then_a_second_sync_completes(tmp_path: Path, folder: Path) -> None:
    home = tmp_path / "home"
    kill_when_published(home, folder, FILES // 3)
    check_consistent(home)
    second = run_to_end(home, folder)
    assert second["unchanged"] >= FILES // 3 and second["added"] > 0  # killed mid-pass
    assert (second["added"] + second["unchanged"], second["changed"], second["failed"]) == (
        FILES, 0, 0)
    check_consistent(home)
    assert len(SQLiteStore(home).source_states("docs")) == FILES


@pytest.mark.slow
def test_sigkill_at_many_moments(tmp_path: Path, folder: Path) -> None:
    kills_then_resync(tmp_path, folder, kills=10, seed=13)


@pytest.mark.slow
def test_sigkill_while_retiring_leaves_all_or_nothing(tmp_path: Path, folder: Path) -> None:
    home = tmp_path / "home"
    run_to_end(home, folder)
    for path in sorted(folder.rglob("*.txt"))[: FILES // 2]:
        path.unlink()
    kill_after(home, folder, 1.2)  # about when the pass retires the deleted files
    check_consistent(home)
    store = SQLiteStore(home)
    retired = len(store.retired_sources("docs"))
    store.close()
    assert retired in (0, FILES // 2)  # one transaction: all of them or none
    result = run_to_end(home, folder)
    assert result["deleted"] == FILES // 2 - retired
    assert result["unchanged"] == FILES - FILES // 2
