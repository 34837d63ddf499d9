"""Retrieval conformance: the same data in the embedded store and in PostgreSQL must give the
same answers: identical ids and order for BM25 and graph results, the same semantic and
hybrid rankings (scores within float32 rounding), the same context packs and answers, and
exactly the allowed nodes for every principal of the security matrices, in every mode.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from excerpt.compose.ask import AskOptions
from excerpt.engine import Engine
from excerpt.graph import GraphLimits
from excerpt.retrieve.sql_access import SqlAccess
from excerpt.store.postgres import PostgresStore
from excerpt.types import SEARCH_MODES, Filters, Principal

from ..acceptance.test_seed_004_graph import ABC, PAY
from ..acceptance.test_seed_004_retrieval import CASES
from ..acceptance.test_seed_004_security import SCENARIOS, TABLE, allowed, write_bundle

FAKE_SET = "Fake_snapshot"


@pytest.fixture(scope="module")
def engines(shared_data: Callable[..., Path], pg_database: Callable[[], str],
            tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Engine]]:
    """Both releases (MiniLM vectors), their set, and the matrices' bundle, in each backend."""
    root = tmp_path_factory.mktemp("retrieval-conformance")
    bundles = [shared_data("fake_enterprise", f"Release_FAKE_ENTERPRISE_{v}.zip")
               for v in ("1.0", "1.1")]
    matrices = write_bundle(root / "matrices")
    built = {"sqlite": Engine(root / "sqlite"),
             "postgres": Engine(root / "pg-scratch",
                                store=PostgresStore(pg_database(), root / "pg-scratch"))}
    for engine in built.values():
        ids = [engine.ingest(b, collection="code", embedder="minilm").snapshot_id
               for b in bundles]
        engine.snapshot_set(FAKE_SET, ids, "code")
        engine.ingest(matrices, collection="sec", embedder="minilm")
    assert isinstance(built["postgres"].access, SqlAccess)  # ranked in SQL, no segment read
    assert built["sqlite"].resolve(VIEWS["set"])[0].snapshot_id == RELEASE_1_0
    yield built
    for engine in built.values():
        engine.close()


def both(engines: dict[str, Engine], method: str, *args: Any) -> tuple[Any, Any]:
    """The same call on each backend's engine: (embedded, PostgreSQL)."""
    return (getattr(engines["sqlite"], method)(*args),
            getattr(engines["postgres"], method)(*args))


def ranking(result: Any) -> list[tuple[str, str]]:
    return [(h.node.id, h.snapshot_id) for h in result.hits]


RELEASE_1_0 = "fdb0d25c05c0b1647d4954a0f1850aff13570970"  # the bundle's own snapshot id
VIEWS = {"release": Filters("code", snapshot_id=RELEASE_1_0),
         "set": Filters("code", snapshot_set=FAKE_SET), "latest": Filters("code")}


@pytest.mark.parametrize("view", sorted(VIEWS))
@pytest.mark.parametrize("mode", SEARCH_MODES)
def test_searches_agree(engines: dict[str, Engine], mode: str, view: str) -> None:
    for case, _, query, _, _ in CASES:
        a, b = both(engines, "search", query, VIEWS[view], Principal.admin(), mode, 10)
        assert ranking(a) == ranking(b), (case, mode, view)
        for x, y in zip(a.hits, b.hits, strict=True):
            assert x.score == pytest.approx(y.score, rel=1e-5, abs=1e-6), (case, x.node.id)
        assert a.analysis["visible_nodes"] == b.analysis["visible_nodes"]


@pytest.mark.parametrize("mode", SEARCH_MODES)
@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_security_matrices_hold_in_sql(engines: dict[str, Engine], scenario: str,
                                       mode: str) -> None:
    principal, _, hidden = SCENARIOS[scenario]
    a, b = both(engines, "search", "general ledger entries", Filters("sec"), principal, mode, 50)
    assert {h.node.id for h in b.hits} == allowed(principal) == {h.node.id for h in a.hits}
    assert ranking(a) == ranking(b)
    tree_a, tree_b = both(engines, "graph", ["ROOT"], Filters("sec"), principal,
                          GraphLimits(2, 120))
    assert tree_a.to_json() == tree_b.to_json()
    assert {n for n, _ in tree_b.nodes} == allowed(principal)
    texts_a, texts_b = both(engines, "context", sorted(TABLE), [], Filters("sec"), principal,
                            100_000)
    assert texts_a.to_json() == texts_b.to_json()
    assert not hidden & {n.id for n in texts_b.node_texts}


def test_anonymous_sees_only_untagged_unlabelled_nodes(engines: dict[str, Engine]) -> None:
    _, b = both(engines, "search", "ledger", Filters("sec"), Principal.anonymous(), "bm25", 50)
    assert {h.node.id for h in b.hits} == {"ROOT", "CLS_NONE"}


@pytest.mark.parametrize("case", sorted(ABC))
def test_graph_allowlist_cases_agree(engines: dict[str, Engine], case: str) -> None:
    allow, nodes, _ = ABC[case]
    for seed_only in (False, True):
        a, b = both(engines, "graph", [PAY], VIEWS["release"], Principal.admin(),
                    GraphLimits(1, 120, allow, seed_only))
        assert a.to_json() == b.to_json() and {n for n, _ in b.nodes} == nodes


@pytest.mark.parametrize("seeds", [["C0005"], ["SQL:dbo.proc_SearchShipments_Hybrid"],
                                   ["C0003", "NOPE"], ["C0001"]])
def test_deep_and_limited_trees_agree(engines: dict[str, Engine], seeds: list[str]) -> None:
    who = Principal(frozenset({"finance", "security"}), frozenset({"restricted"}))
    for view in ("release", "set"):
        for principal in (Principal.admin(), who, Principal.anonymous()):
            for limits in (GraphLimits(2, 120), GraphLimits(3, 5), GraphLimits(0, 1)):
                a, b = both(engines, "graph", seeds, VIEWS[view], principal, limits)
                assert a.to_json() == b.to_json(), (view, principal, limits)


def test_context_packs_agree(engines: dict[str, Engine]) -> None:
    for mode in ("seed_first", "graph_first", "balanced"):
        for budget, chars in ((300, None), (100_000, 500), (0, None)):
            a, b = both(engines, "context", ["C0005", "C0003", "NOPE"],
                        ["C0006", "C0007", "C0011"], VIEWS["set"], Principal.anonymous(), budget,
                        chars, mode)
            assert a.to_json() == b.to_json(), (mode, budget, chars)


@pytest.mark.parametrize("mode", ["bm25", "hybrid"])
def test_answers_agree(engines: dict[str, Engine], mode: str) -> None:
    question = "How is the fraud risk score computed with token validation?"
    a, b = both(engines, "ask", question, Filters("code"), Principal.admin(), mode,
                AskOptions(doc_limit=5), "features")
    json_a, json_b = a.to_json(), b.to_json()
    json_a.pop("timings_ms"), json_b.pop("timings_ms")
    assert json_a == json_b and "[1]" in json_a["answer"]


def test_traces_are_kept_in_postgresql_and_hold_only_what_the_caller_saw(
        engines: dict[str, Engine], tmp_path: Path) -> None:
    from excerpt.settings import Settings

    store = engines["postgres"].store
    traced = Engine(tmp_path, Settings(log_dir=str(tmp_path / "log")), store=store)
    who = Principal(frozenset({"finance"}), frozenset({"public", "internal"}))
    traced.search("general ledger entries", Filters("sec"), who, "hybrid", 50)
    traced.graph(["ROOT"], Filters("sec"), who, GraphLimits(2, 120))
    traced.context(["ROOT", "ACL_HR"], [], Filters("sec"), who, 1000)
    kept = store.traces(3)  # type: ignore[attr-defined]
    assert [t["kind"] for t in kept] == ["context", "graph", "search"]
    files = sorted((tmp_path / "log" / "pipeline_traces").glob("2*.json"))
    assert len(files) == 3  # the files are written as before, the table has the same traces
    hidden = set(TABLE) - allowed(who)
    text = json.dumps(kept[1:])  # search and graph: the caller named no hidden node
    assert not any(f'"{h}"' in text for h in hidden)
    assert kept[0]["stages"][1]["state_after"]["skipped"] == [
        {"id": "ACL_HR", "reason": "not found"}]  # the caller's own request, as if unknown
