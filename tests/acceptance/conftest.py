"""Fixtures shared by the seed acceptance tests: the real corpora, ingested once per session."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from excerpt.engine import Engine

FAKE_SET = "Fake_snapshot"


@dataclass(frozen=True)
class FakeEnterprise:
    """Both release bundles of seed 004 in one store: 1.0 is the primary snapshot (a), 1.1 the
    secondary (b); the set ``Fake_snapshot`` names both, in that order."""

    home: Path
    collection: str
    snapshot_a: str
    snapshot_b: str
    run_ids: tuple[int, int]

    def engine(self) -> Engine:
        return Engine(self.home)


@pytest.fixture(scope="session")
def fake_enterprise(shared_data: Callable[..., Path],
                    tmp_path_factory: pytest.TempPathFactory) -> FakeEnterprise:
    bundles = [shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{v}.zip")
               for v in ("1.0", "1.1")]
    home = tmp_path_factory.mktemp("fake-enterprise") / "home"
    engine = Engine(home)
    results = [engine.ingest(b, collection="code", embedder="minilm") for b in bundles]
    engine.snapshot_set(FAKE_SET, [r.snapshot_id for r in results], "code")
    engine.close()
    return FakeEnterprise(home, "code", results[0].snapshot_id, results[1].snapshot_id,
                          (results[0].import_run_id, results[1].import_run_id))
