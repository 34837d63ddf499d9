"""Seed 004, section 6: dependency-tree expansion on the real bundles (primary release 1.0).

Cases A, B, C (each as depth-limited BFS and as seed-only), D1-D4, and the pipeline limits.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from excerpt.cli.main import cli
from excerpt.graph import DEFAULT_ALLOWLIST, GraphLimits, GraphResult
from excerpt.types import Filters, Principal

from .conftest import FakeEnterprise

PAY = "SQL:dbo.proc_ProcessPayment"
ADMIN = Principal.admin()


def expand(fe: FakeEnterprise, seeds: list[str], limits: GraphLimits,
           principal: Principal = ADMIN, snapshot: str | None = None) -> GraphResult:
    filters = Filters("code", snapshot_id=snapshot or fe.snapshot_a)
    return fe.engine().graph(seeds, filters, principal, limits)


def by_depth(result: GraphResult, depth: int) -> set[str]:
    return {node_id for node_id, d in result.nodes if d == depth}


def triples(result: GraphResult) -> set[tuple[str, str, str]]:
    return {(e.from_id, e.relation, e.to_id) for e in result.edges}


ABC = {
    "A": (DEFAULT_ALLOWLIST,
          {PAY, "SQL:dbo.table_Payments", "SQL:dbo.proc_ValidateToken",
           "SQL:dbo.proc_ComputeFraudRisk"},
          {(PAY, "WritesTo", "SQL:dbo.table_Payments"),
           (PAY, "Executes", "SQL:dbo.proc_ValidateToken"),
           (PAY, "Executes", "SQL:dbo.proc_ComputeFraudRisk")}),
    "B": (("ReadsFrom", "WritesTo", "Calls"), {PAY, "SQL:dbo.table_Payments"},
          {(PAY, "WritesTo", "SQL:dbo.table_Payments")}),
    "C": (("WritesTo",), {PAY, "SQL:dbo.table_Payments"},
          {(PAY, "WritesTo", "SQL:dbo.table_Payments")}),
}


@pytest.mark.parametrize("seed_only", [False, True], ids=["bfs", "seed-only"])
@pytest.mark.parametrize("case", sorted(ABC))
def test_allowlist_sensitivity(fake_enterprise: FakeEnterprise, case: str,
                               seed_only: bool) -> None:
    allow, nodes, edges = ABC[case]
    result = expand(fake_enterprise, [PAY], GraphLimits(1, 120, allow, seed_only))
    assert {n for n, _ in result.nodes} == nodes
    assert triples(result) == edges
    assert by_depth(result, 0) == {PAY}
    if seed_only:
        assert {e.from_id for e in result.edges} == {PAY}


def test_seed_only_has_no_secondary_fan_out(fake_enterprise: FakeEnterprise) -> None:
    deep = expand(fake_enterprise, [PAY], GraphLimits(3, 120))
    only = expand(fake_enterprise, [PAY], GraphLimits(3, 120, seed_only=True))
    assert {e.from_id for e in deep.edges} > {PAY}, "the deep tree does fan out"
    assert {e.from_id for e in only.edges} == {PAY}


def test_d1_full_csharp_tree_from_search_facade(fake_enterprise: FakeEnterprise) -> None:
    result = expand(fake_enterprise, ["C0005"], GraphLimits(2, 120))
    assert by_depth(result, 1) == {"C0006", "C0011", "C0016", "C0019"}
    assert by_depth(result, 2) == {"C0007", "C0008", "C0009", "C0010", "C0012", "C0013",
                                   "C0014", "C0015", "C0017", "C0018", "C0020"}
    assert {e.relation for e in result.edges} == {"Calls"}


def test_d2_sql_tree_from_hybrid_procedure(fake_enterprise: FakeEnterprise) -> None:
    seed = "SQL:dbo.proc_SearchShipments_Hybrid"
    result = expand(fake_enterprise, [seed], GraphLimits(2, 120))
    assert by_depth(result, 1) == {"SQL:dbo.proc_SearchShipments_BM25",
                                   "SQL:dbo.proc_SearchShipments_Semantic"}
    assert by_depth(result, 2) == {"SQL:dbo.view_Shipments"}
    assert (seed, "Executes", "SQL:dbo.proc_SearchShipments_BM25") in triples(result)
    assert ("SQL:dbo.proc_SearchShipments_BM25", "ReadsFrom",
            "SQL:dbo.view_Shipments") in triples(result)


def test_d3_pipeline_limited_tree(fake_enterprise: FakeEnterprise) -> None:
    result = expand(fake_enterprise, ["C0003"], GraphLimits(2, 120))
    assert by_depth(result, 1) == {"C0004", "C0005"}
    assert by_depth(result, 2) == {"C0006", "C0011", "C0016", "C0019"}
    assert max(d for _, d in result.nodes) == 2
    assert {e.relation for e in result.edges} <= set(DEFAULT_ALLOWLIST)


def test_d4_security_trimmed_tree(fake_enterprise: FakeEnterprise) -> None:
    who = Principal(frozenset({"finance", "security"}), frozenset({"restricted"}))
    engine = fake_enterprise.engine()
    full = expand(fake_enterprise, ["C0005"], GraphLimits(2, 120))
    trimmed = expand(fake_enterprise, ["C0005"], GraphLimits(2, 120), who)
    segment = engine.store.segment(fake_enterprise.snapshot_a)
    mask = segment.visible(who)
    kept = {n for n, _ in trimmed.nodes}
    for node_id in kept:  # every returned node passes (ACL OR) AND (classification AND)
        assert mask[segment.ordinal_of[node_id]]
    hidden = {n for n, _ in full.nodes} - kept
    assert hidden and trimmed.removed_nodes >= 1 and trimmed.removed_edges >= 1
    assert not any(e.from_id in hidden or e.to_id in hidden for e in trimmed.edges)
    assert all(e.from_id in kept and e.to_id in kept for e in trimmed.edges)
    for excluded in ("C0027", "C0003"):  # the seed's examples of ACL exclusions
        assert not mask[segment.ordinal_of[excluded]]
    assert expand(fake_enterprise, ["C0003"], GraphLimits(2, 120), who).nodes == []


def test_limits_depth_nodes_and_allowlist(fake_enterprise: FakeEnterprise) -> None:
    wide = expand(fake_enterprise, ["C0001", PAY], GraphLimits(6, 12))
    assert len(wide.nodes) == 12
    assert {e.from_id for e in wide.edges} | {e.to_id for e in wide.edges} <= {
        n for n, _ in wide.nodes}
    shallow = expand(fake_enterprise, ["C0001"], GraphLimits(0, 120))
    assert shallow.nodes == [("C0001", 0)] and shallow.edges == []
    sql_only = expand(fake_enterprise, [PAY], GraphLimits(2, 120, ("Executes",)))
    assert {e.relation for e in sql_only.edges} == {"Executes"}


def test_unknown_seed_is_reported_not_fatal(fake_enterprise: FakeEnterprise) -> None:
    result = expand(fake_enterprise, ["NOPE", "C0005"], GraphLimits(1, 120))
    assert result.unknown_seeds == ["NOPE"]
    assert by_depth(result, 0) == {"C0005"}


def test_cli_graph_contract(fake_enterprise: FakeEnterprise) -> None:
    args = ["--home", str(fake_enterprise.home), "graph", PAY, "--collection", "code",
            "--snapshot", fake_enterprise.snapshot_a, "--max-depth", "1", "--allow", "WritesTo",
            "--seed-only", "--all-access", "--json"]
    out = CliRunner().invoke(cli, args, obj={"json": False})
    assert out.exit_code == 0, out.output
    payload = json.loads(out.stdout)
    assert set(payload) >= {"seeds", "nodes", "edges", "removed_by_security", "settings"}
    assert payload["edges"] == [{"from_id": PAY, "relation": "WritesTo",
                                 "to_id": "SQL:dbo.table_Payments"}]
    assert payload["nodes"] == [{"id": PAY, "depth": 0},
                                {"id": "SQL:dbo.table_Payments", "depth": 1}]
    assert payload["settings"]["graph_edge_allowlist"] == ["WritesTo"]
