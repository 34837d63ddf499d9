"""Fixtures shared by the seed acceptance tests: the real corpora, ingested once per session."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from excerpt.engine import Engine
from excerpt.settings import Settings

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
        """An engine on the store; traces and logs go to $EXCERPT_LOG_DIR when it is set (the
        integration runner, tools/run_retrieval_integration_tests.sh, sets it)."""
        return Engine(self.home, Settings(log_dir=os.environ.get("EXCERPT_LOG_DIR", "")))


def prepared_store(home: Path) -> FakeEnterprise:
    """A store the integration runner built: both bundles imported, the set created."""
    engine = Engine(home)
    sets = {s["name"]: s["snapshot_ids"] for s in engine.snapshots("code")["sets"]}
    if FAKE_SET not in sets or len(sets[FAKE_SET]) != 2:
        pytest.fail(f"{home} has no snapshot set {FAKE_SET} of two snapshots")
    runs = {r.snapshot_id: r.run_id for r in engine.store.runs()}
    a, b = sets[FAKE_SET]
    return FakeEnterprise(home, "code", a, b, (runs[a], runs[b]))


@pytest.fixture(scope="session")
def fake_enterprise(shared_data: Callable[..., Path],
                    tmp_path_factory: pytest.TempPathFactory) -> FakeEnterprise:
    if os.environ.get("EXCERPT_FAKE_HOME"):
        return prepared_store(Path(os.environ["EXCERPT_FAKE_HOME"]))
    bundles = [shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{v}.zip")
               for v in ("1.0", "1.1")]
    home = tmp_path_factory.mktemp("fake-enterprise") / "home"
    engine = Engine(home)
    results = [engine.ingest(b, collection="code", embedder="minilm") for b in bundles]
    engine.snapshot_set(FAKE_SET, [r.snapshot_id for r in results], "code")
    engine.close()
    return FakeEnterprise(home, "code", results[0].snapshot_id, results[1].snapshot_id,
                          (results[0].import_run_id, results[1].import_run_id))


@pytest.fixture(scope="session")
def books(shared_data: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Both Gutenberg books in a store (collection "books", BM25 only: composition does not
    depend on the search mode, and the books' embedding is measured in bench/)."""
    folder = shared_data("books")
    home = tmp_path_factory.mktemp("books") / "home"
    Engine(home).ingest(folder, collection="books", embedder="none")
    return home
