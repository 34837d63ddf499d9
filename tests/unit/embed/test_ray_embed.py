"""The Ray hook's edges that need no cluster: a missing ray says how to install it, an address
nothing listens on is refused at once (Ray itself would retry for two minutes and then exit the
process), and batches that come back out of order land on their own rows."""

from __future__ import annotations

import socket
import sys
import time
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

from excerpt.embed.base import Embedder, FloatMatrix
from excerpt.embed.cache import MemoryVectorCache, embed_with_cache
from excerpt.embed.ray_embed import check_reachable, ray_connection, require_ray
from excerpt.errors import DependencyError, ServiceError


class Lengths:
    """A tiny real embedder: a text's vector is its length and its first letter's code."""

    name = "lengths"
    dim = 2

    def embed_documents(self, texts: Sequence[str]) -> FloatMatrix:
        return np.array([[len(t), ord(t[0])] for t in texts], dtype=np.float32)

    def embed_query(self, text: str) -> FloatMatrix:
        vector: FloatMatrix = self.embed_documents([text])[0]
        return vector


def backwards(embedder: Embedder, batches: list[list[str]]) -> Iterator[tuple[int, FloatMatrix]]:
    for index in reversed(range(len(batches))):
        yield index, embedder.embed_documents(batches[index])


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again when the block ends


def test_missing_ray_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what an environment without ray imports
    with pytest.raises(DependencyError, match=r'pip install "ray\[client\]==2\.60\.0"'):
        require_ray()


@pytest.mark.parametrize("scheme", ["", "ray://"])
def test_unreachable_address_is_refused_quickly(scheme: str) -> None:
    address = f"{scheme}127.0.0.1:{closed_port()}"
    started = time.monotonic()
    with pytest.raises(ServiceError, match="cannot reach the Ray cluster at " + address):
        check_reachable(address)
    assert time.monotonic() - started < 5


def test_unreachable_address_fails_before_ray_starts() -> None:
    pytest.importorskip("ray", reason="ray is not installed")
    import ray

    with pytest.raises(ServiceError), ray_connection(f"127.0.0.1:{closed_port()}"):
        pass
    assert not ray.is_initialized()


def test_batches_back_in_any_order_land_on_their_rows() -> None:
    texts = ["a", "bb", "ccc", "a", "dddd", "ee"]
    in_order, n = embed_with_cache(Lengths(), texts, MemoryVectorCache(), batch_size=2)
    shuffled, m = embed_with_cache(Lengths(), texts, MemoryVectorCache(), batch_size=2,
                                   runner=backwards)
    assert n == m == 5  # "a" twice, embedded once
    assert np.array_equal(shuffled, in_order)
    assert shuffled[4].tolist() == [4, ord("d")]


def test_auto_with_a_cluster_gone_is_refused_quickly(monkeypatch: pytest.MonkeyPatch) -> None:
    """``auto`` resolves as Ray does (here RAY_ADDRESS; else the cluster ``ray start`` last
    recorded, possibly killed since): a dead address is refused, not waited on."""
    pytest.importorskip("ray", reason="ray is not installed")
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{closed_port()}")
    started = time.monotonic()
    with pytest.raises(ServiceError, match="cannot reach the Ray cluster"), \
            ray_connection("auto"):
        pass
    assert time.monotonic() - started < 5
