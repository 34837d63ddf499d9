"""`excerpt serve`: the service in this process, or `--workers N`: N uvicorn worker processes,
each with its own engine.

The parent cannot hand its engine or key ring to a spawned process, so it leaves a recipe
(home, settings, store URL, keys file, ingest roots) in the environment and each worker opens
its own from it (:func:`worker_app`, the app factory uvicorn calls in the worker). Nothing
needs sharing between workers: each re-reads the keys file when it changes, memory writes are
transactions on memory.db (or PostgreSQL) that serialise across processes, and an upload's
folder is named by its worker's pid and start time (:mod:`excerpt.edge.uploads`).

uvicorn's supervisor runs them (it restarts a worker that dies and stops all on SIGTERM), but
each worker listens on a socket of its own with ``SO_REUSEPORT``, so that the kernel spreads
new connections evenly: on one shared socket asyncio accepts every connection waiting when it
wakes, and the first worker to wake took most of a burst of keep-alive connections and kept
them (measured with bench/load.py: two workers served searches 1.07 times as fast as one, at
114 % CPU).
"""

from __future__ import annotations

import base64
import logging
import os
import pickle
import socket
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from uvicorn import Config
from uvicorn.config import STARTUP_FAILURE
from uvicorn.supervisors import multiprocess

from excerpt.edge.keys import KeyRing
from excerpt.engine import Engine
from excerpt.server.app import create_app

RECIPE = "EXCERPT_SERVE_WORKER"
"""The environment variable holding what each worker opens."""


def worker_app() -> Any:
    """The app of one worker: its own engine and key ring, from the parent's recipe."""
    # The recipe is this server's parent process's own pickle, passed to its children only.
    recipe = pickle.loads(base64.b64decode(os.environ[RECIPE]))
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    engine = Engine(recipe["home"], recipe["settings"], store_url=recipe["store_url"])
    return create_app(engine, KeyRing.load(recipe["keys"]), recipe["ingest_roots"])


def run_workers(engine: Engine, keys: KeyRing, host: str, port: int,
                ingest_roots: Sequence[Path], workers: int) -> None:
    """Serve with ``workers`` processes on ``host:port`` until interrupted."""
    recipe = {"home": engine.home, "settings": engine.settings, "store_url": engine.store_url,
              "keys": keys.path, "ingest_roots": list(ingest_roots)}
    os.environ[RECIPE] = base64.b64encode(pickle.dumps(recipe)).decode("ascii")
    config = Config("excerpt.server.workers:worker_app", factory=True, workers=workers,
                    host=host, port=port, log_level="warning")
    # The supervisor makes its workers with the module's Process: ours listen on their own.
    multiprocess.Process = OwnSocketWorker  # type: ignore[misc]
    multiprocess.Multiprocess(config, sockets=[]).run()


def reuse_port_socket(host: str, port: int) -> socket.socket:
    """A socket bound to ``host:port`` that other processes of this user may bind too.

    Its protocol is named, IPPROTO_TCP rather than the default 0, because the sockets it
    accepts inherit that number and asyncio sets TCP_NODELAY only on a socket whose protocol
    reads IPPROTO_TCP. Without it uvicorn's two sends per response (head, then body) met
    Nagle's algorithm, and every response on a kept-alive connection waited out the client's
    delayed ACK (46 ms a search; tests/integration/test_keepalive.py).
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    return sock


class OwnSocketWorker(multiprocess.Process):
    """A uvicorn worker process that listens on its own ``SO_REUSEPORT`` socket."""

    def target(self, sockets: list[socket.socket] | None = None) -> None:
        try:
            own = reuse_port_socket(self.config.host, self.config.port)
        except OSError as exc:  # the port is taken: the supervisor stops, not retries
            logging.getLogger("uvicorn.error").error("excerpt: cannot listen: %s", exc)
            sys.exit(STARTUP_FAILURE)
        super().target([own])


def serve(engine: Engine, keys: KeyRing, host: str, port: int,
          ingest_roots: Sequence[Path] = (), workers: int = 1) -> None:
    """Run the service until interrupted: uvicorn, in this process when ``workers`` is 1 (the
    engine is in it), else ``workers`` processes, each with its own engine
    (:func:`run_workers`), so requests use every core instead of one GIL."""
    import uvicorn

    # Warnings and errors of excerpt's loggers (a broken keys file, a failed request) on stderr.
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    if workers > 1:
        run_workers(engine, keys, host, port, ingest_roots, workers)
        return
    uvicorn.run(create_app(engine, keys, ingest_roots), host=host, port=port,
                log_level="warning")
