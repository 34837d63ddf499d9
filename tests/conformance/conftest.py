"""Fixtures of the conformance suites that run one test on each store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from excerpt.engine import Engine

from .view_helpers import BACKENDS, open_store


@pytest.fixture(params=BACKENDS)
def store_engine(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Engine]:
    """An engine on the embedded store, then on PostgreSQL (a fresh database)."""
    where = (request.getfixturevalue("pg_url") if request.param == "postgres"
             else str(tmp_path / "home"))
    engine = Engine(tmp_path / "engine-home",
                    store=open_store(request.param, where, tmp_path / "scratch"))
    yield engine
    engine.close()
