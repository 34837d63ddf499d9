"""`excerpt ingest --ray`: the embedding runs on a real Ray cluster started here
(`ray start --head --block` on free ports, stopped at the end by its session), on
SciFact records with the MiniLM embedder. The cluster runs without token authentication: Ray
reads RAY_AUTH_MODE once, when it is imported, and this process imported it already.

What is proved: the vectors of a Ray import are the vectors of a local import (float-equal
within 1e-6; equal in fact); the snapshot is the same; Ray workers killed mid-import leave no
snapshot and a failed run, and the next import embeds only what the failed one did not finish;
Ray Client addresses (ray://) give the same vectors as GCS addresses.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.embed import get_embedder
from excerpt.engine import Engine
from excerpt.errors import ServiceError
from excerpt.ingest.pipeline import Importer
from excerpt.settings import Settings

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'ray[client]==2.60.0')")

pytestmark = pytest.mark.slow  # a cluster starts (~5-15 s) and every import starts its actors

SCIFACT = Path(__file__).resolve().parents[3] / "shared" / "data" / "scifact" / "corpus.jsonl"
HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Cluster:
    """A one-node Ray cluster with ``cpus`` CPUs, in a session of its own."""

    def __init__(self, cpus: int) -> None:
        self.port, self.client_port = free_port(), free_port()
        self.temp = tempfile.mkdtemp(prefix="rayB")  # short: Ray's socket paths must fit
        self.env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
        ray_bin = Path(sys.executable).with_name("ray")
        self.process = subprocess.Popen(
            [str(ray_bin), "start", "--head", "--block", f"--port={self.port}",
             f"--node-ip-address={HOST}", f"--num-cpus={cpus}", "--include-dashboard=false",
             f"--ray-client-server-port={self.client_port}", f"--temp-dir={self.temp}"],
            env=self.env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self._wait_for(self.client_port, 90)

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    @property
    def client_address(self) -> str:
        return f"ray://{HOST}:{self.client_port}"

    def _wait_for(self, port: int, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"ray start exited with {self.process.returncode}")
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.5)
        raise RuntimeError(f"the Ray head did not open port {port} in {seconds} s")

    def stop(self) -> None:
        """SIGTERM to the processes of the session `ray start` leads (Ray gives each worker a
        process group of its own, the session stays), SIGKILL to what is left after 20 s."""
        for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 5.0)):
            for pid in session_pids(self.process.pid):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while session_pids(self.process.pid) and time.monotonic() < deadline:
                time.sleep(0.2)
        self.process.wait(timeout=5)
        shutil.rmtree(self.temp, ignore_errors=True)


def session_pids(sid: int) -> list[int]:
    """The live processes of session ``sid`` (zombies left out)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":  # state ppid pgrp session ...
            found.append(int(stat.parent.name))
    return found


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if not SCIFACT.is_file():
        pytest.skip(f"{SCIFACT} is not here")
    started = Cluster(cpus=2)
    try:
        yield started
    finally:
        if ray.is_initialized():
            ray.shutdown()
        started.stop()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first 64 SciFact records (two batches of 32), as a BEIR corpus file."""
    path = tmp_path_factory.mktemp("scifact") / "corpus.jsonl"
    with SCIFACT.open(encoding="utf-8") as source:
        path.write_text("".join(next(source) for _ in range(64)), encoding="utf-8")
    return path


def segment_vectors(home: Path) -> tuple[list[str], np.ndarray]:
    engine = Engine(home)
    try:
        [info] = engine.store.snapshots("default")
        segment = engine.store.segment(info.snapshot_id)
        assert segment.vectors is not None
        return segment.ids, np.array(segment.vectors)
    finally:
        engine.close()


def ingest_cli(home: Path, corpus: Path, *extra: str) -> dict[str, object]:
    result = CliRunner().invoke(
        cli, ["--home", str(home), "ingest", str(corpus), "--format", "beir", "--embedder",
              "minilm", "--no-progress", "--json", *extra])
    assert result.exit_code == 0, result.output
    out: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return out


def test_ray_vectors_equal_local_vectors(cluster: Cluster, corpus: Path, tmp_path: Path) -> None:
    local = ingest_cli(tmp_path / "local", corpus)
    ids_local, v_local = segment_vectors(tmp_path / "local")
    assert v_local.shape == (64, 384)
    for name, address in (("gcs", cluster.address), ("client", cluster.client_address)):
        remote = ingest_cli(tmp_path / name, corpus, "--ray", address)
        assert remote["status"] == local["status"] == "completed"
        assert remote["nodes"] == local["nodes"] == 64
        assert remote["embedded"] == local["embedded"] == 64
        ids_ray, v_ray = segment_vectors(tmp_path / name)
        assert ids_ray == ids_local
        assert float(np.abs(v_ray - v_local).max()) <= 1e-6, address


def kill_embed_actors(stage: str, done: int, total: int) -> None:
    """A progress callback that kills every excerpt-embed actor once the first batch is in."""
    if stage != "embed" or done == 0 or done == total:
        return
    for actor in ray.util.list_named_actors(all_namespaces=True):
        if actor["name"].startswith("excerpt-embed-"):
            ray.kill(ray.get_actor(actor["name"], namespace=actor["namespace"]))


def test_killed_workers_leave_no_snapshot_and_keep_finished_vectors(
        cluster: Cluster, corpus: Path, tmp_path: Path) -> None:
    engine = Engine(tmp_path / "home", Settings().with_(embed_batch=4))
    importer = Importer(engine.store, engine.settings, get_embedder)
    with pytest.raises(ServiceError, match="Ray cluster failed while embedding"):
        importer.run(corpus, fmt="beir", embedder="minilm", ray=cluster.address,
                     progress=kill_embed_actors)
    assert ray.is_initialized() is False  # the connection made for the import was closed
    assert engine.store.snapshots("default") == []
    [run] = engine.store.runs("default")
    assert run.status == "failed"
    again = importer.run(corpus, fmt="beir", embedder="minilm", ray=cluster.address)
    assert again.status == "completed" and again.nodes == 64
    assert 0 < again.embedded <= 64 - 4  # the batches finished before the kill were kept
    engine.close()
