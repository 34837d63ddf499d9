"""Embedding an import's batches on a Ray cluster (``excerpt ingest --ray ADDRESS``).

Embedding is the cost of an import (MiniLM: ~60 chunks/s per core here) and every batch is
independent, so it is the one stage sent out: the driver (the ``excerpt ingest`` process) still
loads, analyses, writes the segment and publishes the one snapshot, exactly as without Ray.
Only the texts the vector cache lacks travel, in the same batches a local run would embed
(:func:`excerpt.embed.cache.embed_with_cache`), and each batch's vectors go to the cache as
they come back: a cluster that fails half-way leaves no snapshot (the run is marked failed)
but keeps the vectors it finished, so the next attempt embeds only the rest.

Each Ray worker is an actor holding one embedder, loaded once from the model packages
installed on its machine (nothing is downloaded), on one thread per CPU it was given; there is
one actor per CPU of the cluster (``excerpt-embed`` actors, ``num_cpus=1``). MiniLM embeds one
text per ONNX run, so a vector depends on its text alone and a Ray run's vectors are equal to a
local run's (tests/integration/test_ray_ingest.py checks it).

Addresses: ``auto`` (the cluster this machine belongs to, started with ``ray start``),
``HOST:PORT`` (its GCS port, 6379 by default), ``ray://HOST:PORT`` (Ray Client, port 10001,
needs ``ray[client]``), or ``local`` (a private Ray on this machine for the import only). When
Ray is already initialised in the process (a notebook, a test), that connection is used.
"""

from __future__ import annotations

import importlib
import importlib.util
import logging
import os
import socket
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from excerpt.embed.base import Embedder, FloatMatrix
from excerpt.embed.cache import BatchRunner
from excerpt.errors import DependencyError, ServiceError

log = logging.getLogger(__name__)

RAY_HINT = 'pip install "ray[client]==2.60.0"  (or: pip install "excerpt[cluster]")'
IN_FLIGHT_PER_ACTOR = 2
"""Batches queued per actor, so an actor never waits for the driver between two batches."""
CONNECT_TIMEOUT_S = 5.0


def require_ray() -> Any:
    """The ``ray`` module, or :class:`DependencyError` saying how to install it."""
    try:
        if importlib.util.find_spec("ray") is None:
            raise ImportError("ray")
        return importlib.import_module("ray")
    except (ImportError, ValueError):
        raise DependencyError(f"--ray needs the Python package 'ray'; install it with: "
                              f"{RAY_HINT}") from None


def _host_port(address: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``HOST:PORT`` or ``ray://HOST:PORT``; None for auto and local."""
    rest = address.removeprefix("ray://")
    host, sep, port = rest.rpartition(":")
    if not sep or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_reachable(address: str) -> None:
    """Refuse quickly an address nothing listens on (Ray itself retries for two minutes and
    then exits the process)."""
    target = _host_port(address)
    if target is None:
        return
    try:
        with socket.create_connection(target, timeout=CONNECT_TIMEOUT_S):
            pass
    except OSError as exc:
        raise ServiceError(f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}; "
                           "start one with `ray start --head` or check the address") from None


NO_LOCAL_CLUSTER = ("no Ray cluster runs on this machine (--ray auto): start one with "
                    "`ray start --head`, or give its HOST:PORT")


@contextmanager
def ray_connection(address: str) -> Iterator[Any]:
    """``ray`` connected to the cluster at ``address`` for the duration of the block.

    A connection the process already had is used and left open; one made here is closed."""
    ray = require_ray()
    if ray.is_initialized():
        yield ray
        return
    check_reachable(_resolved(ray, address))
    kwargs: dict[str, Any] = {"address": address, "log_to_driver": False,
                              "logging_level": logging.WARNING}
    if address == "local":  # a new instance even when this machine has a cluster
        kwargs["include_dashboard"] = False
    try:
        ray.init(**kwargs)
    except ConnectionError:
        if address != "auto":
            raise ServiceError(f"cannot connect to the Ray cluster at {address}{_auth_hint()}",
                               ) from None
        raise ServiceError(NO_LOCAL_CLUSTER) from None
    except (ValueError, RuntimeError) as exc:
        raise ServiceError(f"cannot connect to the Ray cluster at {address}: "
                           f"{_first_line(exc)}") from None
    try:
        yield ray
    finally:
        ray.shutdown()


def _resolved(ray: Any, address: str) -> str:
    """``auto`` as Ray resolves it (``RAY_ADDRESS``, or the cluster ``ray start`` last
    recorded on this machine, which may be gone); other addresses as given."""
    if address != "auto":
        return address
    try:
        found = ray._private.services.canonicalize_bootstrap_address("auto")
    except Exception:  # Ray's own lookup changed or failed: ray.init reports it
        return address
    if found is None:
        raise ServiceError(NO_LOCAL_CLUSTER)
    return str(found)


class EmbedWorker:
    """A Ray actor: one embedder on one thread (its one CPU), loaded on the first batch, kept
    for the actor's life."""

    def __init__(self, model: str) -> None:
        from excerpt.embed.registry import new_embedder

        self._embedder = new_embedder(model, 1)

    def embed(self, texts: list[str]) -> FloatMatrix:
        return self._embedder.embed_documents(texts)


def _actors(ray: Any, model: str, count: int) -> list[Any]:
    remote = ray.remote(num_cpus=1, max_restarts=0)(EmbedWorker)
    run = uuid.uuid4().hex[:8]
    return [remote.options(name=f"excerpt-embed-{run}-{i}").remote(model)
            for i in range(count)]


def cluster_cpus(ray: Any) -> int:
    """CPUs of the cluster (every node), at least 1."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))


def ray_runner(ray: Any, model: str) -> BatchRunner:
    """A :data:`BatchRunner` that embeds on one actor per cluster CPU (fewer for fewer
    batches)."""

    def run(embedder: Embedder, batches: list[list[str]]) -> Iterator[tuple[int, FloatMatrix]]:
        if not batches:
            return
        count = min(cluster_cpus(ray), len(batches))
        actors = _actors(ray, model, count)
        try:
            yield from _dispatch(ray, actors, batches)
        finally:
            for actor in actors:
                ray.kill(actor)

    return run


def _dispatch(ray: Any, actors: list[Any], batches: list[list[str]],
              ) -> Iterator[tuple[int, FloatMatrix]]:
    """Every batch through the actors, a few queued on each; yields batches as they finish."""
    waiting = iter(enumerate(batches))
    pending: dict[Any, tuple[int, Any]] = {}

    def submit(actor: Any) -> None:
        for index, texts in waiting:
            pending[actor.embed.remote(texts)] = (index, actor)
            return

    for _ in range(IN_FLIGHT_PER_ACTOR):
        for actor in actors:
            submit(actor)
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        index, actor = pending.pop(ready[0])
        try:
            vectors = ray.get(ready[0])
        except ray.exceptions.RayError as exc:
            raise ServiceError(f"the Ray cluster failed while embedding: "
                               f"{_first_line(exc)}") from None
        submit(actor)
        yield index, np.asarray(vectors, dtype=np.float32)


def _auth_hint() -> str:
    """What to try when a cluster refuses this process: Ray sends its token (its default
    for clusters since 2.5x) to an address given by hand only when told to."""
    if os.environ.get("RAY_AUTH_MODE"):
        return ""
    return (" (a cluster with token authentication needs RAY_AUTH_MODE=token and its token "
            "in RAY_AUTH_TOKEN or ~/.ray/auth_token)")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
