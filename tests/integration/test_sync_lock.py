"""One sync per collection at a time (store/locks.py, issue 30 item 3), on both stores: a
second sync fails at once naming the holder (or waits for it, told whom for), other
collections are not held up, a killed holder leaves no lock, and two CLI syncs of one folder
started together import every file once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.conformance.view_helpers import open_store

from excerpt.engine import Engine
from excerpt.errors import BusyError
from excerpt.sync import SyncOptions

OPTIONS = SyncOptions(collection="docs", embedder="none", wait=False)


def folder_of(tmp_path: Path, files: int = 3) -> Path:
    folder = tmp_path / "notes"
    folder.mkdir(exist_ok=True)
    for i in range(files):
        (folder / f"n{i:04d}.txt").write_text(f"The lantern {i} burns by the river.", "utf-8")
    return folder


def engine_on(where: tuple[str, str], tmp_path: Path, name: str) -> Engine:
    return Engine(tmp_path / name, store=open_store(*where, tmp_path / f"scratch-{name}"))


def test_a_second_sync_fails_at_once_naming_the_holder_and_others_go_on(
        where: tuple[str, str], tmp_path: Path) -> None:
    folder = folder_of(tmp_path)
    holder, second = engine_on(where, tmp_path, "a"), engine_on(where, tmp_path, "b")
    with holder.store.sync_lock("docs", wait=False):
        with pytest.raises(BusyError) as caught:
            second.sync(folder, OPTIONS)
        message = str(caught.value)
        assert "a sync of collection 'docs' is already running" in message
        assert (f"process {os.getpid()}" in message if where[0] == "sqlite"
                else "PostgreSQL session" in message), message
        assert second.store.snapshots("docs") == []  # nothing imported meanwhile
        other = SyncOptions(collection="other", embedder="none", wait=False)
        assert second.sync(folder, other).to_json()["added"] == 3  # not held up
    assert second.sync(folder, OPTIONS).to_json()["added"] == 3  # released


def test_a_waiting_sync_is_told_whom_it_waits_for_and_runs_when_the_holder_ends(
        where: tuple[str, str], tmp_path: Path) -> None:
    folder = folder_of(tmp_path)
    holder, second = engine_on(where, tmp_path, "a"), engine_on(where, tmp_path, "b")
    told: list[str] = []
    asked = threading.Event()
    results: list[int] = []

    def on_wait(message: str) -> None:
        told.append(message)
        asked.set()

    def run() -> None:
        waiting = SyncOptions(collection="docs", embedder="none")
        results.append(second.sync(folder, waiting, on_wait=on_wait).to_json()["added"])

    with holder.store.sync_lock("docs", wait=False):
        thread = threading.Thread(target=run)
        thread.start()
        assert asked.wait(30), "the second sync was not told it waits"
        assert results == []  # still waiting while the lock is held
    thread.join(60)
    assert results == [3] and len(told) == 1
    assert told[0].startswith("waiting for a sync of collection 'docs' to end (")


HOLD = """
import sys, time
from pathlib import Path
from tests.conformance.view_helpers import open_store
store = open_store(sys.argv[1], sys.argv[2], Path(sys.argv[3]))
with store.sync_lock("docs", wait=False):
    print("held", flush=True)
    time.sleep(120)
"""


def test_a_killed_holder_leaves_no_lock(where: tuple[str, str], tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, *where, str(tmp_path / "s")],
                            stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2])
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
        store = open_store(*where, tmp_path / "scratch")
        with (pytest.raises(BusyError, match=f"process {proc.pid}|PostgreSQL session"),
              store.sync_lock("docs", wait=False)):
            pass
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        with store.sync_lock("docs", wait=True):  # the kernel / the server let it go
            pass
    finally:
        proc.kill()
        proc.wait(10)


def test_two_cli_syncs_of_one_folder_import_every_file_once(tmp_path: Path) -> None:
    """Both started while this test holds the lock, so they run together for sure: each says
    whom it waits for, then one imports the files and the other finds them unchanged."""
    folder, home = folder_of(tmp_path, 40), tmp_path / "home"
    command = [sys.executable, "-m", "excerpt", "--home", str(home), "sync", str(folder),
               "--collection", "docs", "--embedder", "none", "--json", "--no-progress"]
    store = open_store("sqlite", str(home), tmp_path / "scratch")
    with store.sync_lock("docs", wait=False):
        busy = subprocess.run([*command, "--no-wait"], capture_output=True, text=True)
        assert busy.returncode == 1 and "is already running (process" in busy.stderr
        syncs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True) for _ in range(2)]
        for proc in syncs:  # each says it waits, for this process
            assert proc.stderr is not None
            line = proc.stderr.readline()
            assert f"waiting for a sync of collection 'docs' to end (process {os.getpid()}" in (
                line), line
    outs = [json.loads(proc.communicate(timeout=120)[0]) for proc in syncs]
    assert all(proc.returncode == 0 for proc in syncs)
    assert sorted((o["added"], o["unchanged"]) for o in outs) == [(0, 40), (40, 0)]
    engine = Engine(home)
    assert len(engine.store.snapshots("docs")) == 40  # each file imported once
    engine.close()
