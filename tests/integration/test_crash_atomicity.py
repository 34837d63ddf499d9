"""SIGKILL an ingest at random moments; the store must open with every invariant intact.

Invariants checked after each kill: the store opens; the earlier snapshot is intact and
searchable; the killed run is either completed (its snapshot whole) or marked abandoned with
nothing of it visible; no staging folder or orphan segment is left behind.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.store.sqlite import SQLiteStore
from excerpt.types import Filters, Principal

WORDS = [
    "river", "stone", "lantern", "harbor", "meadow", "copper", "violet", "thunder",
    "orchard", "signal", "quiet", "ember", "falcon", "marble", "willow", "canyon",
]


def write_corpus(folder: Path, files: int, seed: int) -> None:
    rng = random.Random(seed)
    folder.mkdir(parents=True)
    for i in range(files):
        paragraphs = [" ".join(rng.choices(WORDS, k=60)) + "." for _ in range(4)]
        (folder / f"doc{i:04d}.txt").write_text("\n\n".join(paragraphs), encoding="utf-8")


def ingest_cmd(home: Path, corpus: Path, source: str) -> list[str]:
    return [sys.executable, "-m", "excerpt.cli.main", "--home", str(home), "ingest",
            str(corpus), "--embedder", "none", "--no-progress", "--source", source, "--json"]


def check_invariants(home: Path, baseline_nodes: int, baseline_id: str) -> str:
    store = SQLiteStore(home)  # recovery runs here
    try:
        runs = store.runs()
        assert all(r.status in ("completed", "abandoned", "failed") for r in runs)
        snaps = {s.snapshot_id: s for s in store.snapshots()}
        assert snaps[baseline_id].nodes == baseline_nodes
        for s in snaps.values():
            seg = store.segment(s.snapshot_id)
            assert seg.size == s.nodes
            stored = store.nodes_by_ordinal(s.snapshot_id, list(range(s.nodes)))
            assert [n.id for n in stored] == seg.ids
        completed = {r.snapshot_id for r in runs if r.status == "completed"}
        assert completed == set(snaps)
        leftovers = [p.name for p in store.segments_dir.iterdir()
                     if p.name not in {f"run-{s.run_id}" for s in snaps.values()}]
        assert leftovers == []
        return runs[-1].status
    finally:
        store.close()


def crash_once(tmp_path: Path, delay: float, baseline: tuple[Path, str, int]) -> str:
    home, baseline_id, baseline_nodes = baseline
    proc = subprocess.Popen(ingest_cmd(home, tmp_path / "big", "big"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env={**os.environ, "PYTHONHASHSEED": "0"})
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    status = check_invariants(home, baseline_nodes, baseline_id)
    engine = Engine(home)
    hits = engine.search("lantern harbor", Filters(), Principal.anonymous(), "bm25", 3).hits
    engine.close()
    assert hits, "the earlier snapshot is still searchable"
    return status


@pytest.fixture()
def baseline(tmp_path: Path) -> tuple[Path, str, int]:
    home = tmp_path / "home"
    write_corpus(tmp_path / "small", 5, seed=1)
    write_corpus(tmp_path / "big", 400, seed=2)
    out = subprocess.run(ingest_cmd(home, tmp_path / "small", "small"), capture_output=True,
                         text=True, check=True)
    import json

    result = json.loads(out.stdout)
    return home, result["snapshot_id"], result["nodes"]


def _delays(count: int, seed: int, span: float) -> list[float]:
    rng = random.Random(seed)
    return sorted(rng.uniform(0.05, span) for _ in range(count))


def _full_duration(tmp_path: Path, baseline: tuple[Path, str, int]) -> float:
    probe = tmp_path / "probe-home"
    t = time.perf_counter()
    subprocess.run(ingest_cmd(probe, tmp_path / "big", "big"), capture_output=True, check=True)
    return time.perf_counter() - t


def test_sigkill_during_ingest_keeps_store_consistent(tmp_path: Path,
                                                      baseline: tuple[Path, str, int]) -> None:
    span = _full_duration(tmp_path, baseline)
    statuses = [crash_once(tmp_path, d, baseline) for d in _delays(4, seed=7, span=span * 1.05)]
    assert set(statuses) <= {"completed", "abandoned"}


@pytest.mark.slow
def test_sigkill_at_many_points(tmp_path: Path, baseline: tuple[Path, str, int]) -> None:
    span = _full_duration(tmp_path, baseline)
    statuses = [crash_once(tmp_path, d, baseline) for d in _delays(30, seed=11, span=span * 1.1)]
    assert "abandoned" in statuses
