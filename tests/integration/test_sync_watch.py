"""`excerpt sync --watch`: a change to the folder is synced after the quiet time, a burst of
changes is one pass, hidden files (the store's own home among them) wake nothing, and Ctrl-C
ends the command cleanly (exit 0) with the store consistent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from excerpt.engine import Engine
from excerpt.store.sqlite import SQLiteStore
from excerpt.sync import SyncOptions, SyncResult, watch_folder

OPTIONS = SyncOptions(collection="docs", embedder="none")
RUN = "from excerpt.cli import sync_cmd; from excerpt.cli.main import main; main()"


def wait_for(test: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not test():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_watch_syncs_each_burst_once(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("river and stone", encoding="utf-8")
    engine = Engine(tmp_path / "home")
    reports: list[SyncResult] = []
    stop, ready = threading.Event(), threading.Event()
    watching = threading.Thread(target=watch_folder, args=(
        lambda: engine.sync(folder, OPTIONS), folder, 150, reports.append, stop, ready.set))
    watching.start()
    try:
        assert ready.wait(20) and [r.added for r in reports] == [["a.txt"]]
        for i in range(3):  # one burst: three files written 20 ms apart
            (folder / f"b{i}.txt").write_text(f"lantern number {i}", encoding="utf-8")
            time.sleep(0.02)
        wait_for(lambda: len(reports) >= 2)
        time.sleep(0.5)
        assert len(reports) == 2 and reports[1].added == ["b0.txt", "b1.txt", "b2.txt"]
        (folder / ".hidden").write_text("not synced", encoding="utf-8")
        time.sleep(0.6)
        assert len(reports) == 2  # a hidden file wakes nothing
        (folder / "a.txt").unlink()
        wait_for(lambda: len(reports) >= 3)
        assert reports[2].deleted == ["a.txt"]
    finally:
        stop.set()
        watching.join(10)
    assert not watching.is_alive()
    engine.close()


def test_ctrl_c_ends_the_watch_cleanly(tmp_path: Path) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.txt").write_text("river and stone", encoding="utf-8")
    home = folder / ".excerpt"  # the store inside the folder it mirrors: hidden, not synced
    proc = subprocess.Popen(
        [sys.executable, "-c", RUN, "--home", str(home), "sync", str(folder), "--collection",
         "docs", "--embedder", "none", "--watch", "--debounce", "100", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"}, preexec_fn=_interactive)
    assert proc.stdout is not None
    try:
        first = json.loads(proc.stdout.readline())
        assert first["added"] == 1
        second: dict[str, int] = {}
        for attempt in range(50):  # until the watch (in place after the first pass) sees it
            (folder / "b.txt").write_text(f"harbor lantern {attempt}", encoding="utf-8")
            line = _line_within(proc, 1.0)
            if line:
                second = json.loads(line)
                break
        assert second["added"] == 1
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "stopped watching" in err and "Traceback" not in err
    store = SQLiteStore(home)
    assert sorted(store.source_states("docs")) == ["sync:notes/a.txt", "sync:notes/b.txt"]
    assert all(r.status == "completed" for r in store.runs())
    store.close()


def _interactive() -> None:
    """Ctrl-C as a terminal delivers it: a test run started in the background (``cmd &``
    without job control) ignores SIGINT, and its children would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _line_within(proc: subprocess.Popen[str], seconds: float) -> str:
    import selectors

    assert proc.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        if selector.select(seconds):
            return proc.stdout.readline()
    return ""
