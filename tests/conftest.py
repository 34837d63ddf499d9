"""Suite-wide fixtures: where the shared corpora are (``$EXCERPT_DATA`` or ../shared/data)."""

from __future__ import annotations

import os
import socket
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def shared_data_dir() -> Path:
    env = os.environ.get("EXCERPT_DATA")
    return Path(env) if env else REPO.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Callable[..., Path]:
    """``shared_data("books", "x.txt")``: the path, or skip saying where it was looked for."""

    def find(*parts: str) -> Path:
        path = shared_data_dir().joinpath(*parts)
        if not path.exists():
            pytest.skip(f"{path} not found: set EXCERPT_DATA to the shared data folder")
        return path

    return find


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@pytest.fixture(scope="session")
def free_port() -> Callable[[], int]:
    """``free_port()``: a loopback port nothing listens on now (servers run in the tests)."""
    return _free_port
