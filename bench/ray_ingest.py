"""Ingestion with the embedding on Ray: ``python bench/ray_ingest.py [--n 512] [--rounds 2]``.

Imports the first ``--n`` SciFact records (BEIR, MiniLM) into a fresh home, alternately: here
without Ray, and with ``--ray`` on a one-node cluster this script starts with 1 and with 2 CPUs
(``ray start --head --block``, stopped by its session). Per run: the total, the embed
stage (first to last progress call of ``embed``), the steady embedding rate (from the first
batch back to the last, so without actor start and model load) and the driver's serial part
(total minus the embed stage: load, analysis, segment, publish). Medians over ``--rounds``.

CPU seconds too, since wall time on a shared machine says more about the neighbours than about
excerpt: the driver's (``time.process_time``) and the cluster's (user + system time of every
process in the cluster's session, sampled every 0.2 s so the actors killed at the end of
an import count). Per node, they give the cost a cluster of N machines divides (see
docs/scale-out.md).
A development tool; excerpt never imports it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from _scifact import DATA
from excerpt.embed import get_embedder
from excerpt.engine import Engine
from excerpt.ingest.pipeline import Importer

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def session_cpu(sid: int) -> dict[int, float]:
    """CPU seconds (user + system) of each process in session ``sid``, by pid (Ray puts each
    worker in a process group of its own, but they stay in the session `ray start` leads)."""
    tick = os.sysconf("SC_CLK_TCK")
    found: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid:  # fields after the name: state ppid pgrp session ...
            found[int(stat.parent.name)] = (int(fields[11]) + int(fields[12])) / tick
    return found


class SessionCpu:
    """CPU seconds a session's processes spend while it is watched: sampled every 0.2 s, so the
    actors killed at the end of an import still count (their last sample, taken after their
    last batch)."""

    def __init__(self, sid: int) -> None:
        self.sid, self.start = sid, session_cpu(sid)
        self.last = dict(self.start)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.wait(0.2):
            self.last.update(session_cpu(self.sid))

    def seconds(self) -> float:
        self._stop.set()
        self._thread.join()
        self.last.update(session_cpu(self.sid))
        return sum(v - self.start.get(pid, 0.0) for pid, v in self.last.items())


@contextmanager
def cluster(cpus: int) -> Iterator[tuple[str, int]]:
    """A one-node Ray cluster with ``cpus`` CPUs; yields its GCS address and session id."""
    port, temp = free_port(), tempfile.mkdtemp(prefix="rayB")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0"}
    process = subprocess.Popen(
        [str(Path(sys.executable).with_name("ray")), "start", "--head", "--block",
         f"--port={port}", f"--node-ip-address={HOST}", f"--num-cpus={cpus}",
         "--include-dashboard=false", f"--temp-dir={temp}"],
        env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                socket.create_connection((HOST, port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("the Ray head did not start") from None
                time.sleep(0.5)
        time.sleep(3)  # the raylet registers after the GCS port opens
        yield f"{HOST}:{port}", process.pid
    finally:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in session_cpu(process.pid):  # the session's live processes
                with suppress(ProcessLookupError):
                    os.kill(pid, sig)
            time.sleep(5 if sig == signal.SIGTERM else 0)
        process.wait(timeout=10)
        shutil.rmtree(temp, ignore_errors=True)


def one_run(corpus: Path, ray: str | None, sid: int | None = None) -> dict[str, float]:
    """Seconds of one import into a fresh home: total, embed stage, steady rate, serial part;
    CPU seconds of the driver and of the cluster (session ``sid``)."""
    home = Path(tempfile.mkdtemp(prefix="excerpt-ray-bench"))
    calls: list[tuple[float, int]] = []
    engine = Engine(home)
    watch = SessionCpu(sid) if sid else None
    cpu_before = time.process_time()
    started = time.perf_counter()

    def progress(stage: str, done: int, total: int) -> None:
        if stage == "embed":
            calls.append((time.perf_counter(), done))

    try:
        result = Importer(engine.store, engine.settings, get_embedder).run(
            corpus, fmt="beir", embedder="minilm", ray=ray, progress=progress)
        total = time.perf_counter() - started
        driver_cpu = time.process_time() - cpu_before
        cluster_cpu = watch.seconds() if watch else 0.0
    finally:
        engine.close()
        shutil.rmtree(home, ignore_errors=True)
    embed = calls[-1][0] - calls[0][0]
    first = next((t, d) for t, d in calls if d > 0)
    steady = (calls[-1][1] - first[1]) / max(calls[-1][0] - first[0], 1e-9)
    return {"nodes": result.nodes, "total": total, "embed": embed, "steady": steady,
            "serial": total - embed, "first_batch": first[0] - calls[0][0],
            "driver_cpu": driver_cpu, "cluster_cpu": cluster_cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=512)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", default="0,1,2",
                        help="which runs: 0 (local, no Ray), 1 and 2 (Ray workers)")
    args = parser.parse_args()
    wanted = {int(w) for w in args.workers.split(",")}
    corpus = Path(tempfile.mkdtemp(prefix="scifact")) / "corpus.jsonl"
    with (DATA / "scifact" / "corpus.jsonl").open(encoding="utf-8") as source:
        corpus.write_text("".join(next(source) for _ in range(args.n)), encoding="utf-8")
    runs: dict[str, list[dict[str, float]]] = {"local (2 threads)": [], "ray 1 worker": [],
                                               "ray 2 workers": []}
    for _ in range(args.rounds):
        if 0 in wanted:
            runs["local (2 threads)"].append(one_run(corpus, None))
        for cpus in sorted(wanted - {0}):
            with cluster(cpus) as (address, sid):
                runs[f"ray {cpus} worker{'s' if cpus > 1 else ''}"].append(
                    one_run(corpus, address, sid))
        print(f"round done, load average {os.getloadavg()[0]:.1f}", file=sys.stderr, flush=True)
    print(f"{args.n} SciFact records, MiniLM, medians of {args.rounds}; "
          f"load average {os.getloadavg()[0]:.1f} at the end")
    print(f"{'mode':18} {'total s':>8} {'embed s':>8} {'1st batch s':>11} {'steady n/s':>10} "
          f"{'serial s':>8} {'driver cpu ms/node':>18} {'cluster cpu ms/node':>19}")
    for mode, got in runs.items():
        if not got:
            continue

        def med(key: str, got: list[dict[str, float]] = got) -> float:
            return statistics.median(r[key] for r in got)
        nodes = got[0]["nodes"]
        print(f"{mode:18} {med('total'):8.1f} {med('embed'):8.1f} {med('first_batch'):11.1f} "
              f"{med('steady'):10.1f} {med('serial'):8.1f} "
              f"{med('driver_cpu') / nodes * 1000:18.1f} "
              f"{med('cluster_cpu') / nodes * 1000:19.1f}")
    shutil.rmtree(corpus.parent, ignore_errors=True)


if __name__ == "__main__":
    main()
